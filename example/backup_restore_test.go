package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadConfig writes the configuration of a SQLite database in dir, its
// keys left to keys.json, alice an administrator, rate limits out of the
// way of a write load.
func loadTestConfig(t *testing.T, dir string) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`{"addr": "127.0.0.1:0", "database_url": "sqlite:%s",
		"rate_limit": {"per_minute": 1000000, "per_hour": 1000000},
		"users": [{"username": "alice", "password": %q, "admin": true}]}`, filepath.Join(dir, "hds.db"), testPassword))
}

// write is one write of the load: the record's value before and after,
// at the revision the write made.
type write struct {
	revision int
	record   string
	old, new any
}

// importOne sets the record name of p/c/k to value (of type typ) with an
// import (merge), which answers the revision it made.
func importOne(t *testing.T, base, token, name, typ string, value any) (int, error) {
	doc := map[string]any{"format": "hds/1", "collections": map[string]any{"c": map[string]any{"clusters": map[string]any{
		"k": map[string]any{"records": map[string]any{name: map[string]any{"type": typ, "value": value}}}}}}}
	status, env := call(t, "POST", base+"/api/v1/projects/p/import?mode=merge", token, doc)
	if status != http.StatusOK {
		return 0, fmt.Errorf("import %s: %d %v", name, status, env)
	}
	return int(env["data"].(map[string]any)["revision"].(float64)), nil
}

// exportRevealed returns the records of project p's export, revealed
// (reveal=true unless masked), by collection/cluster/record, and its
// revision. A revealing export writes an audit entry (credential.reveal),
// which its revision counts: the revision of the data is a masked
// export's.
func exportRevealed(t *testing.T, base, token string, masked ...bool) (map[string]any, int) {
	t.Helper()
	query := "?reveal=true"
	if len(masked) > 0 && masked[0] {
		query = ""
	}
	req, err := http.NewRequest("GET", base+"/api/v1/projects/p/export"+query, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var doc struct {
		Revision    int `json:"revision"`
		Collections map[string]struct {
			Clusters map[string]struct {
				Records map[string]struct {
					Type  string `json:"type"`
					Value any    `json:"value"`
				} `json:"records"`
			} `json:"clusters"`
		} `json:"collections"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	out := map[string]any{}
	for cn, c := range doc.Collections {
		for kn, k := range c.Clusters {
			for rn, r := range k.Records {
				out[cn+"/"+kn+"/"+rn] = []any{r.Type, r.Value}
			}
		}
	}
	return out, doc.Revision
}

// TestBackupRestoreUnderLoad: a backup taken while a writer keeps
// writing (credentials among the records), restored into a fresh
// directory with the same keys.json, serves exactly the data of the
// original at the backup's revision: an export of each, credentials
// revealed, compared record by record.
func TestBackupRestoreUnderLoad(t *testing.T) {
	dirA := t.TempDir()
	a := start(t, []string{"-config", loadTestConfig(t, dirA)}, nil)
	token := login(t, a.url, "alice", testPassword)
	createProject(t, a.url, token, "p")

	// The records and their values: credentials and integers.
	const n = 8
	typeOf := func(i int) string {
		if i%2 == 0 {
			return "CREDENTIAL"
		}
		return "INTEGER"
	}
	valueOf := func(i, seq int) any {
		if i%2 == 0 {
			return fmt.Sprintf("secret-%d-%d", i, seq)
		}
		return float64(seq)
	}
	current := map[string]any{}
	for i := range n {
		name := fmt.Sprint("r", i)
		_, err := importOne(t, a.url, token, name, typeOf(i), valueOf(i, 0))
		require.NoError(t, err)
		current[name] = valueOf(i, 0)
	}

	var (
		mu     sync.Mutex
		log    []write
		werr   error
		stop   = make(chan struct{})
		wg     sync.WaitGroup
		writes = func() int { mu.Lock(); defer mu.Unlock(); return len(log) }
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for seq := 1; ; seq++ {
			select {
			case <-stop:
				return
			default:
			}
			i := seq % n
			name := fmt.Sprint("r", i)
			v := valueOf(i, seq)
			rev, err := importOne(t, a.url, token, name, typeOf(i), v)
			mu.Lock()
			if err != nil {
				werr = err
				mu.Unlock()
				return
			}
			log = append(log, write{revision: rev, record: name, old: current[name], new: v})
			current[name] = v
			mu.Unlock()
		}
	}()
	waitWrites := func(count int) {
		deadline := time.Now().Add(2 * time.Minute)
		for writes() < count {
			mu.Lock()
			failed := werr
			mu.Unlock()
			require.NoError(t, failed)
			require.True(t, time.Now().Before(deadline), "%d writes, want %d", writes(), count)
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitWrites(20)
	out := filepath.Join(t.TempDir(), "backup.db")
	_, _, err := runOnce(t, []string{"-config", loadTestConfig(t, dirA), "backup", out}, nil, "")
	require.NoError(t, err)
	before := writes()
	waitWrites(before + 20)
	close(stop)
	wg.Wait()
	require.NoError(t, werr)
	finalA, revA := exportRevealed(t, a.url, token)

	// A fresh directory with the same keys.
	dirB := t.TempDir()
	keys, err := os.ReadFile(filepath.Join(dirA, "keys.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dirB, "keys.json"), keys, 0o600))
	cfgB := loadTestConfig(t, dirB)
	stdout, _, err := runOnce(t, []string{"-config", cfgB, "restore", out}, nil, "")
	require.NoError(t, err)
	assert.Contains(t, stdout, "(there was no database before)")
	b := start(t, []string{"-config", cfgB}, nil)
	tokenB := login(t, b.url, "alice", testPassword)
	_, revB := exportRevealed(t, b.url, tokenB, true)
	gotB, _ := exportRevealed(t, b.url, tokenB)

	// A at the backup's revision: its final state with every later write
	// undone, newest first.
	mu.Lock()
	defer mu.Unlock()
	require.Greater(t, revB, log[0].revision, "the backup was taken after the first writes")
	require.Less(t, revB, revA, "and before the last ones")
	atB := map[string]any{}
	for k, v := range finalA {
		atB[k] = v
	}
	undone := 0
	for i := len(log) - 1; i >= 0 && log[i].revision > revB; i-- {
		w := log[i]
		key := "c/k/" + w.record
		atB[key] = []any{atB[key].([]any)[0], w.old}
		undone++
	}
	assert.Positive(t, undone, "writes after the backup")
	assert.Equal(t, atB, gotB, "the restored server serves the original's data at revision %d (credentials revealed)", revB)
	assert.Len(t, gotB, n)
}
