package handler_test

// The handler package is public: a host can wire it without hds.New and
// without any of hds's internal packages. These tests do exactly that.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/handler"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// reverseSealer is a host's own Sealer: it "seals" a credential string by
// reversing it and binding it to the record id.
type reverseSealer struct{ sealed, opened int }

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func (s *reverseSealer) SealValue(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, error) {
	s.sealed++
	var plain string
	if err := json.Unmarshal(value, &plain); err != nil {
		return nil, err
	}
	return json.Marshal(recordID + ":" + reverse(plain))
}

func (s *reverseSealer) OpenValue(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, error) {
	s.opened++
	var sealed string
	if err := json.Unmarshal(value, &sealed); err != nil {
		return nil, err
	}
	rest, ok := strings.CutPrefix(sealed, recordID+":")
	if !ok {
		return nil, errors.New("sealed for another record")
	}
	return json.Marshal(reverse(rest))
}

// publicServer wires handler.New by hand, as a host without hds.New would.
func publicServer(t *testing.T, sealer handler.Sealer) (http.Handler, string) {
	t.Helper()
	m := memory.New()
	hash, err := auth.HashPassword("alice-pw")
	require.NoError(t, err)
	_, err = m.CreateUser(context.Background(), &store.User{Username: "alice", PasswordHash: hash, Active: true})
	require.NoError(t, err)
	tokens, err := auth.NewTokens(auth.TokenConfig{Secret: []byte(strings.Repeat("s", auth.MinSecretBytes)),
		Issuer: "host", Expiration: time.Hour})
	require.NoError(t, err)
	clientIP, err := middleware.NewClientIP()
	require.NoError(t, err)
	limits := limitmemory.NewStore()
	h, err := handler.New(handler.Config{
		Store: m, Users: m, Tokens: tokens, Sealer: sealer, Version: "host-1",
		RateLimiter:   middleware.NewRateLimiter(limits, limiter.Rate{Period: time.Minute, Limit: 100}),
		LoginThrottle: middleware.NewLoginThrottle(limits, 10, 100, 15*time.Minute),
		ClientIP:      clientIP, MaxBodyBytes: 1 << 20,
	})
	require.NoError(t, err)
	rec := publicDo(h, "POST", "/api/v1/auth/login", "", `{"username":"alice","password":"alice-pw"}`)
	require.Equal(t, http.StatusOK, rec.Code, "login: %s", rec.Body)
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return h, out.Data.Token
}

func publicDo(h http.Handler, method, target, token, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func TestPublicHandlerWithHostSealer(t *testing.T) {
	sealer := &reverseSealer{}
	h, token := publicServer(t, sealer)
	for _, target := range []string{"/api/v1/projects/p", "/api/v1/projects/p/collections/c", "/api/v1/projects/p/collections/c/clusters/k"} {
		rec := publicDo(h, "POST", target, token, "")
		require.Equal(t, http.StatusCreated, rec.Code, "POST %s: %s", target, rec.Body)
	}
	const k = "/api/v1/projects/p/collections/c/clusters/k"
	rec := publicDo(h, "POST", k+"/records/db", token, `{"type":"CREDENTIAL","value":"hunter2"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "create a credential: %s", rec.Body)
	assert.Equal(t, 1, sealer.sealed, "the host's sealer sealed the value")
	assert.NotContains(t, rec.Body.String(), "hunter2", "the value is masked")

	rec = publicDo(h, "GET", k+"/records/db?reveal=true", token, "")
	require.Equal(t, http.StatusOK, rec.Code, "reveal: %s", rec.Body)
	assert.Contains(t, rec.Body.String(), `"value":"hunter2"`, "the host's sealer opened the value")
	assert.Equal(t, 1, sealer.opened)
}

func TestPublicHandlerWithoutSealer(t *testing.T) {
	h, token := publicServer(t, nil)
	for _, target := range []string{"/api/v1/projects/p", "/api/v1/projects/p/collections/c", "/api/v1/projects/p/collections/c/clusters/k"} {
		require.Equal(t, http.StatusCreated, publicDo(h, "POST", target, token, "").Code, "POST %s", target)
	}
	rec := publicDo(h, "POST", "/api/v1/projects/p/collections/c/clusters/k/records/db", token, `{"type":"CREDENTIAL","value":"hunter2"}`)
	assert.Equal(t, http.StatusBadRequest, rec.Code, "no sealer: credential records are refused: %s", rec.Body)
	assert.Contains(t, rec.Body.String(), `"code":"VALIDATION_ERROR"`)
	assert.Contains(t, rec.Body.String(), "no credential key is configured")
}

// TestPublicHandlerRequiresAuth checks that a Config that leaves
// AllowAnonymous out requires a token (docs/api.md#the-go-library, v1.2:
// a field left out is the safe choice), and that AllowAnonymous lets a
// request without one through.
func TestPublicHandlerRequiresAuth(t *testing.T) {
	for _, allow := range []bool{false, true} {
		m := memory.New()
		tokens, err := auth.NewTokens(auth.TokenConfig{Secret: []byte(strings.Repeat("s", auth.MinSecretBytes)),
			Issuer: "host", Expiration: time.Hour})
		require.NoError(t, err)
		limits := limitmemory.NewStore()
		h, err := handler.New(handler.Config{Store: m, Users: m, Tokens: tokens, Version: "host-1", MaxBodyBytes: 1 << 20,
			AllowAnonymous: allow, RateLimiter: middleware.NewRateLimiter(limits),
			LoginThrottle: middleware.NewLoginThrottle(limits, 10, 100, 15*time.Minute)})
		require.NoError(t, err)
		rec := publicDo(h, "GET", "/api/v1/projects", "", "")
		if !allow {
			assert.Equal(t, http.StatusUnauthorized, rec.Code, "no token, AllowAnonymous left out: %s", rec.Body)
			assert.Contains(t, rec.Body.String(), `"code":"AUTHENTICATION_FAILED"`)
			assert.Contains(t, rec.Body.String(), `"message":"No authorization token provided"`)
		} else {
			assert.Equal(t, http.StatusOK, rec.Code, "no token, AllowAnonymous: %s", rec.Body)
		}
	}
}
