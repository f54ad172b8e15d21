package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogWriterFlushes checks that a buffered log line reaches the
// output within the flush interval without Close, and that Close writes
// out the rest.
func TestLogWriterFlushes(t *testing.T) {
	var out syncBuffer
	l := newLogWriter(&out, 20*time.Millisecond)
	_, err := l.Write([]byte("starting\n"))
	require.NoError(t, err)
	assert.Equal(t, "starting\n", out.String(), "before Buffer, a line is written at once")
	out.b.Reset()
	l.Buffer()
	_, err = l.Write([]byte("first line\n"))
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return out.String() == "first line\n" }, 2*time.Second, 5*time.Millisecond,
		"a line is written out by the periodic flush")

	// Close writes out what is left, even before the next tick.
	l2 := newLogWriter(&out, time.Hour)
	l2.Buffer()
	_, err = l2.Write([]byte("second line\n"))
	require.NoError(t, err)
	assert.Equal(t, "first line\n", out.String(), "a line waits for the flush")
	require.NoError(t, l2.Close())
	assert.Equal(t, "first line\nsecond line\n", out.String())
	require.NoError(t, l.Close())
}

// TestLogWriterKeepsLinesWhole checks that lines written concurrently
// come out whole and all of them, also past the buffer's size.
func TestLogWriterKeepsLinesWhole(t *testing.T) {
	var out syncBuffer
	l := newLogWriter(&out, time.Millisecond)
	l.Buffer()
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				_, _ = fmt.Fprintf(l, "writer=%d line=%d %s\n", w, i, strings.Repeat("x", 40))
			}
		}()
	}
	wg.Wait()
	require.NoError(t, l.Close())
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, got, writers*lines)
	seen := map[string]bool{}
	for _, line := range got {
		var w, i int
		var rest string
		_, err := fmt.Sscanf(line, "writer=%d line=%d %s", &w, &i, &rest)
		require.NoError(t, err, "line %q", line)
		require.Equal(t, strings.Repeat("x", 40), rest, "line %q", line)
		seen[line] = true
	}
	assert.Len(t, seen, writers*lines, "every line once")
}
