package e2e_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// BenchmarkUpdateHistory measures PUT R through the full handler with the
// default history (10 versions kept, each update writes a version and
// prunes) and without any (max_versions 0), on each store kind, and a
// conditional update (If-Match with the current tag).
//
//	go test -run '^$' -bench BenchmarkUpdateHistory -benchtime 2000x .
func BenchmarkUpdateHistory(b *testing.B) {
	for _, kind := range storeKinds {
		for _, keep := range []int{store.DefaultMaxVersions, 0} {
			b.Run(fmt.Sprintf("%s/max_versions=%d", kind.name, keep), func(b *testing.B) {
				f := newHistoryBench(b, kind, keep)
				b.Run("Update", func(b *testing.B) {
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						i++
						f.mustDo(b, http.MethodPut, "/api/v1/projects/p/collections/c/clusters/k/records/n", `{"value":`+strconv.Itoa(i)+`}`, 200)
					}
				})
				b.Run("UpdateIfMatch", func(b *testing.B) {
					b.ReportAllocs()
					tag := f.do(http.MethodGet, "/api/v1/projects/p/collections/c/clusters/k/records/n", "").Header().Get("ETag")
					i := 0
					for b.Loop() {
						i++
						r := f.request(http.MethodPut, "/api/v1/projects/p/collections/c/clusters/k/records/n", `{"value":`+strconv.Itoa(i)+`}`)
						r.Header.Set("If-Match", tag)
						w := httptest.NewRecorder()
						f.h.ServeHTTP(w, r)
						if w.Code != 200 {
							b.Fatalf("PUT with If-Match: %d %s", w.Code, w.Body)
						}
						tag = w.Header().Get("ETag")
					}
				})
			})
		}
	}
}

// newHistoryBench is a handler as a user runs it with one INTEGER record
// p/c/k/n.
func newHistoryBench(b *testing.B, kind storeKind, keep int) *benchFixture {
	b.Helper()
	st, users := kind.new(b)
	f := &benchFixture{st: st, h: hds.New(hds.WithStore(st), hds.WithUsers(users),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret}),
		hds.WithRateLimit(1<<40, 1<<40),
		hds.WithMaxVersions(keep),
		hds.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))}
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if _, err := users.CreateUser(b.Context(), &store.User{Username: "bench", PasswordHash: hash, Active: true}); err != nil {
		b.Fatal(err)
	}
	f.token = f.login(b)
	for _, path := range []string{"/api/v1/projects/p", "/api/v1/projects/p/collections/c", "/api/v1/projects/p/collections/c/clusters/k"} {
		f.mustDo(b, http.MethodPost, path, "", http.StatusCreated)
	}
	f.mustDo(b, http.MethodPost, "/api/v1/projects/p/collections/c/clusters/k/records/n?type=INTEGER&value=0", "", http.StatusCreated)
	return f
}
