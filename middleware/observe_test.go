package middleware

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hds-go/hds/internal/observe"
)

// BenchmarkObserve is the cost of the Observe middleware on a request
// that does nothing else (beside RequestID and Logging, as hds.New
// chains them), without and with an observer: what an observer adds to
// every request (issue 43).
func BenchmarkObserve(b *testing.B) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	logger := slog.New(slog.DiscardHandler)
	obs := observe.New(observe.Hooks{
		RequestStarted:  func(string) {},
		RequestFinished: func(string, string, int, time.Duration) {},
	}, nil)
	for _, c := range []struct {
		kind string
		h    http.Handler
	}{
		{"none", RequestID()(Logging(logger)(inner))},
		{"observer", RequestID()(Logging(logger)(Observe(obs)(inner)))},
	} {
		b.Run("kind="+c.kind, func(b *testing.B) {
			b.ReportAllocs()
			r := httptest.NewRequest(http.MethodGet, "/health", nil)
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, r)
			}
		})
	}
}
