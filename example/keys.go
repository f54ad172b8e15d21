package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// keysFileName is the file, beside the SQLite database, that keeps the
// keys the configuration does not give
// (docs/api.md#the-standalone-server).
const keysFileName = "keys.json"

// keysFile is the content of keys.json: standard base64 of 32 random
// bytes each.
type keysFile struct {
	JWTSecret     string `json:"jwt_secret,omitempty"`
	CredentialKey string `json:"credential_key,omitempty"`
}

// keysPath is the path of keys.json beside the SQLite database file.
func keysPath(cfg *config) string { return filepath.Join(filepath.Dir(cfg.sqlitePath), keysFileName) }

// standaloneKeys gives the SQLite store the keys the configuration
// lacks: a jwt_secret or credential_key not configured is read from
// keys.json beside the database file, or generated once and written there
// (0600), so that tokens and sealed values survive a restart. A
// credential key kept there that the configuration no longer uses as its
// primary key is added to the previous keys, so that what it sealed can
// still be read (and re-sealed by credentials rotate). It reports whether
// the file is in use. Keys never appear in its errors.
//
// A credential key is generated only while the database holds no
// CREDENTIAL value: one that does lost its key with keys.json (a backup
// restored without it), and a new key would make every reveal fail.
func standaloneKeys(ctx context.Context, cfg *config, st store.Store) (used bool, err error) {
	path := keysPath(cfg)
	var kf keysFile
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("%s: %w", path, err)
	default:
		if err := json.Unmarshal(data, &kf); err != nil {
			return false, fmt.Errorf("%s is not a valid keys file (a JSON object with jwt_secret and credential_key): "+
				"restore it from the backup made with the database, or move it away to have new keys generated "+
				"(tokens then end, and sealed values cannot be read)", path)
		}
	}
	changed := false
	if cfg.security.JWTSecret == "" {
		if kf.JWTSecret == "" {
			kf.JWTSecret, changed = randomKey(), true
		}
		cfg.security.JWTSecret, used = kf.JWTSecret, true
	}
	if kf.CredentialKey == "" && len(cfg.credentialKeys) == 0 {
		sealed, err := holdsSealedValues(ctx, st)
		if err != nil {
			return false, fmt.Errorf("%s: %w", cfg.sqlitePath, err)
		}
		if sealed {
			return false, fmt.Errorf("%s: no credential_key is configured or kept in %s, but the database holds CREDENTIAL values sealed with one: "+
				"restore %s from the backup made with the database, or configure security.credential_key "+
				"(a new key lets the server start; the values sealed with the lost one cannot be read)", cfg.sqlitePath, path, path)
		}
		kf.CredentialKey, changed = randomKey(), true
	}
	if kf.CredentialKey != "" {
		k, err := decodeKey(path+": credential_key", kf.CredentialKey)
		if err != nil {
			return false, err
		}
		switch {
		case len(cfg.credentialKeys) == 0:
			cfg.credentialKeys, used = [][]byte{k}, true
		case !slices.ContainsFunc(cfg.credentialKeys, func(c []byte) bool { return string(c) == string(k) }):
			cfg.credentialKeys, used = append(cfg.credentialKeys, k), true
		}
	}
	if changed {
		if err := writeKeys(path, kf); err != nil {
			return false, err
		}
	}
	return used, nil
}

// randomKey returns the standard base64 of hds.CredentialKeyBytes random
// bytes: a credential key, or a JWT secret of 44 characters.
func randomKey() string {
	k := make([]byte, hds.CredentialKeyBytes)
	_, _ = rand.Read(k) // crypto/rand never fails on supported platforms
	return base64.StdEncoding.EncodeToString(k)
}

// writeKeys writes kf to path (0600) whole or not at all: a temporary
// file, synced, renamed over path, and the directory synced.
func writeKeys(path string, kf keysFile) error {
	data, err := json.MarshalIndent(kf, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, keysFileName+".*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// errFound stops a walk at the first value found.
var errFound = errors.New("found")

// holdsSealedValues reports whether st holds a value sealed with a
// credential key: a CREDENTIAL record's (current or in its history), a
// value a snapshot keeps, or a webhook's secret. A server never makes a
// new key over any of them (docs/api.md#backups-v13).
func holdsSealedValues(ctx context.Context, st store.Store) (bool, error) {
	records, err := st.FindCredentialRecords(ctx, "", 1)
	if err != nil || len(records) > 0 {
		return len(records) > 0, err
	}
	if snaps, ok := st.(store.Snapshots); ok {
		_, err = snaps.ResealSnapshots(ctx, func(string, store.DataType, json.RawMessage) (json.RawMessage, bool, error) {
			return nil, false, errFound
		})
	}
	if hooks, ok := st.(store.Webhooks); ok && err == nil {
		_, err = hooks.ResealWebhooks(ctx, func(w *store.Webhook) ([]byte, bool, error) {
			if w.SecretSealed {
				return nil, false, errFound
			}
			return nil, false, nil
		})
	}
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}
