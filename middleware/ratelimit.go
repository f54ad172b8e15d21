package middleware

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ulule/limiter/v3"

	"github.com/hds-go/hds/internal/envelope"
)

// The rate limit headers.
const (
	HeaderLimit      = "X-RateLimit-Limit"
	HeaderRemaining  = "X-RateLimit-Remaining"
	HeaderReset      = "X-RateLimit-Reset"
	HeaderRetryAfter = "Retry-After"
)

// RateLimiter counts requests per key in several fixed windows (by
// default an hour and a minute) with the ulule/limiter core, on any of its
// stores: in memory, or Redis so that several instances share one budget.
// Each window keeps its counters under its own key prefix in the store.
type RateLimiter struct {
	windows []*limiter.Limiter // shortest window first
	prefix  []string
	now     func() time.Time
}

// NewRateLimiter returns a limiter enforcing every rate on s. Rates with a
// Limit of 0 or less are left out.
func NewRateLimiter(s limiter.Store, rates ...limiter.Rate) *RateLimiter {
	l := &RateLimiter{now: time.Now}
	rates = slices.Clone(rates)
	slices.SortFunc(rates, func(a, b limiter.Rate) int { return cmp.Compare(a.Period, b.Period) })
	for _, r := range rates {
		if r.Limit <= 0 {
			continue
		}
		l.windows = append(l.windows, limiter.New(s, r))
		l.prefix = append(l.prefix, windowPrefix(r.Period))
	}
	return l
}

// windowPrefix is the key prefix of a window: its period in whole seconds
// ("w3600:"), or spelled out when it is not a whole number of seconds
// ("w1.5s:"), so that windows of different periods never share a counter.
func windowPrefix(p time.Duration) string {
	if p%time.Second == 0 {
		return "w" + strconv.FormatInt(int64(p/time.Second), 10) + ":"
	}
	return "w" + p.String() + ":"
}

// Count counts one request for key in every window, shortest first, and
// returns the state of the window closest to running out. A request
// refused by a shorter window is not counted in the longer ones. A store
// failure is returned wrapping both ErrRateLimitUnavailable and the
// store's error.
func (l *RateLimiter) Count(ctx context.Context, key string) (limiter.Context, error) {
	c, _, err := l.count(ctx, key)
	return c, err
}

// count is Count, also returning in how many windows (the first n) the
// request was counted.
func (l *RateLimiter) count(ctx context.Context, key string) (chosen limiter.Context, n int, _ error) {
	for i, w := range l.windows {
		c, err := w.Get(ctx, l.prefix[i]+key)
		if err != nil {
			return limiter.Context{}, i, fmt.Errorf("rate limit store: %w: %w", ErrRateLimitUnavailable, err)
		}
		n = i + 1
		if i == 0 || c.Reached || (!chosen.Reached && c.Remaining < chosen.Remaining) {
			chosen = c
		}
		if c.Reached {
			break
		}
	}
	return chosen, n, nil
}

// uncount takes back a request counted for key in the first n windows
// (a request whose deferred session check failed: DeferSession), as if
// it had not been counted. A window that ended in between starts its
// successor one request short; store errors are ignored (the count
// stays, as a rejected request's would).
func (l *RateLimiter) uncount(ctx context.Context, key string, n int) {
	for i := range n {
		_, _ = l.windows[i].Increment(ctx, l.prefix[i]+key, -1)
	}
}

// Limit counts each request under key(r) and refuses it with 429
// RATE_LIMIT_EXCEEDED and Retry-After once a window is used up. Every
// counted response carries the X-RateLimit headers of the window closest
// to running out. A failing store is 503 SERVICE_UNAVAILABLE
// (ErrRateLimitUnavailable), never a panic.
func (l *RateLimiter) Limit(key func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil || len(l.windows) == 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k := key(r)
			c, n, err := l.count(r.Context(), k)
			if g := gateOf(r.Context()); g != nil && n > 0 {
				// The session check is still to come: should it fail, the
				// request is counted against the client IP instead.
				g.uncount = func() { l.uncount(context.WithoutCancel(r.Context()), k, n) }
			}
			if err != nil {
				envelope.Error(w, r, err)
				return
			}
			h := w.Header()
			limit, remaining, reset := rateTexts(c)
			setRateHeaders(h, limit, remaining, reset)
			if c.Reached {
				h.Set(HeaderRetryAfter, retryAfter(c.Reset, l.now()))
				envelope.Error(w, r, ErrRateLimited)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// rateTexts returns c's limit, remaining count and reset time as text,
// in one allocation: the three are cut from one string.
func rateTexts(c limiter.Context) (limit, remaining, reset string) {
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], c.Limit, 10)
	i := len(b)
	b = strconv.AppendInt(b, c.Remaining, 10)
	j := len(b)
	b = strconv.AppendInt(b, c.Reset, 10)
	all := string(b)
	return all[:i], all[i:j], all[j:]
}

// retryAfter is the number of whole seconds until reset, at least 1.
func retryAfter(reset int64, now time.Time) string {
	return strconv.FormatInt(max(1, reset-now.Unix()), 10)
}
