package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hds-go/hds"
)

const credentialsUsage = `credentials rotate [AFTER_ID]   re-seal every credential under the primary key
`

// runCredentials runs "credentials rotate [AFTER_ID]".
func runCredentials(ctx context.Context, e *env, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("credentials needs an action: rotate")
	case args[0] != "rotate":
		return usagef("unknown credentials action %q: use rotate", args[0])
	case len(args) > 2:
		return usagef("credentials rotate takes at most one argument, the record id to resume after")
	}
	var after string
	if len(args) == 2 {
		after = args[1]
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	return rotateCredentials(ctx, cfg, after, e)
}

// rotateCredentials re-seals every credential of the configured database
// under the primary credential key, in batches, reporting progress, then
// checks that no value is left sealed with another key. It prints "done"
// only when the check finds none; otherwise its error says how many
// remain, and the program exits non-zero.
func rotateCredentials(ctx context.Context, cfg *config, after string, e *env) error {
	switch cfg.storeKind {
	case storeMemory:
		return fmt.Errorf("credentials rotate: %s selects the in-memory store, which lives only "+
			"inside a running server process; configure database_url (or HDS_DATABASE_URL)", cfg.databaseURLFrom)
	}
	noKey := errors.New("credentials rotate: no credential key is configured: set security.credential_key " +
		"(or HDS_CREDENTIAL_KEY) to the new key and list the old ones in security.previous_credential_keys")
	if cfg.storeKind != storeSQLite && len(cfg.credentialKeys) == 0 {
		return noKey
	}
	st, _, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("credentials rotate: %w", err)
	}
	defer closeStore()
	if cfg.storeKind == storeSQLite {
		// The key kept in keys.json is the primary key, or a previous
		// one once a key is configured.
		if _, err := standaloneKeys(ctx, cfg, st); err != nil {
			return fmt.Errorf("credentials rotate: %w", err)
		}
	}
	if len(cfg.credentialKeys) == 0 {
		return noKey
	}
	p, err := hds.RotateCredentials(ctx, st, hds.Rotation{
		Primary:   cfg.credentialKeys[0],
		Previous:  cfg.credentialKeys[1:],
		BatchSize: 500,
		After:     after,
		Progress: func(p hds.RotationProgress) {
			fmt.Fprintf(e.stdout, "%d credential records seen, %d re-sealed (resume after %s)\n", p.Seen, p.Resealed, p.LastID)
		},
	})
	switch {
	case errors.Is(err, hds.ErrRotationIncomplete):
		return fmt.Errorf("credentials rotate: %d credential records are still sealed with another key "+
			"(and %d webhook secrets and %d values kept by snapshots are not sealed by the new key): "+
			"make sure every server runs with the new key as security.credential_key (and the old ones as "+
			"security.previous_credential_keys), then run credentials rotate again", p.Remaining, p.WebhooksRemaining,
			p.SnapshotsRemaining)
	case err != nil && p.LastID != "" && p.LastID != after:
		return fmt.Errorf("credentials rotate: %w (run again with AFTER_ID %s to resume)", err, p.LastID)
	case err != nil:
		return fmt.Errorf("credentials rotate: %w", err)
	}
	fmt.Fprintf(e.stdout, "done: %d credential records seen, %d re-sealed under the primary key, %d webhook secrets "+
		"and %d values kept by snapshots sealed under it, none left under another key; the previous keys can now be removed\n",
		p.Seen, p.Resealed, p.WebhooksResealed, p.SnapshotsResealed)
	return nil
}
