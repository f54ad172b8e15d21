package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The change feed as Watch follows it (docs/api.md#audit-log-and-change-feed):
// GET P/events read as Server-Sent Events, reconnected after a break with
// Last-Event-ID so that no change is missed.

// feedEvent is one event of the change feed: an audit entry.
type feedEvent struct {
	revision   int64
	action     string
	collection string // "" when the entry names none
	cluster    string
}

// ErrSilent is wrapped by the error Watch reports (WithWatchErrors) for a
// change feed given up for its silence: not a byte for 45 seconds, three
// keep-alives missed (a connection that died without a word: a dropped
// NAT entry, a peer gone away). It is reconnected; no change is missed.
var ErrSilent = errors.New("not a byte from the change feed")

// feed follows the change feed of one project.
type feed struct {
	c      *Client
	path   string // P/events
	events chan<- feedEvent
	// first gets the outcome of the first connection: nil once the stream
	// is open (every change committed after that is delivered), else why not.
	first chan<- error
	// lost gets the error of a reconnection refused with 401, 403 or 404:
	// the access was taken away; the feed stops.
	lost chan<- error
	// since is where the first connection starts: after that revision
	// (Last-Event-ID; 0 from the beginning of the project's history), or
	// with the next change when negative.
	since int64
	// report is told of the connections that failed and the streams
	// given up for silence; never nil.
	report func(err error, retry time.Duration)
}

// follow connects and reconnects until ctx ends or the access is lost.
// The first connection starts with the next change (or after f.since);
// every later one starts after the last event received (Last-Event-ID),
// or from the beginning when none was, so that no change after the first
// connection is missed (events before it cost a read that changes
// nothing).
func (f *feed) follow(ctx context.Context) {
	last := f.since
	wait := f.c.timing.firstWait
	for attempt := 0; ; attempt++ {
		since := ""
		if attempt > 0 || f.since >= 0 {
			since = strconv.FormatInt(max(last, 0), 10)
		}
		body, err := f.connect(ctx, since)
		pause := wait
		if err != nil && !fatal(err) && ctx.Err() == nil {
			pause = max(wait, retryAfter(err))
			f.report(err, pause)
		}
		if attempt == 0 {
			f.first <- err
		}
		if err != nil && fatal(err) {
			if attempt > 0 {
				f.lost <- err
			}
			return
		}
		if err == nil {
			wait = f.c.timing.firstWait
			pause = wait
			f.read(ctx, body, &last)
			body.Close()
			if body.silent.Load() && ctx.Err() == nil {
				f.report(&RequestError{Method: "GET", Path: f.path, Err: fmt.Errorf("%w for %s", ErrSilent, f.c.timing.idle)}, pause)
			}
		} else {
			wait = min(2*wait, f.c.timing.maxWait)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// stream is an open change feed: its body, and the timer that cuts it
// when it stays silent for the idle limit.
type stream struct {
	body   io.ReadCloser
	idle   *time.Timer
	cancel context.CancelFunc
	silent atomic.Bool // cut for its silence
}

// Close closes the body and ends the request.
func (s *stream) Close() error {
	s.idle.Stop()
	err := s.body.Close()
	s.cancel()
	return err
}

// connect opens the stream, after revision since unless since is "". A
// server that sends no headers within answerWithin is given up on.
func (f *feed) connect(ctx context.Context, since string) (*stream, error) {
	h := http.Header{"Accept": {"text/event-stream"}}
	if since != "" {
		h.Set("Last-Event-ID", since)
	}
	sctx, cancel := context.WithCancel(ctx)
	within := f.c.answerWithin()
	headers := time.AfterFunc(within, cancel)
	resp, err := f.c.send(sctx, "GET", f.path, nil, h)
	headers.Stop()
	if err != nil {
		cancel()
		if ctx.Err() == nil && errors.Is(err, context.Canceled) {
			err = &RequestError{Method: "GET", Path: f.path, Err: noAnswer{within}}
		}
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		return nil, errorOf(resp, "GET", f.path)
	}
	s := &stream{body: resp.Body, cancel: cancel}
	s.idle = time.AfterFunc(f.c.timing.idle, func() {
		s.silent.Store(true)
		cancel()
	})
	return s, nil
}

// read passes on the events of an open stream until it ends, keeping the
// revision of the last one in last. Every line (a keep-alive included)
// moves the idle limit; waiting for the watcher to take an event does not
// count as silence.
func (f *feed) read(ctx context.Context, s *stream, last *int64) {
	r := bufio.NewReader(s.body)
	var id, data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		s.idle.Reset(f.c.timing.idle)
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				id = value
			case "data":
				data = value
			}
			continue
		}
		// A blank line ends an event.
		rev, err := strconv.ParseInt(id, 10, 64)
		if err != nil || data == "" {
			id, data = "", ""
			continue // a comment (keep-alive) or something not an entry
		}
		var entry struct {
			Action     string  `json:"action"`
			Collection *string `json:"collection"`
			Cluster    *string `json:"cluster"`
		}
		if json.Unmarshal([]byte(data), &entry) != nil {
			return // not an audit entry: reconnect after the last good one
		}
		ev := feedEvent{revision: rev, action: entry.Action}
		if entry.Collection != nil {
			ev.collection = *entry.Collection
		}
		if entry.Cluster != nil {
			ev.cluster = *entry.Cluster
		}
		s.idle.Stop()
		select {
		case f.events <- ev:
		case <-ctx.Done():
			return
		}
		s.idle.Reset(f.c.timing.idle)
		*last = rev
		id, data = "", ""
	}
}

// fatal reports whether err is an answer that retrying cannot mend: 401,
// 403 or 404 (the access was taken away, or the thing is gone).
func fatal(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound
}

// retryable reports whether err may go away by itself: no answer (not a
// success answer that is not what the API describes), a 5xx, a 429 or a
// 408.
func retryable(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		var ne *RequestError
		return errors.As(err, &ne) && !ne.Answered
	}
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout
}

// retryAfter returns how long a 429 or 503 asked to wait (Retry-After),
// or 0.
func retryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.retryAfter
	}
	return 0
}
