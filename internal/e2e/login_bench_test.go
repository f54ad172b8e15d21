package e2e_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// BenchmarkLoginConcurrentOneUser measures 50 concurrent correct logins of
// one user (bcrypt at its default cost), as one operation: the time until
// the last of them is answered. The login throttle must not serialise
// their password checks (docs/api.md#limits-rate-limits-and-quotas limits
// failures only).
func BenchmarkLoginConcurrentOneUser(b *testing.B) {
	const logins = 50
	m := memory.New()
	hash, err := bcrypt.GenerateFromPassword([]byte("alice-pw"), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.CreateUser(context.Background(), &store.User{Username: "alice", PasswordHash: hash, Active: true}); err != nil {
		b.Fatal(err)
	}
	h := hds.New(hds.WithStore(m), hds.WithUsers(m), hds.WithLogger(slog.New(slog.DiscardHandler)),
		hds.WithRateLimit(0, 0)) // the login throttle only, no request budget
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range logins {
			wg.Go(func() {
				r := httptest.NewRequest(http.MethodPost, "/api/v1/auth/login",
					strings.NewReader(`{"username":"alice","password":"alice-pw"}`))
				r.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				if rec.Code != http.StatusOK {
					b.Errorf("login: %d %s", rec.Code, rec.Body)
				}
			})
		}
		wg.Wait()
	}
}
