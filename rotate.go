package hds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/store"
)

// Rotation configures RotateCredentials.
type Rotation struct {
	// Primary is the key to re-seal under; Previous are older keys that
	// still open values sealed before. Each is 32 bytes.
	Primary  []byte
	Previous [][]byte
	// BatchSize is how many records are read at a time. Default 100.
	BatchSize int
	// After resumes an interrupted rotation after this record id (the
	// LastID of the last progress report). Default: from the start. The
	// final check covers every record either way.
	After string
	// Progress, when set, is called after each batch.
	Progress func(RotationProgress)
}

// RotationProgress reports how far a rotation has got.
type RotationProgress struct {
	Seen     int    // records holding a credential looked at so far
	Resealed int    // of which re-sealed (a value or a version) under the primary key
	LastID   string // the id to resume after
	// Remaining is what the final check found: the number of credential
	// records holding a value not sealed by the primary key. It is 0
	// whenever RotateCredentials returns nil.
	Remaining int
	// WebhooksResealed counts the webhook secrets re-sealed under the
	// primary key, or sealed for the first time (kept in clear by an
	// earlier version); WebhooksRemaining those the final check found
	// not sealed by the primary key (0 whenever RotateCredentials returns
	// nil). Both stay 0 for a store without webhooks.
	WebhooksResealed, WebhooksRemaining int
	// SnapshotsResealed counts the credential values kept by snapshots
	// (docs/api.md#snapshots-and-rollback-v13) re-sealed under the
	// primary key; SnapshotsRemaining those the final check found not
	// sealed by it (0 whenever RotateCredentials returns nil). Both stay
	// 0 for a store without snapshots.
	SnapshotsResealed, SnapshotsRemaining int
}

// ErrRotationIncomplete is returned by RotateCredentials when its final
// check finds values still sealed with a key other than the primary:
// written meanwhile by a server that does not seal with the new key yet.
// Running the rotation again, once every server seals with the new key,
// re-seals them.
var ErrRotationIncomplete = errors.New("credential values remain sealed with another key")

// RotateCredentials re-seals every CREDENTIAL and []CREDENTIAL value in s
// under the primary key, in batches, so that older keys can then be
// dropped: those of records and their history, webhook secrets, and the
// values snapshots keep (store.Snapshots; not a change either).
//
// It walks the records by id (Store.FindCredentialRecords) and re-seals
// each by id with Store.ResealRecord, its current value and every
// credential version its history keeps: that is not a change, so versions
// and entity tags stay as they are, and renames of the record or of its
// containers while it runs do not matter; a record deleted meanwhile is
// skipped. It ends with a check of every credential record, from the
// first id whatever Rotation.After says, and returns
// ErrRotationIncomplete, with RotationProgress.Remaining, when any value
// is still sealed with another key. Servers must already seal with the
// new primary key (and open with the old one as a previous key) before a
// rotation starts: a server still sealing with the old key writes what
// the check then finds.
//
// Values already sealed by the primary key are left alone, so a rotation
// can be run again, or resumed with Rotation.After, at no cost. A value
// that no key of the ring opens stops the rotation with an error naming
// the record.
func RotateCredentials(ctx context.Context, s store.Store, r Rotation) (RotationProgress, error) {
	ring, err := sealing.NewKeyring(r.Primary, r.Previous...)
	if err != nil {
		return RotationProgress{}, fmt.Errorf("hds: rotate credentials: %w", err)
	}
	batch := r.BatchSize
	if batch <= 0 {
		batch = 100
	}
	p := RotationProgress{LastID: r.After}
	err = eachCredentialRecord(ctx, s, r.After, batch, func(id string) error {
		changed, err := s.ResealRecord(ctx, id, func(t store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			return ring.ResealValue(t, id, v)
		})
		switch {
		case err == nil && changed:
			p.Resealed++
		case err == nil, errors.Is(err, store.ErrNotFound):
			// Already under the primary key, or deleted.
		default:
			return err
		}
		p.Seen++
		p.LastID = id
		return nil
	}, func() {
		if r.Progress != nil {
			r.Progress(p)
		}
	})
	if err != nil {
		return p, fmt.Errorf("hds: rotate credentials: %w", err)
	}
	hooks, _ := s.(store.Webhooks)
	if hooks != nil {
		p.WebhooksResealed, err = hooks.ResealWebhooks(ctx, func(w *store.Webhook) ([]byte, bool, error) {
			return resealSecret(ring, w)
		})
		if err != nil {
			return p, fmt.Errorf("hds: rotate credentials: webhook secrets: %w", err)
		}
		if r.Progress != nil {
			r.Progress(p)
		}
	}
	snaps, _ := s.(store.Snapshots)
	if snaps != nil {
		p.SnapshotsResealed, err = snaps.ResealSnapshots(ctx, func(id string, t store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			out, changed, err := ring.ResealValue(t, id, v)
			if err != nil {
				return nil, false, fmt.Errorf("a snapshot's value of record %s does not open with any key given", id)
			}
			return out, changed, nil
		})
		if err != nil {
			return p, fmt.Errorf("hds: rotate credentials: snapshots: %w", err)
		}
		if r.Progress != nil {
			r.Progress(p)
		}
	}
	n, err := countStale(ctx, s, ring, batch)
	p.Remaining = n
	if err != nil {
		return p, fmt.Errorf("hds: rotate credentials: final check: %w", err)
	}
	if hooks != nil {
		_, err = hooks.ResealWebhooks(ctx, func(w *store.Webhook) ([]byte, bool, error) {
			if _, stale, err := resealSecret(ring, w); stale || err != nil {
				p.WebhooksRemaining++
			}
			return nil, false, nil
		})
		if err != nil {
			return p, fmt.Errorf("hds: rotate credentials: final check: webhook secrets: %w", err)
		}
	}
	if snaps != nil {
		_, err = snaps.ResealSnapshots(ctx, func(id string, t store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			if _, stale, err := ring.ResealValue(t, id, v); stale || err != nil {
				p.SnapshotsRemaining++
			}
			return nil, false, nil
		})
		if err != nil {
			return p, fmt.Errorf("hds: rotate credentials: final check: snapshots: %w", err)
		}
	}
	if n > 0 || p.WebhooksRemaining > 0 || p.SnapshotsRemaining > 0 {
		return p, fmt.Errorf("hds: rotate credentials: final check: %d records, %d webhook secrets and %d snapshot values: %w",
			n, p.WebhooksRemaining, p.SnapshotsRemaining, ErrRotationIncomplete)
	}
	return p, nil
}

