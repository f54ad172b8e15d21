package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hds-go/hds/internal/sealing"
)

// The offline cache of run -cache
// (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache): the
// environment of the last successful fetch, sealed with AES-256-GCM under
// HDS_CACHE_KEY (internal/sealing, with the cluster as the additional
// authenticated data), so that CMD can start while the server cannot be
// reached.

// cacheKeyVar is the environment variable holding the cache's key.
const cacheKeyVar = "HDS_CACHE_KEY"

// envCache is the cache file of one cluster.
type envCache struct {
	path    string
	cluster string // P/C/K, sealed with the content: a cache of another cluster does not open
	ring    *sealing.Keyring
}

// cacheContent is what the cache file seals.
type cacheContent struct {
	WrittenAt time.Time `json:"written_at"`
	Vars      []string  `json:"vars"`
}

// newEnvCache returns the cache at path for cluster, sealed with the key
// in HDS_CACHE_KEY. Its errors never show the key.
func newEnvCache(e *env, path, cluster string) (*envCache, error) {
	keyText := e.getenv(cacheKeyVar)
	if keyText == "" {
		return nil, fmt.Errorf("-cache needs %s, the standard base64 of 32 bytes (make one with: openssl rand -base64 32)", cacheKeyVar)
	}
	key, err := decodeKey(cacheKeyVar, keyText)
	if err != nil {
		return nil, err
	}
	ring, err := sealing.NewKeyring(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cacheKeyVar, err)
	}
	return &envCache{path: path, cluster: cluster, ring: ring}, nil
}

// aad binds the sealed content to the cluster.
func (c *envCache) aad() string { return "hds example run cache\x00" + c.cluster }

// write replaces the cache with vars, written at now: a file of mode
// 0600 in the same directory, renamed over the cache, so that a reader
// sees the old content or the new one, never a part.
func (c *envCache) write(vars []string, now time.Time) error {
	plain, err := json.Marshal(cacheContent{WrittenAt: now.UTC(), Vars: vars})
	if err != nil {
		return err
	}
	sealed := c.ring.Seal(c.aad(), plain)
	tmp, err := os.CreateTemp(filepath.Dir(c.path), "."+filepath.Base(c.path)+".*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("write the cache %s: %w", c.path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	_, err = tmp.WriteString(sealed + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		return fmt.Errorf("write the cache %s: %w", c.path, err)
	}
	return nil
}

// errCacheOpen is a cache that does not open with the key.
var errCacheOpen = errors.New("does not open with " + cacheKeyVar + " (another key, another cluster, or damaged)")

// read returns the cached variables and when they were written.
func (c *envCache) read() ([]string, time.Time, error) {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("the cache %s cannot be read: %w", c.path, errors.Unwrap(err))
	}
	plain, err := c.ring.Open(c.aad(), string(trimNewline(b)))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("the cache %s %w", c.path, errCacheOpen)
	}
	var content cacheContent
	if err := json.Unmarshal(plain, &content); err != nil {
		return nil, time.Time{}, fmt.Errorf("the cache %s %w", c.path, errCacheOpen)
	}
	return content.Vars, content.WrittenAt, nil
}

// trimNewline drops one trailing newline.
func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}
