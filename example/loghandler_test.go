package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"
)

// textSamples are strings the text handler writes in every way: plain,
// quoted with the quotes only, quoted with escapes, and invalid UTF-8.
var textSamples = []string{
	"", "a", "GET", "GET /api/v1/projects/{project}", "a=b", `say "hi"`, `back\slash`,
	"tab\there", "nl\nhere", "\x00", "\x7f", "del\x7f and space", "é", "naïve name", "\u00a0nbsp",
	"\u2028", "日本語", "emoji 🙂", "\xff", "bad\xc3", "16a0c2d4e8f01234-42", "token:0b6f", "499",
}

// TestLineHandlerMatchesText holds lineHandler's lines byte for byte to
// slog.NewTextHandler's: the request line's shape with every sample in
// every place, random strings, the levels, and records it hands over
// (other kinds, groups, attributes added by With).
func TestLineHandlerMatchesText(t *testing.T) {
	when := time.Date(2026, 11, 28, 14, 3, 7, 999_600_000, time.FixedZone("X", 5*3600+1800))
	check := func(t *testing.T, msg string, level slog.Level, attrs ...slog.Attr) {
		t.Helper()
		var want, got bytes.Buffer
		for _, c := range []struct {
			h   slog.Handler
			out *bytes.Buffer
		}{{slog.NewTextHandler(&want, nil), &want}, {newLineHandler(&got), &got}} {
			r := slog.NewRecord(when, level, msg, 0)
			r.AddAttrs(attrs...)
			if err := c.h.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		if got.String() != want.String() {
			t.Fatalf("line differs:\n got %q\nwant %q", got.String(), want.String())
		}
	}
	request := func(method, pattern, user, id string, status int, d time.Duration) []slog.Attr {
		return []slog.Attr{slog.String("method", method), slog.String("pattern", pattern),
			slog.Int("status", status), slog.Duration("duration", d),
			slog.String("user_id", user), slog.String("request_id", id)}
	}
	for _, s := range textSamples {
		check(t, "request", slog.LevelInfo, request(s, s, s, s, 200, 1234567*time.Nanosecond)...)
		check(t, s, slog.LevelError, append(request("GET", "", "", s, 500, 0), slog.String("error", s))...)
		check(t, "request", slog.LevelInfo, slog.String(s, s))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', 'Z', '0', ' ', '=', '"', '\\', '\t', '\n', 0, 0x7f, 'é', 0xa0, 0x2028, '日', 0xfffd, '{', '}', '/'}
	for range 2000 {
		b := make([]byte, 0, 16)
		for range rng.IntN(12) {
			if rng.IntN(20) == 0 {
				b = append(b, 0xff) // invalid UTF-8
				continue
			}
			b = append(b, string(alphabet[rng.IntN(len(alphabet))])...)
		}
		s := string(b)
		check(t, s, slog.LevelInfo, slog.String(s, s), slog.Int64("n", rng.Int64()-rng.Int64()),
			slog.Duration("d", time.Duration(rng.Int64N(int64(time.Hour)))))
	}
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2} {
		check(t, "request", l, request("POST", "POST /api/v1/auth/login", "u", "r", 201, time.Millisecond)...)
	}
	// Handed to the text handler: other kinds and groups.
	check(t, "other", slog.LevelInfo, slog.Bool("b", true), slog.Float64("f", 1.5), slog.Any("err", errors.New("x y")),
		slog.Time("t", when), slog.Group("g", slog.String("k", "v")), slog.Uint64("u", 7))
	check(t, "empty key", slog.LevelInfo, slog.String("", "v"))
	// Handed over after attributes Handle would have written itself.
	check(t, "request", slog.LevelInfo, append(request("GET", "GET /x", "u", "r", 200, time.Second), slog.Bool("late", true))...)
	check(t, "request", slog.LevelWarn, slog.String("a", "b c"), slog.String("", "v"), slog.Int("n", 1))
	var want, got bytes.Buffer
	with := []slog.Attr{slog.String("k", "v w")}
	for _, c := range []struct {
		h   slog.Handler
		out *bytes.Buffer
	}{{slog.NewTextHandler(&want, nil), &want}, {newLineHandler(&got), &got}} {
		r := slog.NewRecord(when, slog.LevelInfo, "m", 0)
		r.AddAttrs(slog.Int("a", 1))
		if err := c.h.WithAttrs(with).WithGroup("g").Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want.String() {
		t.Fatalf("With: got %q, want %q", got.String(), want.String())
	}
}

// BenchmarkLineHandler compares the request line through lineHandler
// and through slog's text handler (benchstat -col /handler), the record
// made as middleware.Logging makes it: without a program counter,
// handed to the handler directly.
func BenchmarkLineHandler(b *testing.B) {
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{{"text", slog.NewTextHandler(discard{}, nil)}, {"line", newLineHandler(discard{})}} {
		b.Run("handler="+h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
				r.AddAttrs(slog.String("method", "GET"),
					slog.String("pattern", "GET /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records/{record}"),
					slog.Int("status", 200), slog.Duration("duration", 183*time.Microsecond),
					slog.String("user_id", "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d"),
					slog.String("request_id", "16a0c2d4e8f01234-42"))
				_ = h.h.Handle(context.Background(), r)
			}
		})
	}
}

// discard takes every line, as logWriter does, and keeps none.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
