// Package duration reads durations as the configuration does
// (docs/api.md#the-standalone-server): Go's forms plus days, with
// nothing but the standard library, so that the library (hds.ParseDuration)
// and the Go client (client.Decode into a time.Duration) read them alike.
package duration

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"
)

// Parse reads a duration in Go's forms ("1h30m") with days as one more
// unit ("7d", "1d12h", "1.5d"). It refuses negative durations.
func Parse(s string) (time.Duration, error) {
	goForm, ok := daysAsHours(s)
	if !ok {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	d, err := time.ParseDuration(goForm)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	if d < 0 {
		return 0, errors.New("duration must not be negative: " + s)
	}
	return d, nil
}

// dayRE is a number of days in a duration: no Go unit holds a "d".
var dayRE = regexp.MustCompile(`[0-9.]*d`)

// daysAsHours writes every number of days of s as hours, exactly ("1.5d"
// is "36h"), or reports false for a "d" without a decimal number.
func daysAsHours(s string) (string, bool) {
	ok := true
	out := dayRE.ReplaceAllStringFunc(s, func(m string) string {
		num := strings.TrimSuffix(m, "d")
		whole, frac, _ := strings.Cut(num, ".")
		r, valid := new(big.Rat).SetString(num)
		if !valid || whole+frac == "" || strings.Contains(frac, ".") {
			ok = false
			return m
		}
		return r.Mul(r, big.NewRat(24, 1)).FloatString(len(frac)) + "h"
	})
	return out, ok
}
