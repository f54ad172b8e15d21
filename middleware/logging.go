package middleware

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/hds-go/hds/internal/reqinfo"
)

// Logging writes one structured line per request: method, route pattern,
// status, duration, user id and request id, plus the cause of a 500. It
// never logs headers, query strings or bodies, where tokens, passwords and
// credential values travel. It must run inside RequestID.
func Logging(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			info := reqinfo.From(r.Context())
			level := slog.LevelInfo
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("pattern", info.Pattern),
				slog.Int("status", sw.status()),
				slog.Duration("duration", time.Since(start)),
				slog.String("user_id", info.UserID),
				slog.String("request_id", info.RequestID),
			}
			if info.Err != nil {
				level = slog.LevelError
				attrs = append(attrs, slog.String("error", info.Err.Error()))
			}
			logger.LogAttrs(r.Context(), level, "request", attrs...)
		})
	}
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
