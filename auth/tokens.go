package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
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
// unchanged through refreshes; sid, the random id of that session, also
// unchanged; and gen, the user's session generation when the session
// began (store.User.SessionGeneration), left out while it is 0. Tokens
// issued before sessions could end have neither sid nor gen.
type Claims struct {
	jwt.RegisteredClaims
	OrigIat    int64  `json:"orig_iat,omitempty"`
	SessionID  string `json:"sid,omitempty"`
	Generation int64  `json:"gen,omitempty"`
}

// Session is what a token says of its session.
type Session struct {
	// ID names the session: the sid claim, or the jti of a token without
	// one, which is a session of its own.
	ID string
	// Start is the time of the login that began it (orig_iat).
	Start time.Time
	// Generation is the user's session generation it began in.
	Generation int64
}

// Session returns the session c belongs to.
func (c *Claims) Session() Session {
	id := c.SessionID
	if id == "" {
		id = c.ID
	}
	return Session{ID: id, Start: time.Unix(c.OrigIat, 0), Generation: c.Generation}
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

// DeriveKey returns a 32-byte key for another purpose than signing tokens,
// named by label, derived from the secret (HMAC-SHA256 of the label): the
// same on every instance that shares the secret, and telling nothing of
// it.
func (t *Tokens) DeriveKey(label string) []byte {
	m := hmac.New(sha256.New, t.cfg.Secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// ExpiresIn is the token lifetime in whole seconds.
func (t *Tokens) ExpiresIn() int { return int(t.cfg.Expiration / time.Second) }

// Issue signs a token for userID. origIat is the start of the session:
// the zero time starts a new one (a login) in session generation 0; any
// other time starts a new session begun then. IssueFor continues a
// session.
func (t *Tokens) Issue(userID string, origIat time.Time) (string, error) {
	return t.IssueFor(userID, Session{Start: origIat})
}

// NewSession returns a new session begun now in the user's session
// generation gen, with a random id from crypto/rand.
func (t *Tokens) NewSession(gen int64) (Session, error) {
	id, err := randomID()
	if err != nil {
		return Session{}, fmt.Errorf("session id: %w", err)
	}
	return Session{ID: id, Start: t.cfg.Now(), Generation: gen}, nil
}

// IssueFor signs a new token of session s for userID, with a new random
// jti. An s without an ID (or Start) gets a new one (now).
func (t *Tokens) IssueFor(userID string, s Session) (string, error) {
	now := t.cfg.Now()
	if s.Start.IsZero() {
		s.Start = now
	}
	if s.ID == "" {
		id, err := randomID()
		if err != nil {
			return "", fmt.Errorf("session id: %w", err)
		}
		s.ID = id
	}
	jti, err := randomID()
	if err != nil {
		return "", fmt.Errorf("token id: %w", err)
	}
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID,
			Issuer:    t.cfg.Issuer,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(t.cfg.Expiration)),
			ID:        jti,
		},
		OrigIat:    s.Start.Unix(),
		SessionID:  s.ID,
		Generation: s.Generation,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.cfg.Secret)
}

// randomID returns 128 random bits from crypto/rand, base64url-encoded.
func randomID() (string, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(id[:]), nil
}

// margin is added to the times after which an ended session or a used
// token may be forgotten, for clocks of instances that differ a little.
const margin = time.Minute

// SessionUntil is the time after which no token of session s is accepted
// any more, even refreshed (the maximum session age, plus the lifetime of
// a token issued at its end), and its end may be forgotten. exp is the
// expiry of the token at hand, which it never precedes.
func (t *Tokens) SessionUntil(s Session, exp time.Time) time.Time {
	return later(s.Start.Add(t.cfg.MaxSessionAge+t.cfg.Expiration), exp).Add(margin)
}

// RefreshUntil is the time after which a token expiring at exp can no
// longer be refreshed, and its use may be forgotten.
func (t *Tokens) RefreshUntil(exp time.Time) time.Time {
	return exp.Add(t.cfg.RefreshWindow + margin)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
