package main

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

// The change feed as run -watch follows it
// (docs/api.md#18-audit-log-and-change-feed): GET P/events, read as Server-Sent Events,
// reconnected after a break with Last-Event-ID so that no change is
// missed.

// feedEvent is one event of the change feed: an audit entry.
type feedEvent struct {
	revision   int64
	action     string
	collection string // "" when the entry names none
	cluster    string
}

// Reconnection waits: the first, and the longest it doubles up to.
const (
	feedFirstWait = time.Second
	feedMaxWait   = 30 * time.Second
)

// feedIdle is how long a stream may stay silent, not a byte, before run
// takes it for broken and reconnects: the server sends a keep-alive
// every events.keepalive (default 15 s), so three of them missed means a
// connection that died without a word (a dropped NAT entry, a peer gone
// away); a reconnection misses nothing either way.
const feedIdle = 45 * time.Second

// feed follows the change feed of one project.
type feed struct {
	c       *apiClient
	path    string        // P/events
	timeout time.Duration // for the response headers of each connection
	events  chan<- feedEvent
	// first gets the outcome of the first connection: nil once the stream
	// is open (every change committed after that is delivered), else why not.
	first chan<- error
	// lost gets the error of a reconnection refused with 401, 403 or 404:
	// the access was taken away; the feed stops.
	lost chan<- error
	// replay starts the first connection from the beginning of the
	// project's history (Last-Event-ID 0) rather than with the next change.
	replay bool
	// idle is how long a stream may stay silent (feedIdle when 0).
	idle time.Duration
	// stderr, when not nil, is told of a silent stream given up.
	stderr io.Writer
}

// follow connects and reconnects until ctx ends or the access is lost.
// The first connection starts with the next change (from the beginning
// with replay); every later one
// starts after the last event received (Last-Event-ID), or from the
// beginning when none was, so that no change after the first connection
// is missed (events before it cost a fetch that changes nothing).
func (f *feed) follow(ctx context.Context) {
	last := int64(-1)
	wait := feedFirstWait
	for attempt := 0; ; attempt++ {
		since := ""
		if attempt > 0 || f.replay {
			since = strconv.FormatInt(max(last, 0), 10)
		}
		body, err := f.connect(ctx, since)
		if attempt == 0 {
			f.first <- err
		}
		if err != nil && accessLost(err) {
			if attempt > 0 {
				f.lost <- err
			}
			return
		}
		if err == nil {
			wait = feedFirstWait
			if err := f.read(ctx, body, &last); errors.Is(err, errSilent) && f.stderr != nil {
				fmt.Fprintf(f.stderr, "hds: not a byte from the change feed for %s (the server sends a keep-alive every 15 s): reconnecting\n",
					f.idleLimit())
			}
			body.Close()
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, feedMaxWait)
	}
}

// connect opens the stream, after revision since unless since is "".
func (f *feed) connect(ctx context.Context, since string) (*cancelOnClose, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", f.c.base+f.path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if f.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.c.token)
	}
	if since != "" {
		req.Header.Set("Last-Event-ID", since)
	}
	// A request of its own context, cancelled when no headers came within
	// the time-out.
	hctx, cancel := context.WithCancelCause(ctx)
	req = req.WithContext(hctx)
	noAnswer := time.AfterFunc(f.timeout, func() { cancel(noAnswer{f.timeout}) })
	resp, err := f.c.http.Do(req)
	stopped := noAnswer.Stop()
	if err != nil {
		cancel(nil)
		if !stopped {
			err = context.Cause(hctx)
		}
		return nil, requestFailed("GET", f.path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		defer cancel(nil)
		return nil, classify(f.c.failure("GET", f.path, resp), resp.StatusCode)
	}
	return &cancelOnClose{ReadCloser: resp.Body, cancel: func() { cancel(nil) }}, nil
}

// idleLimit is how long a stream may stay silent.
func (f *feed) idleLimit() time.Duration {
	if f.idle > 0 {
		return f.idle
	}
	return feedIdle
}

// errSilent is what read returns for a stream cut for its silence.
var errSilent = errors.New("the change feed was silent for too long")

// silence cuts a stream (cancels its request) when not a byte came for
// limit: every Read that returns bytes starts the wait again.
type silence struct {
	r     io.Reader
	limit time.Duration
	timer *time.Timer
	cut   atomic.Bool
}

// newSilence reads body, cutting it after limit without a byte.
func newSilence(body *cancelOnClose, limit time.Duration) *silence {
	s := &silence{r: body, limit: limit}
	s.timer = time.AfterFunc(limit, func() {
		s.cut.Store(true)
		body.cancel()
	})
	return s
}

func (s *silence) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.limit)
	}
	if err != nil && s.cut.Load() {
		err = errSilent
	}
	return n, err
}

// cancelOnClose cancels the request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// read passes on the events of an open stream until it ends, keeping the
// revision of the last one in last.
func (f *feed) read(ctx context.Context, body *cancelOnClose, last *int64) error {
	idle := newSilence(body, f.idleLimit())
	defer idle.timer.Stop()
	r := bufio.NewReader(idle)
	var id, data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
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
		if err := json.Unmarshal([]byte(data), &entry); err != nil {
			return errors.New("the change feed sent an event that is not an audit entry")
		}
		ev := feedEvent{revision: rev, action: entry.Action}
		if entry.Collection != nil {
			ev.collection = *entry.Collection
		}
		if entry.Cluster != nil {
			ev.cluster = *entry.Cluster
		}
		select {
		case f.events <- ev:
		case <-ctx.Done():
			return ctx.Err()
		}
		*last = rev
		id, data = "", ""
	}
}
