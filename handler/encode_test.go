package handler

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendTimeMatchesLayout checks the hand-written timestamp writer
// against time.Time.AppendFormat with timeLayout, byte for byte: at the
// edges of its digits, around the years it hands over, in other zones,
// and at random instants across and beyond 0-9999.
func TestAppendTimeMatchesLayout(t *testing.T) {
	east := time.FixedZone("east", 14*3600)
	times := []time.Time{
		{},
		time.Unix(0, 0),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 12, 30, 45, 123456789, time.UTC),
		time.Date(2026, 11, 24, 0, 0, 0, 1000, east),
		time.Date(1969, 12, 31, 23, 59, 59, 999, time.UTC),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		times = append(times, time.Unix(rng.Int64N(2*400_000_000_000)-400_000_000_000, rng.Int64N(1e9)).In(east))
	}
	for _, tm := range times {
		want := `"` + tm.UTC().Format(timeLayout) + `"`
		if got := string(appendTime([]byte("x"), tm)); got != "x"+want {
			t.Fatalf("appendTime(%v) = %s, want x%s", tm, got, want)
		}
	}
}

// FuzzAppendTime compares appendTime with AppendFormat on any instant.
func FuzzAppendTime(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(253402300799), int64(999999999))
	f.Fuzz(func(t *testing.T, sec, nsec int64) {
		tm := time.Unix(sec, nsec)
		want := `"` + tm.UTC().Format(timeLayout) + `"`
		if got := string(appendTime(nil, tm)); got != want {
			t.Fatalf("appendTime(%d, %d) = %s, want %s", sec, nsec, got, want)
		}
	})
}

// BenchmarkAppendTime is the cost of one timestamp; a list of 100
// records writes 200.
func BenchmarkAppendTime(b *testing.B) {
	tm := time.Date(2026, 11, 24, 20, 30, 0, 123456000, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = appendTime(buf[:0], tm)
	}
}
