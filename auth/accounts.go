package auth

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxUsernameRunes is the longest username, in code points
// (docs/api.md#server-administrators-and-user-accounts-v12).
const MaxUsernameRunes = 128

// CheckUsername applies the rules of a new account's username
// (docs/api.md#server-administrators-and-user-accounts-v12): 1 to 128 code
// points of valid UTF-8, no control characters, no leading or trailing
// white space; and, where the contract is silent, not "." or "..", which
// no path can address (a "." or ".." segment is 404 before routing), so
// such a user could never be read, changed or deleted. The error names the
// rule broken and is safe to show.
func CheckUsername(name string) error {
	switch {
	case name == "":
		return errors.New("username must not be empty")
	case name == "." || name == "..":
		return errors.New(`username must not be "." or ".." (no path can name them)`)
	case !utf8.ValidString(name):
		return errors.New("username must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxUsernameRunes:
		return fmt.Errorf("username must be at most %d characters long", MaxUsernameRunes)
	case strings.ContainsFunc(name, unicode.IsControl):
		return errors.New("username must not contain control characters")
	case strings.TrimSpace(name) != name:
		return errors.New("username must not begin or end with white space")
	}
	return nil
}

// CheckNewPassword applies the rules of a new password
// (docs/api.md#authentication and
// docs/api.md#server-administrators-and-user-accounts-v12) without spending
// the time of a hash: not empty, at most MaxPasswordBytes bytes. The error
// names the rule broken and never holds the password.
func CheckNewPassword(password string) error {
	switch {
	case password == "":
		return errors.New("password must not be empty")
	case len(password) > MaxPasswordBytes:
		return fmt.Errorf("password must be at most %d bytes long", MaxPasswordBytes)
	}
	return nil
}
