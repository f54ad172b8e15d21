package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSQLiteLostKeysSnapshotValues: a credential value that only a
// snapshot still keeps (its cluster deleted, the record and its history
// with it) is sealed data too: without keys.json the server refuses to
// start rather than make a new key over it (docs/api.md#backups-v13).
func TestSQLiteLostKeysSnapshotValues(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "hds.db")
	keys := filepath.Join(dir, "keys.json")
	env := map[string]string{"HDS_DATABASE_URL": "sqlite:" + db, "HDS_ADDR": "127.0.0.1:0"}
	s := start(t, nil, env)
	m := regexp.MustCompile(`user "admin" was created with the password:\n\s+(\S+)\n`).FindStringSubmatch(s.stdout.String())
	require.NotNil(t, m)
	token := login(t, s.url, "admin", m[1])
	for _, path := range []string{"/api/v1/projects/demo", "/api/v1/projects/demo/collections/prod", "/api/v1/projects/demo/collections/prod/clusters/db"} {
		status, body := call(t, "POST", s.url+path, token, nil)
		require.Equal(t, http.StatusCreated, status, "%s: %v", path, body)
	}
	status, body := call(t, "POST", s.url+"/api/v1/projects/demo/collections/prod/clusters/db/records", token,
		map[string]any{"name": "pw", "type": "CREDENTIAL", "value": "s3cret"})
	require.Equal(t, http.StatusCreated, status, body)
	status, body = call(t, "POST", s.url+"/api/v1/projects/demo/snapshots", token, map[string]any{"name": "before", "collection": "prod"})
	require.Equal(t, http.StatusCreated, status, body)
	status, body = call(t, "DELETE", s.url+"/api/v1/projects/demo/collections/prod/clusters/db", token, nil)
	require.Equal(t, http.StatusNoContent, status, body)
	require.NoError(t, s.stop(t))

	require.NoError(t, os.Remove(keys))
	_, _, err := runOnce(t, []string{"serve"}, env, "")
	require.Error(t, err, "a snapshot keeps a sealed value")
	assert.True(t, strings.HasPrefix(err.Error(), db+": no credential_key is configured or kept in "+keys), err.Error())
	_, err = os.Stat(keys)
	assert.ErrorIs(t, err, os.ErrNotExist, "no key is written")
}
