package clients

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regenerate is the hint of every drift failure.
const regenerate = "the generated files are stale: run go -C internal/e2e generate ./clients and commit the result"

// TestDocumentCurrent fails when openapi.json is not the document hds.New
// serves.
func TestDocumentCurrent(t *testing.T) {
	served, err := Document()
	require.NoError(t, err)
	committed, err := os.ReadFile("openapi.json")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(served, committed), "openapi.json differs from the served document: "+regenerate)
}

// TestClientsCurrent runs the pinned generators (go tool, no network once
// the modules are downloaded) on openapi.json, exactly as go generate
// does, and fails when their output differs from the committed clients.
func TestClientsCurrent(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be on PATH")
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %v: %s", args, out)
	}

	run("tool", "oapi-codegen", "-generate", "types,client", "-package", "oapiclient",
		"-o", filepath.Join(dir, "client.gen.go"), "openapi.json")
	sameFiles(t, "oapiclient", dir)

	ogenDir := filepath.Join(dir, "ogen")
	run("tool", "ogen", "-loglevel", "error", "-config", "ogen.yaml", "-target", ogenDir,
		"-package", "ogenclient", "-clean", "openapi.json")
	sameFiles(t, "ogenclient", ogenDir)
}

// sameFiles fails unless the directories hold the same files with the
// same bytes.
func sameFiles(t *testing.T, committed, generated string) {
	t.Helper()
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		slices.Sort(out)
		return out
	}
	want := names(generated)
	require.Equal(t, want, names(committed), "%s: %s", committed, regenerate)
	for _, name := range want {
		a, err := os.ReadFile(filepath.Join(committed, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(generated, name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s/%s: %s", committed, name, regenerate)
	}
}
