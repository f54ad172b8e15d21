package auth_test

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hds-go/hds/auth"
)

var secret = []byte("auth-test-secret-0123456789abcdef!!")

func newTokens(t testing.TB, now func() time.Time) *auth.Tokens {
	t.Helper()
	tk, err := auth.NewTokens(auth.TokenConfig{Secret: secret, Issuer: "hds", Expiration: time.Hour,
		RefreshWindow: 24 * time.Hour, MaxSessionAge: 48 * time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestNewTokensRefusesShortSecret(t *testing.T) {
	_, err := auth.NewTokens(auth.TokenConfig{Secret: secret[:31], Issuer: "hds", Expiration: time.Hour})
	if err == nil {
		t.Fatal("a 31-byte secret was accepted")
	}
}

func TestVerifyAndRefresh(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	tk := newTokens(t, clock)
	raw, err := tk.Issue("user-1", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tk.Verify(raw)
	if err != nil || c.Subject != "user-1" || c.OrigIat != now.Unix() || c.ID == "" {
		t.Fatalf("Verify = %+v, %v", c, err)
	}

	now = now.Add(2 * time.Hour) // expired, inside the refresh window
	if _, err := tk.Verify(raw); !errors.Is(err, auth.ErrTokenExpired) {
		t.Errorf("Verify of an expired token: %v, want ErrTokenExpired", err)
	}
	if c, err := tk.VerifyForRefresh(raw); err != nil || c.OrigIat != now.Add(-2*time.Hour).Unix() {
		t.Errorf("VerifyForRefresh inside the window: %+v, %v", c, err)
	}
	now = now.Add(24 * time.Hour) // past the refresh window
	if _, err := tk.VerifyForRefresh(raw); !errors.Is(err, auth.ErrTokenExpired) {
		t.Errorf("VerifyForRefresh past the window: %v, want ErrTokenExpired", err)
	}

	other, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"sub": "user-1"}).SignedString(secret)
	for name, tok := range map[string]string{"HS512": other, "garbage": "a.b.c", "empty": ""} {
		if _, err := tk.Verify(tok); err == nil {
			t.Errorf("Verify(%s) succeeded", name)
		}
	}
}

// BenchmarkVerify compares the full check (HS256 only, issuer, expiry,
// iat, all six claims) with a bare golang-jwt parse of the same token into
// RegisteredClaims: the budget is 1.5x.
func BenchmarkVerify(b *testing.B) {
	tk := newTokens(b, time.Now)
	raw, err := tk.Issue("01a204e7-7edc-758d-a1d9-e9941fbe811d", time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hds", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tk.Verify(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		p := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}))
		key := func(*jwt.Token) (any, error) { return secret, nil }
		b.ReportAllocs()
		for b.Loop() {
			var c jwt.RegisteredClaims
			if _, err := p.ParseWithClaims(raw, &c, key); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestVerifyCacheHonoursExpiry checks that a token verified once (and so
// cached) is refused once it expires, and that its claims are the
// caller's own.
func TestVerifyCacheHonoursExpiry(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tokens, err := auth.NewTokens(auth.TokenConfig{Secret: secret, Issuer: "hds", Expiration: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tokens.Issue("u1", now)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := tokens.Verify(raw)
		if err != nil || c.Subject != "u1" {
			t.Fatalf("Verify: %v %v", c, err)
		}
		c.Subject = "changed"
	}
	if _, err := tokens.Verify(raw + "x"); err == nil {
		t.Fatal("a token with a changed signature verified")
	}
	now = now.Add(time.Minute)
	if _, err := tokens.Verify(raw); !errors.Is(err, auth.ErrTokenExpired) {
		t.Fatalf("an expired cached token: %v, want ErrTokenExpired", err)
	}
}
