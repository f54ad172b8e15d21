// Package timetext reads the text of DATE, TIME and DATETIME values: the
// checks behind store.DataType's validation, and
// the instant a DATETIME text denotes, which range filters compare.
package timetext

import (
	"strings"
	"time"
)

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// IsDate reports whether s is a DATE value: YYYY-MM-DD, a real calendar
// date.
func IsDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !isDigits(s[:4]) || !isDigits(s[5:7]) || !isDigits(s[8:]) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// IsTime reports whether s is a TIME value: HH:MM:SS from 00:00:00 to
// 23:59:59, with an optional fraction of 1 to 9 digits.
func IsTime(s string) bool {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' || !isDigits(s[:2]) || !isDigits(s[3:5]) || !isDigits(s[6:8]) {
		return false
	}
	if s[:2] > "23" || s[3:5] > "59" || s[6:8] > "59" {
		return false
	}
	frac := s[8:]
	if frac == "" {
		return true
	}
	return frac[0] == '.' && len(frac) >= 2 && len(frac) <= 10 && isDigits(frac[1:])
}

// IsDateTime reports whether s is a DATETIME value: an RFC 3339 date-time
// with an offset. RFC 3339 allows "t" and "z" in lower case; the value is
// kept as given either way.
func IsDateTime(s string) bool {
	if len(s) < 20 || (s[10] != 'T' && s[10] != 't') || !IsDate(s[:10]) {
		return false
	}
	rest := s[11:]
	var clock, zone string
	if last := rest[len(rest)-1]; last == 'Z' || last == 'z' {
		clock, zone = rest[:len(rest)-1], "Z"
	} else if len(rest) >= 6 {
		clock, zone = rest[:len(rest)-6], rest[len(rest)-6:]
		if (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' || !isDigits(zone[1:3]) || !isDigits(zone[4:]) ||
			zone[1:3] > "23" || zone[4:] > "59" {
			return false
		}
	} else {
		return false
	}
	if !IsTime(clock) {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s[:10]+"T"+clock+zone)
	return err == nil
}

// Instant returns the instant a canonical DATETIME text denotes, to the
// nanosecond, its offset taken into account; the zero time for a text that
// is not one.
func Instant(s string) time.Time {
	if !IsDateTime(s) {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
	return t
}
