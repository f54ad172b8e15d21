package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `{
  "addr": "this is not an address: HDS_ADDR wins",
  "security": {"jwt_secret": "`+testJWTSecret+`", "credential_key": "`+testKey+`"},
  "cors": {"allowed_origins": ["https://app.example.com"]},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
	s := start(t, []string{"-config", path}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})

	token := login(t, s.url, "alice", testPassword)
	if status, env := call(t, "POST", s.url+"/api/v1/projects", token, map[string]string{"name": "demo"}); status != http.StatusCreated {
		t.Fatalf("create project: status %d, body %v", status, env)
	}
	// The configured credential key is in use: a secret can be stored and
	// read back.
	for _, step := range []struct{ method, path string }{
		{"POST", "/api/v1/projects/demo/collections/prod"},
		{"POST", "/api/v1/projects/demo/collections/prod/clusters/db"},
	} {
		if status, env := call(t, step.method, s.url+step.path, token, nil); status != http.StatusCreated {
			t.Fatalf("%s %s: status %d, body %v", step.method, step.path, status, env)
		}
	}
	records := s.url + "/api/v1/projects/demo/collections/prod/clusters/db/records"
	if status, env := call(t, "POST", records, token, map[string]any{"name": "pw", "type": "CREDENTIAL", "value": "s3cret"}); status != http.StatusCreated {
		t.Fatalf("create credential: status %d, body %v", status, env)
	}
	if status, env := call(t, "GET", records+"/pw?reveal=true", token, nil); status != http.StatusOK ||
		env["data"].(map[string]any)["value"] != "s3cret" {
		t.Fatalf("reveal credential: status %d, body %v", status, env)
	}
	// CORS is configured.
	req, _ := http.NewRequest("GET", s.url+"/health", nil)
	req.Header.Set("Origin", "https://app.example.com")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
		t.Errorf("Access-Control-Allow-Origin = %q, want the configured origin", got)
	}

	// A request still in flight when the shutdown starts is finished: its
	// body is only half sent when the context is cancelled.
	pr, pw := io.Pipe()
	req, _ = http.NewRequest("POST", s.url+"/api/v1/projects", pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	// With Expect: 100-continue the client sends no byte of the body
	// before the handler asks for it (the server's 100 Continue), so the
	// first write below returns only once the server is working on the
	// request.
	req.Header.Set("Expect", "100-continue")
	inFlight := make(chan int, 1)
	go func() {
		// A connection of its own, so that it is not one left idle by the
		// requests above.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: time.Hour}}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("in-flight request: %v", err)
			inFlight <- 0
			return
		}
		resp.Body.Close()
		inFlight <- resp.StatusCode
	}()
	if _, err := io.WriteString(pw, `{"name":`); err != nil {
		t.Fatal(err)
	}
	s.cancel()
	waitFor(t, s.stderr, "shutting down")
	if _, err := io.WriteString(pw, `"late"}`); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if status := <-inFlight; status != http.StatusCreated {
		t.Errorf("in-flight request: status %d, want 201", status)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run returned %v after cancellation, want nil", err)
	}

	stdout, stderr := s.stdout.String(), s.stderr.String()
	if strings.Contains(stdout, `"admin"`) {
		t.Errorf("stdout mentions an admin account although users are configured:\n%s", stdout)
	}
	for _, secret := range []string{testPassword, testJWTSecret, testKey, "s3cret"} {
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("the output shows the secret %q:\nstdout:\n%s\nstderr:\n%s", secret, stdout, stderr)
		}
	}
	for _, unwanted := range []string{"no jwt_secret configured", "no credential_key configured"} {
		if strings.Contains(stderr, unwanted) {
			t.Errorf("stderr says %q although it is configured", unwanted)
		}
	}
}

func TestServeCreatesAdmin(t *testing.T) {
	t.Parallel()
	s := start(t, []string{"serve"}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	m := regexp.MustCompile(`user "admin" was created with the password:\n\s+(\S+)\n`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no admin password on stdout:\n%s", s.stdout.String())
	}
	password := m[1]
	if !strings.Contains(s.stdout.String(), "curl -s -X POST "+s.url+"/api/v1/auth/login") {
		t.Errorf("stdout has no curl example for logging in:\n%s", s.stdout.String())
	}
	token := login(t, s.url, "admin", password)
	if status, env := call(t, "GET", s.url+"/api/v1/projects", token, nil); status != http.StatusOK {
		t.Errorf("list projects: status %d, body %v", status, env)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run returned %v after cancellation, want nil", err)
	}
	stderr := s.stderr.String()
	for _, want := range []string{"no jwt_secret configured", "will not survive a restart", "no credential_key configured"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, password) {
		t.Errorf("the admin password is in the log:\n%s", stderr)
	}
}

func TestServeListenError(t *testing.T) {
	s := start(t, nil, map[string]string{"HDS_ADDR": "127.0.0.1:0", "HDS_JWT_SECRET": testJWTSecret})
	addr := strings.TrimPrefix(s.url, "http://")
	_, _, err := runOnce(t, []string{"-config", writeConfig(t, `{"users": [{"username": "a", "password": "b"}]}`)},
		map[string]string{"HDS_ADDR": addr}, "")
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("second server on %s: error %v, want a listen error", addr, err)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run returned %v, want nil", err)
	}
}

func TestRedisUnreachable(t *testing.T) {
	// A port of the loopback interface with no server behind it, until
	// the test forwards it to the Redis server of the machine.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := start(t, nil, map[string]string{
		"HDS_ADDR":      "127.0.0.1:0",
		"HDS_REDIS_URL": "redis://:redis-secret@" + addr + "/0",
	})
	health := func() (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(s.url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	status, out := health()
	if status != http.StatusOK || out["status"] != "degraded" || out["checks"].(map[string]any)["rate_limit"] != "unavailable" {
		t.Errorf("/health while Redis is unreachable: %d %v, want 200, degraded, rate_limit unavailable", status, out)
	}
	if status, env := call(t, "GET", s.url+"/api/v1/projects", "", nil); status != http.StatusUnauthorized {
		t.Errorf("a request while Redis is unreachable: %d %v, want the API's answer (401 without a token)", status, env)
	}
	if !strings.Contains(s.stderr.String(), "cannot reach Redis") {
		t.Errorf("the log does not say that Redis cannot be reached:\n%s", s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "counters are kept in Redis") {
		t.Errorf("the log says the counters are kept in Redis while Redis cannot be reached:\n%s", s.stderr.String())
	}

	// Redis answers: the server switches to it.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", "127.0.0.1:6379")
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, out = health(); out["status"] == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health once Redis answers: %v, want ok", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(s.stdout.String()+s.stderr.String(), "redis-secret") {
		t.Errorf("the output shows the Redis password:\n%s\n%s", s.stdout.String(), s.stderr.String())
	}
}

func TestRedisReachableAtStart(t *testing.T) {
	s := start(t, nil, map[string]string{
		"HDS_ADDR":      "127.0.0.1:0",
		"HDS_REDIS_URL": "redis://127.0.0.1:6379/0",
	})
	if !strings.Contains(s.stderr.String(), "counters are kept in Redis") {
		t.Errorf("the log does not say that the counters are kept in Redis:\n%s", s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "cannot reach Redis") {
		t.Errorf("the log says Redis cannot be reached while it answers:\n%s", s.stderr.String())
	}
}
