package auth

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// MaxPasswordBytes is the longest password bcrypt can hash; longer ones
// are refused when an account is created and fail at login.
const MaxPasswordBytes = 72

// ErrPasswordTooLong is returned by HashPassword for a password longer
// than MaxPasswordBytes.
var ErrPasswordTooLong = errors.New("password is longer than 72 bytes")

// ErrPasswordEmpty is returned by HashPassword for an empty password.
var ErrPasswordEmpty = errors.New("password is empty")

// HashPassword returns a bcrypt hash of password at bcrypt.DefaultCost.
func HashPassword(password string) ([]byte, error) {
	return hashPassword(password, bcrypt.DefaultCost)
}

func hashPassword(password string, cost int) ([]byte, error) {
	switch {
	case password == "":
		return nil, ErrPasswordEmpty
	case len(password) > MaxPasswordBytes:
		return nil, ErrPasswordTooLong
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// dummyHash is compared against when the user does not exist, so that a
// login for an unknown user takes as long as one for a known user.
var dummyHash = sync.OnceValue(func() []byte {
	h, err := bcrypt.GenerateFromPassword([]byte("hds-dummy-password-for-timing"), bcrypt.DefaultCost)
	if err != nil {
		panic("auth: bcrypt failed: " + err.Error())
	}
	return h
})

// CheckPassword reports whether password matches hash. With a nil hash
// (unknown user) it still spends the time of one bcrypt comparison and
// returns false. A password longer than MaxPasswordBytes never matches
// (bcrypt alone would ignore the bytes past 72).
func CheckPassword(hash []byte, password string) bool {
	known := hash != nil
	if !known {
		hash = dummyHash()
	}
	ok := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	return ok && known && len(password) <= MaxPasswordBytes
}
