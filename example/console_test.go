package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The console is on by default and its URL printed; console.enabled
// false turns it off.
func TestServeConsole(t *testing.T) {
	t.Parallel()
	s := start(t, []string{"serve"}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	want := "Console (in a browser): " + s.url + "/console/\n"
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s.stdout.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("stdout does not say %q:\n%s", want, s.stdout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Get(s.url + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("GET /console/: %d %v", res.StatusCode, res.Header)
	}

	off := start(t, []string{"-config", writeConfig(t, `{"console": {"enabled": false}}`), "serve"},
		map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	res, err = http.Get(off.url + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("console.enabled false: GET /console/ is %d, want 404", res.StatusCode)
	}
	if strings.Contains(off.stdout.String(), "Console") {
		t.Errorf("console.enabled false: stdout names the console:\n%s", off.stdout.String())
	}
}
