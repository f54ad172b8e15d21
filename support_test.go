package hds_test

// The few helpers of the root tests (New, NewHandler and their options,
// the package example): one request helper and a forged token. The
// black-box HTTP suite and its toolkit live in the test module
// internal/e2e, so that a host importing hds does not pay for their
// dependencies.

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testKey is a 32-byte credential key.
var testKey = bytes.Repeat([]byte{0x4b}, 32)

// quietLogger drops the per-request log lines.
var quietLogger = slog.New(slog.DiscardHandler)

// client sends requests to one handler through httptest.
type client struct {
	t testing.TB
	h http.Handler
}

// envelope is the error part of the response envelope
// (docs/api.md#errors).
type envelope struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// do serves one request (a non-empty body is sent as application/json)
// and returns the status, headers and decoded envelope.
func (c *client) do(method, target, body, token string) (int, http.Header, envelope) {
	c.t.Helper()
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, target, nil)
	} else {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	res := rec.Result()
	raw, _ := io.ReadAll(res.Body)
	var env envelope
	_ = json.Unmarshal(raw, &env)
	return res.StatusCode, res.Header, env
}

// wantError checks a response's status, error.code and, when wantMessage
// is not empty, error.message.
func wantError(t testing.TB, what string, status int, env envelope, wantStatus int, wantCode, wantMessage string) {
	t.Helper()
	var code, message string
	if env.Error != nil {
		code, message = env.Error.Code, env.Error.Message
	}
	assert.Equal(t, wantStatus, status, "%s: status (error %s %q)", what, code, message)
	assert.Equal(t, wantCode, code, "%s: error.code (message %q)", what, message)
	if wantMessage != "" {
		assert.Equal(t, wantMessage, message, "%s: error.message", what)
	}
}

// claims returns a complete, valid set of claims for user id sub.
func claims(sub string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"sub": sub, "iss": "hds", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"jti": "root-test", "orig_iat": now.Unix(),
	}
}

// hs256 signs m with a secret of the tests (not the one hds.New draws).
func hs256(t testing.TB, m jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, m).SignedString([]byte("hds-test-secret-0123456789abcdef!!"))
	require.NoError(t, err, "sign token")
	return tok
}
