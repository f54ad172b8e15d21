package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds/store"
)

// BenchmarkAccess measures a single-record GET by the project's owner, by
// a member (reader) and by an API token (viewer), on each store kind,
// serially and with 32 parallel clients: what the role check (a member)
// and an API token (a lookup by hash instead of the user's) cost.
//
//	go test -run '^$' -bench BenchmarkAccess -benchtime 2s .
func BenchmarkAccess(b *testing.B) {
	const path = "/api/v1/projects/p/collections/c/clusters/k/records/rec-042"
	for _, kind := range storeKinds {
		b.Run(kind.name, func(b *testing.B) {
			f := newBenchFixture(b, kind, 0)
			hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
			users := f.st.(store.UserDirectory)
			if _, err := users.CreateUser(context.Background(), &store.User{Username: "member", PasswordHash: hash, Active: true}); err != nil {
				b.Fatal(err)
			}
			f.mustDo(b, http.MethodPut, "/api/v1/projects/p/members/member", `{"role":"reader"}`, http.StatusOK)
			w := f.do(http.MethodPost, "/api/v1/projects/p/tokens", `{"name":"bench","role":"viewer"}`)
			var tok struct {
				Data struct{ Token string } `json:"data"`
			}
			if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &tok) != nil {
				b.Fatalf("create a token: %d %s", w.Code, w.Body)
			}
			owner := f.token
			w = f.do(http.MethodPost, "/api/v1/auth/login", `{"username":"member","password":"pw"}`)
			var member struct {
				Data struct{ Token string } `json:"data"`
			}
			if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &member) != nil {
				b.Fatalf("login: %d %s", w.Code, w.Body)
			}
			for _, c := range []struct{ name, token string }{
				{"Owner", owner}, {"Member", member.Data.Token}, {"APIToken", tok.Data.Token},
			} {
				get := func(b *testing.B) {
					r := httptest.NewRequest(http.MethodGet, path, nil)
					r.Header.Set("Authorization", "Bearer "+c.token)
					w := httptest.NewRecorder()
					f.h.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("%s: %d %s", c.name, w.Code, w.Body)
					}
				}
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						get(b)
					}
				})
				b.Run(c.name+"/parallel32", func(b *testing.B) {
					b.ReportAllocs()
					b.SetParallelism(32)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							get(b)
						}
					})
				})
			}
		})
	}
}
