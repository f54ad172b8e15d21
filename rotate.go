package hds

import (
	"context"
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
	// LastID of the last progress report). Default: from the start.
	After string
	// Progress, when set, is called after each batch.
	Progress func(RotationProgress)
}

// RotationProgress reports how far a rotation has got.
type RotationProgress struct {
	Seen     int    // credential records looked at so far
	Resealed int    // of which re-sealed under the primary key
	LastID   string // the id to resume after
}

// RotateCredentials re-seals every CREDENTIAL and []CREDENTIAL value in s
// under the primary key, in batches, so that older keys can then be
// dropped. Values already sealed by the primary key are left alone, so a
// rotation can be run again, or resumed with Rotation.After, at no cost.
// Each re-sealed record is written with Store.UpdateRecord and so counts
// as an update (its version grows by one). A value that no key of the ring
// opens stops the rotation with an error naming the record.
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
	for {
		refs, err := s.FindCredentialRecords(ctx, p.LastID, batch)
		if err != nil {
			return p, fmt.Errorf("hds: rotate credentials: %w", err)
		}
		for _, ref := range refs {
			_, err := s.UpdateRecord(ctx, ref.Path, func(cur *store.Record) error {
				if !cur.Type.IsCredential() { // changed since it was listed
					return store.ErrUnchanged
				}
				v, changed, err := ring.ResealValue(cur.Type, cur.ID, cur.Value)
				if err != nil {
					return err
				}
				if !changed {
					return store.ErrUnchanged
				}
				cur.Value = v
				return nil
			})
			switch {
			case err == nil:
				p.Resealed++
			case errors.Is(err, store.ErrUnchanged), errors.Is(err, store.ErrNotFound):
				// Already under the primary key, no longer a credential, or deleted.
			default:
				return p, fmt.Errorf("hds: rotate credentials: %w", err)
			}
			p.Seen++
			p.LastID = ref.Record.ID
		}
		if r.Progress != nil && len(refs) > 0 {
			r.Progress(p)
		}
		if len(refs) < batch {
			return p, nil
		}
	}
}
