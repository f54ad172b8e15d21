// Package baseline is the yardstick of hds's performance work: a bare
// net/http handler that only verifies an HS256 JWT and writes a JSON
// envelope of a fixed payload, held in typed structs, as a hand-written
// service would. The benchmarks and example/loadtest measure hds against
// it in the same run.
package baseline

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// Record, Page and Cluster are the payload shapes, typed.
type (
	Record struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Type      string          `json:"type"`
		Value     json.RawMessage `json:"value"`
		Version   int64           `json:"version"`
		CreatedAt string          `json:"created_at"`
		UpdatedAt string          `json:"updated_at"`
	}
	Page struct {
		Items  []Record `json:"items"`
		Total  int      `json:"total"`
		Limit  int      `json:"limit"`
		Offset int      `json:"offset"`
	}
	Cluster struct {
		ID          string                     `json:"id"`
		Name        string                     `json:"name"`
		Project     string                     `json:"project"`
		Collection  string                     `json:"collection"`
		CreatedAt   string                     `json:"created_at"`
		UpdatedAt   string                     `json:"updated_at"`
		RecordCount int                        `json:"record_count"`
		Data        map[string]json.RawMessage `json:"data"`
	}
)

// Typed decodes an hds payload into the struct of its shape: a *Page
// (it has "items"), a *Cluster (it has "data") or a *Record.
func Typed(data json.RawMessage) (any, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, err
	}
	var v any
	switch {
	case probe["items"] != nil:
		v = &Page{}
	case probe["data"] != nil:
		v = &Cluster{}
	default:
		v = &Record{}
	}
	return v, json.Unmarshal(data, v)
}

type envelope struct {
	Success bool   `json:"success"`
	Data    any    `json:"data"`
	Message string `json:"message"`
}

// Handler verifies the bearer token with secret (HS256, exp required)
// and writes payload in the success envelope.
func Handler(secret []byte, payload any) http.Handler {
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired())
	key := func(*jwt.Token) (any, error) { return secret, nil }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c jwt.RegisteredClaims
		raw := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, err := parser.ParseWithClaims(raw, &c, key); err != nil {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(envelope{Success: true, Data: payload, Message: "OK"})
	})
}
