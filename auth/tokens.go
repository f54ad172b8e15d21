package auth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MinSecretBytes is the shortest JWT secret accepted.
const MinSecretBytes = 32

// Claims are the claims of an hds token: sub, iat, exp, iss, jti, and
// orig_iat, the time of the login that started the session, carried
// unchanged through refreshes.
type Claims struct {
	jwt.RegisteredClaims
	OrigIat int64 `json:"orig_iat,omitempty"`
}

// TokenConfig configures Tokens.
type TokenConfig struct {
	Secret        []byte        // at least MinSecretBytes
	Issuer        string        // the iss claim
	Expiration    time.Duration // token lifetime
	RefreshWindow time.Duration // how long after exp a token may still be refreshed
	MaxSessionAge time.Duration // how long after orig_iat a session may be refreshed
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Tokens issues and verifies tokens. Its parsers are built once; it is
// safe for concurrent use.
type Tokens struct {
	cfg     TokenConfig
	parser  *jwt.Parser // full validation, for requests
	refresh *jwt.Parser // signature only, claims checked by hand
}

// NewTokens checks cfg and returns Tokens.
func NewTokens(cfg TokenConfig) (*Tokens, error) {
	switch {
	case len(cfg.Secret) < MinSecretBytes:
		return nil, fmt.Errorf("JWT secret must be at least %d bytes, got %d", MinSecretBytes, len(cfg.Secret))
	case cfg.Issuer == "":
		return nil, errors.New("JWT issuer must not be empty")
	case cfg.Expiration <= 0:
		return nil, errors.New("JWT expiration must be positive")
	case cfg.RefreshWindow < 0 || cfg.MaxSessionAge < 0:
		return nil, errors.New("refresh window and maximum session age must not be negative")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	hs256 := jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()})
	return &Tokens{
		cfg: cfg,
		parser: jwt.NewParser(hs256, jwt.WithIssuer(cfg.Issuer), jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(), jwt.WithTimeFunc(cfg.Now)),
		refresh: jwt.NewParser(hs256, jwt.WithoutClaimsValidation()),
	}, nil
}

// ExpiresIn is the token lifetime in whole seconds.
func (t *Tokens) ExpiresIn() int { return int(t.cfg.Expiration / time.Second) }

// Issue signs a new token for userID. origIat is the start of the session:
// the zero time starts a new one (a login).
func (t *Tokens) Issue(userID string, origIat time.Time) (string, error) {
	now := t.cfg.Now()
	if origIat.IsZero() {
		origIat = now
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("token id: %w", err)
	}
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID,
			Issuer:    t.cfg.Issuer,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(t.cfg.Expiration)),
			ID:        base64.RawURLEncoding.EncodeToString(id[:]),
		},
		OrigIat: origIat.Unix(),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.cfg.Secret)
}

func (t *Tokens) key(*jwt.Token) (any, error) { return t.cfg.Secret, nil }

// Verify checks a token for a request and returns its claims. Errors, in
// the contract's order: ErrBadSignature, ErrTokenExpired, ErrInvalidToken
// (malformed, wrong issuer, a claim missing).
func (t *Tokens) Verify(raw string) (*Claims, error) {
	var c Claims
	if _, err := t.parser.ParseWithClaims(raw, &c, t.key); err != nil {
		return nil, classify(err)
	}
	if !complete(&c) {
		return nil, ErrInvalidToken
	}
	return &c, nil
}

// VerifyForRefresh checks a token presented for refresh. It may have
// expired, but by no more than the refresh window, and its session must be
// younger than the maximum session age (else ErrTokenExpired). The
// signature and issuer are checked as in Verify.
func (t *Tokens) VerifyForRefresh(raw string) (*Claims, error) {
	var c Claims
	if _, err := t.refresh.ParseWithClaims(raw, &c, t.key); err != nil {
		return nil, classify(err)
	}
	// The claims are only trustworthy now that the signature verified.
	if c.Issuer != t.cfg.Issuer || !complete(&c) {
		return nil, ErrInvalidToken
	}
	now := t.cfg.Now()
	if c.IssuedAt.After(now) { // issued in the future: not a token of ours
		return nil, ErrInvalidToken
	}
	if now.Sub(c.ExpiresAt.Time) > t.cfg.RefreshWindow ||
		now.Sub(time.Unix(c.OrigIat, 0)) > t.cfg.MaxSessionAge {
		return nil, ErrTokenExpired
	}
	return &c, nil
}

// complete reports whether all six claims are present.
func complete(c *Claims) bool {
	return c.Subject != "" && c.Issuer != "" && c.ID != "" && c.IssuedAt != nil && c.ExpiresAt != nil && c.OrigIat != 0
}

// classify maps a golang-jwt error to this package's errors.
func classify(err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return ErrBadSignature
	case errors.Is(err, jwt.ErrTokenExpired):
		return ErrTokenExpired
	}
	return ErrInvalidToken
}
