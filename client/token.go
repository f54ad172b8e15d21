package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// A user token (a JWT from a login) is refreshed before it expires
// (docs/api.md#authentication): POST /api/v1/auth/refresh answers a new
// one. An API token (hds_...) never expires that way and is sent as it is.

// tokenTimes returns when a user token was issued and when it expires,
// read from its claims (iat, exp) without checking its signature (the
// server does), or false for anything else, an API token included.
func tokenTimes(token string) (iat, exp time.Time, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	var claims struct {
		IssuedAt  *float64 `json:"iat"`
		ExpiresAt *float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.IssuedAt == nil || claims.ExpiresAt == nil {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(int64(*claims.IssuedAt), 0), time.Unix(int64(*claims.ExpiresAt), 0), true
}

// refreshAt returns when token should be refreshed: refreshBefore before
// it expires, at most half its lifetime before; false for a token that is
// never refreshed.
func (c *Client) refreshAt(token string) (time.Time, bool) {
	iat, exp, ok := tokenTimes(token)
	if !ok {
		return time.Time{}, false
	}
	early := min(c.timing.refreshBefore, exp.Sub(iat)/2)
	return exp.Add(-early), true
}

// nextRefresh returns when the client's token should be refreshed, or
// false when it is never refreshed (an API token, or one whose refresh
// the server refused).
func (c *Client) nextRefresh() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == c.refused {
		return time.Time{}, false
	}
	return c.refreshAt(c.token)
}

// currentToken returns the token to send, refreshing a user token first
// when it is due. One refresh at a time: a refresh is single-use on the
// server, so concurrent requests wait for the one in flight. A refresh
// that fails leaves the token as it was (it may still be valid; if not,
// the request gets the server's 401); one the server refused is not
// tried again for that token.
func (c *Client) currentToken(ctx context.Context) (string, error) {
	for {
		c.mu.Lock()
		token := c.token
		at, ok := c.refreshAt(token)
		if !ok || token == c.refused || time.Now().Before(at) {
			c.mu.Unlock()
			return token, nil
		}
		if wait := c.refreshing; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		done := make(chan struct{})
		c.refreshing = done
		c.mu.Unlock()

		fresh, err := c.refresh(ctx, token)
		c.mu.Lock()
		switch {
		case err == nil:
			c.token = fresh
		case ctx.Err() == nil:
			if _, answered := err.(*Error); answered {
				c.refused = token
			}
		}
		c.refreshing = nil
		close(done)
		c.mu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return token, nil
		}
	}
}

// refresh exchanges token for a new one.
func (c *Client) refresh(ctx context.Context, token string) (string, error) {
	const path = "/api/v1/auth/refresh"
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+path, nil)
	if err != nil {
		return "", &RequestError{Method: "POST", Path: path, Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.http.Do(req)
	if err != nil {
		return "", &RequestError{Method: "POST", Path: path, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", errorOf(resp, "POST", path)
	}
	var env struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Data.Token == "" {
		return "", &RequestError{Method: "POST", Path: path, Err: errMalformed, Answered: true}
	}
	return env.Data.Token, nil
}
