package timetext_test

import (
	"testing"
	"time"

	"github.com/hds-go/hds/internal/timetext"
)

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		check func(string) bool
		name  string
		in    string
		want  bool
	}{
		{timetext.IsDate, "IsDate", "2024-02-29", true},
		{timetext.IsDate, "IsDate", "2023-02-29", false},
		{timetext.IsDate, "IsDate", "2024-2-29", false},
		{timetext.IsTime, "IsTime", "23:59:59.123456789", true},
		{timetext.IsTime, "IsTime", "24:00:00", false},
		{timetext.IsTime, "IsTime", "12:00:00.", false},
		{timetext.IsTime, "IsTime", "12:00:00.1234567890", false},
		{timetext.IsDateTime, "IsDateTime", "2026-11-22t08:18:19.5z", true},
		{timetext.IsDateTime, "IsDateTime", "2026-11-22T08:18:19+01:00", true},
		{timetext.IsDateTime, "IsDateTime", "2026-11-22T08:18:19", false},
		{timetext.IsDateTime, "IsDateTime", "2026-11-22T08:18:19+24:00", false},
		{timetext.IsDateTime, "IsDateTime", "2026-11-22T08:18:19,5Z", false},
	} {
		if got := tc.check(tc.in); got != tc.want {
			t.Errorf("%s(%q) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestInstant(t *testing.T) {
	want := time.Date(2026, 11, 22, 7, 18, 19, 500_000_000, time.UTC)
	for _, s := range []string{"2026-11-22T08:18:19.5+01:00", "2026-11-22t07:18:19.500z"} {
		if got := timetext.Instant(s); !got.Equal(want) {
			t.Errorf("Instant(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range []string{"", "2026-11-22", "2026-11-22T08:18:19,5Z"} {
		if got := timetext.Instant(s); !got.IsZero() {
			t.Errorf("Instant(%q) = %v, want the zero time", s, got)
		}
	}
}
