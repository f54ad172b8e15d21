package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Test secrets. None of them may ever show up in the program's output.
var (
	testJWTSecret = "test-jwt-secret-that-is-long-enough-0123456789"
	testKey       = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	testOldKey    = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	testPassword  = "alice-password-do-not-print"
)

// syncBuffer is an io.Writer safe for the concurrent writes of a running
// server and the reads of the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// environ returns a getenv reading only m, never the real environment.
func environ(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hds.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOnce runs the program to completion (it must not start serving) and
// returns its output and error.
func runOnce(t *testing.T, args []string, env map[string]string, stdin string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, append([]string{"example"}, args...), environ(env), strings.NewReader(stdin), &out, &errOut)
	if ctx.Err() != nil {
		t.Fatalf("run %q did not return on its own: it must not serve", args)
	}
	return out.String(), errOut.String(), err
}

// server is a run of the program serving in the background.
type server struct {
	url            string
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
	done           chan struct{} // closed when run has returned
	err            error         // what run returned, once done is closed
}

var listeningLine = regexp.MustCompile(`hds listening on (https?://\S+)`)

// start runs the program with args and env and waits until it listens.
func start(t *testing.T, args []string, env map[string]string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = run(ctx, append([]string{"example"}, args...), environ(env), strings.NewReader(""), s.stdout, s.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := listeningLine.FindStringSubmatch(s.stdout.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("run returned before listening: %v\nstderr:\n%s", s.err, s.stderr.String())
		case <-deadline:
			t.Fatalf("no listening line after 30s\nstdout:\n%s\nstderr:\n%s", s.stdout.String(), s.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop cancels the context, as SIGINT would, and returns run's result.
func (s *server) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case <-s.done:
		return s.err
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return within 15s of the cancellation")
		return nil
	}
}

// call sends a JSON request and decodes the envelope.
func call(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	return callWith(t, http.DefaultClient, method, url, token, body)
}

// callWith is call with client (a client that trusts a test CA).
func callWith(t *testing.T, client *http.Client, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var env map[string]any
	if resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
	return resp.StatusCode, env
}

// login logs in and returns the token.
func login(t *testing.T, base, username, password string) string {
	t.Helper()
	return loginWith(t, http.DefaultClient, base, username, password)
}

// loginWith is login with client (a client that trusts a test CA).
func loginWith(t *testing.T, client *http.Client, base, username, password string) string {
	t.Helper()
	status, env := callWith(t, client, "POST", base+"/api/v1/auth/login", "", map[string]string{"username": username, "password": password})
	if status != http.StatusOK {
		t.Fatalf("login %s: status %d, body %v", username, status, env)
	}
	data, _ := env["data"].(map[string]any)
	token, _ := data["token"].(string)
	if token == "" {
		t.Fatalf("login %s: no token in %v", username, env)
	}
	return token
}

// waitFor waits until buf contains s.
func waitFor(t *testing.T, buf *syncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(buf.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output after 15s:\n%s", s, buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
