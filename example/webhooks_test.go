package main

import (
	"net/http"
	"testing"
)

// Webhooks are on in the standalone server (their routes ask for a
// token); webhooks.enabled false turns them off (404, as any unknown
// route).
func TestServeWebhooks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		config string
		want   int
	}{
		{`{}`, http.StatusUnauthorized},
		{`{"webhooks": {"enabled": false}}`, http.StatusNotFound},
	} {
		s := start(t, []string{"-config", writeConfig(t, c.config), "serve"}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
		res, err := http.Get(s.url + "/api/v1/projects/web/webhooks")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s: GET P/webhooks is %d, want %d", c.config, res.StatusCode, c.want)
		}
	}
}