// resealSecret returns the secret of w sealed under the primary key of
// ring, and whether it changed: a secret in clear (an earlier version's)
// is sealed, one sealed by another key of ring is re-sealed, one sealed by
// the primary key is left alone. A sealed secret that no key of ring
// opens is an error naming the webhook. Secrets are sealed as the
// handler seals them: as a CREDENTIAL value (a JSON string) bound to
// the webhook id.
func resealSecret(ring *sealing.Keyring, w *store.Webhook) ([]byte, bool, error) {
	if w.SecretSealed {
		out, changed, err := ring.ResealValue(store.Credential, w.ID, w.Secret)
		if err != nil {
			return nil, false, fmt.Errorf("webhook %s: its secret does not open with any key given", w.ID)
		}
		return out, changed, nil
	}
	plain, err := json.Marshal(string(w.Secret))
	if err != nil {
		return nil, false, err
	}
	out, err := ring.SealValue(store.Credential, w.ID, plain)
	return out, err == nil, err
}

// countStale counts the records of s holding a credential value, current
// or kept in the history, that is not sealed by the primary key of ring
// (or that no key of ring opens). It reads each value through
// Store.ResealRecord with a resealer that never asks for a write.
func countStale(ctx context.Context, s store.Store, ring *sealing.Keyring, batch int) (int, error) {
	n := 0
	err := eachCredentialRecord(ctx, s, "", batch, func(id string) error {
		stale := false
		_, err := s.ResealRecord(ctx, id, func(t store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			if _, changed, err := ring.ResealValue(t, id, v); changed || err != nil {
				stale = true
			}
			return nil, false, nil
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if stale {
			n++
		}
		return nil
	}, nil)
	return n, err
}

// eachCredentialRecord calls fn with the id of every record of s holding
// a credential, in id order after the id after ("" for the first),
// reading batch refs at a time, and calls batchDone (when not nil) after
// each batch that held any. It stops at the first error.
func eachCredentialRecord(ctx context.Context, s store.Store, after string, batch int, fn func(id string) error, batchDone func()) error {
	for {
		refs, err := s.FindCredentialRecords(ctx, after, batch)
		if err != nil {
			return err
		}
		for _, ref := range refs {
			if err := fn(ref.Record.ID); err != nil {
				return err
			}
			after = ref.Record.ID
		}
		if batchDone != nil && len(refs) > 0 {
			batchDone()
		}
		if len(refs) < batch {
			return nil
		}
	}
}
