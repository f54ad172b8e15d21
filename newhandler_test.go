package hds_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// TestNewHandler: NewHandler returns, as an error starting "hds: ", what
// New panics with, names every invalid option at once, and with valid
// options returns the same API as New.
func TestNewHandler(t *testing.T) {
	secure := func(secret string) hds.Option {
		return hds.WithSecurity(hds.Security{JWTSecret: secret})
	}
	tests := []struct {
		name string
		opts []hds.Option
		want []string // parts of the error; none when the options are valid
	}{
		{"no options", nil, nil},
		{"jwt secret of 31 bytes", []hds.Option{secure(strings.Repeat("s", 31))}, []string{"JWT secret must be at least 32 bytes, got 31"}},
		{"jwt secret of 32 bytes", []hds.Option{secure(strings.Repeat("s", 32))}, nil},
		{"credential key of 16 bytes", []hds.Option{hds.WithCredentialKey(make([]byte, 16))}, []string{"WithCredentialKey: key 0 must be 32 bytes, got 16"}},
		{"bad duration", []hds.Option{hds.WithSecurity(hds.Security{JWTExpiration: "soon"})},
			[]string{`Security.JWTExpiration: invalid duration "soon"`}},
		{"bad trusted proxy", []hds.Option{hds.WithTrustedProxies("not-an-ip")}, []string{`WithTrustedProxies: trusted proxy "not-an-ip"`}},
		//lint:ignore SA1012 a nil context is what this row checks
		{"nil shutdown context", []hds.Option{hds.WithShutdown(nil)}, []string{"WithShutdown: the context is nil"}},
		{"negative KeepDeliveries", []hds.Option{hds.WithWebhooks(hds.Webhooks{KeepDeliveries: -time.Second})},
			[]string{"WithWebhooks: durations must not be negative"}},
		{"MaxPending -2", []hds.Option{hds.WithWebhooks(hds.Webhooks{MaxPending: -2})},
			[]string{"WithWebhooks: MaxPending must be more than 0, 0 (its default) or store.Unlimited, got -2"}},
		{"MaxPending Unlimited", []hds.Option{hds.WithWebhooks(hds.Webhooks{MaxPending: store.Unlimited})}, nil},
		{"no webhook allowed", []hds.Option{hds.WithQuotas(store.Quotas{MaxWebhooksPerProject: store.NoneAllowed})}, nil},
		{"webhook quota -3", []hds.Option{hds.WithQuotas(store.Quotas{MaxWebhooksPerProject: -3})},
			[]string{"WithQuotas: a quota must be more than 0"}},
		{"two bad options", []hds.Option{hds.WithStore(nil), hds.WithLoginThrottle(0, 1, 1)},
			[]string{"WithStore: the store is nil", "WithLoginThrottle: limits and window must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := append(tt.opts, hds.WithLogger(quietLogger))
			h, err := hds.NewHandler(opts...)
			msg, panicked := panicMessage(func() { hds.New(opts...) })
			if tt.want == nil {
				require.NoError(t, err, "NewHandler")
				require.NotNil(t, h, "NewHandler's handler")
				assert.False(t, panicked, "New panicked: %s", msg)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
				assert.Equal(t, http.StatusOK, rec.Code, "GET /health: %s", rec.Body)
				return
			}
			require.Error(t, err, "NewHandler")
			assert.Nil(t, h, "NewHandler's handler on error")
			assert.True(t, strings.HasPrefix(err.Error(), "hds: "), "error %q starts with \"hds: \"", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w, "NewHandler's error")
			}
			assert.True(t, panicked, "New did not panic")
			assert.Equal(t, err.Error(), msg, "New's panic message is NewHandler's error")
		})
	}
}
