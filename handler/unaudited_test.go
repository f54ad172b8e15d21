package handler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/handler"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// unauditedStore is a host's store that keeps no audit log: the memory
// store's Store and Access, without its optional capabilities
// (store.AuditLog among them).
type unauditedStore struct {
	store.Store
	store.Access
}

// TestRevealWithoutAuditLog checks that a store without an audit log
// serves no reveal (docs/api.md#18-audit-log-and-change-feed: every allowed reveal is
// audited, and nothing could record it): every route that takes
// reveal=true answers 403 AUTHORIZATION_FAILED "Insufficient permissions"
// even to the owner, after a missing project's 404, and a write asked
// with reveal=true changes nothing. Without reveal the routes serve as
// usual, credentials masked.
func TestRevealWithoutAuditLog(t *testing.T) {
	m := memory.New()
	_, isAuditLog := any(unauditedStore{m, m}).(store.AuditLog)
	require.False(t, isAuditLog, "the wrapped store hides the memory store's audit log")
	hash, err := auth.HashPassword("alice-pw")
	require.NoError(t, err)
	_, err = m.CreateUser(context.Background(), &store.User{Username: "alice", PasswordHash: hash, Active: true})
	require.NoError(t, err)
	tokens, err := auth.NewTokens(auth.TokenConfig{Secret: []byte(strings.Repeat("s", auth.MinSecretBytes)), Issuer: "host", Expiration: time.Hour})
	require.NoError(t, err)
	limits := limitmemory.NewStore()
	h, err := handler.New(handler.Config{Store: unauditedStore{m, m}, Users: m, Tokens: tokens, Sealer: &reverseSealer{},
		RateLimiter: middleware.NewRateLimiter(limits), LoginThrottle: middleware.NewLoginThrottle(limits, 10, 100, time.Minute),
		MaxBodyBytes: 1 << 20, MaxImportBytes: 1 << 20})
	require.NoError(t, err)
	rec := publicDo(h, "POST", "/api/v1/auth/login", "", `{"username":"alice","password":"alice-pw"}`)
	require.Equal(t, http.StatusOK, rec.Code, "login: %s", rec.Body)
	var login struct {
		Data struct{ Token string } `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &login))
	token := login.Data.Token

	const (
		p = "/api/v1/projects/p"
		k = p + "/collections/c/clusters/k"
		r = k + "/records/db"
	)
	for _, target := range []string{p, p + "/collections/c", k, p + "/collections/c2"} {
		require.Equal(t, http.StatusCreated, publicDo(h, "POST", target, token, "").Code, "POST %s", target)
	}
	rec = publicDo(h, "POST", r, token, `{"type":"CREDENTIAL","value":"hunter2"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "create a credential: %s", rec.Body)
	require.NotContains(t, rec.Body.String(), "hunter2")

	refused := func(method, target, body string) {
		t.Helper()
		rec := publicDo(h, method, target, token, body)
		assert.Equal(t, http.StatusForbidden, rec.Code, "%s %s: %s", method, target, rec.Body)
		assert.JSONEq(t, `{"success":false,"error":{"code":"AUTHORIZATION_FAILED","message":"Insufficient permissions","details":""}}`,
			rec.Body.String(), "%s %s", method, target)
		assert.NotContains(t, rec.Body.String(), "hunter2", "%s %s", method, target)
	}
	for _, target := range []string{
		r + "?reveal=true",
		r + "?reveal=true&resolve=true",
		r + "/versions?reveal=true",
		k + "?reveal=true",
		k + "?reveal=true&format=env",
		k + "/records?reveal=true",
		p + "/export?reveal=true",
		p + "/diff?from=c&to=c2&reveal=true",
	} {
		refused("GET", target, "")
	}
	refused("PUT", r+"?reveal=true", `{"value":"changed"}`)
	refused("POST", k+"/records?reveal=true", `{"name":"db2","type":"CREDENTIAL","value":"other"}`)
	refused("POST", r+"/restore?reveal=true", `{"version":1}`)

	// Nothing was written by the refused writes.
	rec = publicDo(h, "GET", r, token, "")
	require.Equal(t, http.StatusOK, rec.Code, "GET without reveal: %s", rec.Body)
	assert.Contains(t, rec.Body.String(), `"version":1`, "the record was not updated")
	assert.NotContains(t, rec.Body.String(), "hunter2", "masked")
	assert.Equal(t, http.StatusNotFound, publicDo(h, "GET", k+"/records/db2", token, "").Code, "db2 was not created")

	// A missing project is still 404 first; reveal=false is served.
	rec = publicDo(h, "GET", "/api/v1/projects/nope/export?reveal=true", token, "")
	assert.Equal(t, http.StatusNotFound, rec.Code, "missing project: %s", rec.Body)
	assert.Equal(t, http.StatusOK, publicDo(h, "GET", r+"?reveal=false", token, "").Code, "reveal=false")
	assert.Equal(t, http.StatusOK, publicDo(h, "GET", p+"/export", token, "").Code, "export, masked")
}
