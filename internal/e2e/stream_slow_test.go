package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// TestEnvFileStreams reads the environment file of a cluster of big
// credentials (revealed) with 4 concurrent GET K?format=env on PostgreSQL,
// sampling the heap, and fails when it grows by streamHeapBound or more:
// the file is streamed like GET K. The file is whole: one line per
// environment variable name, in name order, the others counted.
func TestEnvFileStreams(t *testing.T) {
	if !alone(t) {
		return // measures the process: run in one of its own
	}
	records, size := 30, 700_000
	c := newServer(t, storeKinds[1], hds.WithCredentialKey(testKey))
	srv := httptest.NewServer(c.h)
	t.Cleanup(srv.Close)
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	kurl := srv.URL + pathK("p", "c", "k")
	for i := range records {
		value := fmt.Sprintf("%04d", i) + strings.Repeat("v", size-4)
		body := fmt.Sprintf(`{"name":"ENV_%04d","type":"CREDENTIAL","value":%q}`, i, value)
		sendTo(t, http.MethodPost, kurl+"/records", body, tok, http.StatusCreated)
	}
	for _, name := range []string{"not-env", "1st"} {
		sendTo(t, http.MethodPost, kurl+"/records", fmt.Sprintf(`{"name":%q,"type":"INTEGER","value":1}`, name), tok, http.StatusCreated)
	}
	target := kurl + "?format=env&reveal=true"
	growth, _ := concurrentReads(t, target, tok, 4)
	t.Logf("4 x GET K?format=env: heap grew by %.1f MiB at most", float64(growth)/(1<<20))
	assert.Less(t, growth, uint64(streamHeapBound), "heap growth while streaming the environment file")

	req, err := http.NewRequest(http.MethodGet, target, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("X-Hds-Skipped-Records"), "the records whose names are not environment variable names")
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	require.Len(t, lines, records, "one line per environment variable")
	for i, line := range lines {
		want := fmt.Sprintf("ENV_%04d='%04d%s'", i, i, strings.Repeat("v", size-4))
		assert.True(t, line == want, "line %d is ENV_%04d with its revealed value", i, i)
	}
}

// TestSlowReaderOfBigExport: a client that reads a big export slowly, for
// longer than the server's WriteTimeout in all but never stalling for
// that long, gets the whole document: each chunk written moves the write
// deadline ahead.
func TestSlowReaderOfBigExport(t *testing.T) {
	records, size := 40, 500_000
	c := newServer(t, memoryKind)
	srv := httptest.NewUnstartedServer(c.h)
	srv.Config.WriteTimeout = time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	k := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: c.ids["alice"]}, Project: "p", Collection: "c", Cluster: "k"}
	for i := range records {
		k.Record = fmt.Sprintf("rec-%04d", i)
		value := json.RawMessage(fmt.Sprintf(`"%04d%s"`, i, strings.Repeat("v", size-4)))
		_, err := c.store.CreateRecord(t.Context(), k, &store.Record{Type: store.String, Value: value}, store.Write{})
		require.NoError(t, err)
	}
	for _, target := range []string{pathP("p") + "/export", pathK("p", "c", "k")} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+target, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		// 20 MB at 256 KiB per 25 ms: over 2 s in all, more than twice
		// the WriteTimeout.
		var body []byte
		buf := make([]byte, 256<<10)
		for {
			n, err := io.ReadFull(resp.Body, buf)
			body = append(body, buf[:n]...)
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF {
					t.Errorf("GET %s: reading after %d bytes: %v", target, len(body), err)
				}
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, target)
		assert.True(t, json.Valid(body), "GET %s: the whole document (%d bytes read)", target, len(body))
	}
}
