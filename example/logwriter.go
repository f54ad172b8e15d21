package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logFlushInterval is the longest a log line waits in the server's
// buffer before it is written out.
const logFlushInterval = 100 * time.Millisecond

// logWriterSize is how much the buffer holds; a fuller buffer is written
// out at once.
const logWriterSize = 32 << 10

// logWriter buffers the server's log lines and writes them out together:
// every logFlushInterval, whenever logWriterSize bytes are waiting, and
// on Close. The server logs one line per request, and writing each on its
// own was a system call per request: about a twentieth of the server's
// time on a single-record GET. A line is written whole (slog hands each
// record to one Write), in the order the lines were logged; at most
// logFlushInterval of lines is lost if the process dies without Close.
//
// It writes through, line by line, until Buffer is called: what the
// server says while it starts (a warning, the listening line) is seen at
// once.
type logWriter struct {
	mu        sync.Mutex
	buf       *bufio.Writer
	buffering bool
	stop      chan struct{}
	done      chan struct{}
}

// newLogWriter returns a logWriter writing to w, flushing every
// interval. Close it to write out what is left.
func newLogWriter(w io.Writer, interval time.Duration) *logWriter {
	l := &logWriter{buf: bufio.NewWriterSize(w, logWriterSize), stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushEvery(interval)
	return l
}

// Write implements io.Writer.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	if err == nil && !l.buffering {
		err = l.buf.Flush()
	}
	return n, err
}

// Buffer starts buffering: from now on lines wait for the next flush.
func (l *logWriter) Buffer() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buffering = true
}

// flushEvery writes the buffer out every interval until Close.
func (l *logWriter) flushEvery(interval time.Duration) {
	defer close(l.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.flush()
		}
	}
}

// flush writes out what the buffer holds.
func (l *logWriter) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Flush()
}

// Close stops the periodic flush and writes out what is left. Writes
// after Close are buffered and never written.
func (l *logWriter) Close() error {
	close(l.stop)
	<-l.done
	return l.flush()
}
