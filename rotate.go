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
	// LastID of the last progress report). Default: from the start. The
	// final check covers every record either way.
	After string
	// Progress, when set, is called after each batch.
	Progress func(RotationProgress)
}

// RotationProgress reports how far a rotation has got.
type RotationProgress struct {
	Seen     int    // credential records looked at so far
	Resealed int    // of which re-sealed under the primary key
	LastID   string // the id to resume after
	// Remaining is what the final check found: the number of credential
	// records holding a value not sealed by the primary key. It is 0
	// whenever RotateCredentials returns nil.
	Remaining int
}

// ErrRotationIncomplete is returned by RotateCredentials when its final
// check finds values still sealed with a key other than the primary:
// written meanwhile by a server that does not seal with the new key yet,
// or renamed or moved more often than the rotation could follow. Running
// the rotation again, once every server seals with the new key, re-seals
// them.
var ErrRotationIncomplete = errors.New("credential values remain sealed with another key")

// errUnchanged aborts an update that has nothing to do.
var errUnchanged = errors.New("unchanged")

// maxRelookups is how many times in a row one record may be found renamed
// or moved before the walk leaves it to the final check.
const maxRelookups = 10

// RotateCredentials re-seals every CREDENTIAL and []CREDENTIAL value in s
// under the primary key, so that older keys can then be dropped.
//
// It walks the records by id, in batches (Store.FindCredentialRecords).
// A record not found under the path its batch gave (its project,
// collection or cluster renamed, or itself moved or deleted, since the
// batch was read) makes it read the batch again from that id, which finds
// the record under its current path or finds it gone; so renames, moves
// and deletes while it runs leave nothing behind. It ends with a check
// of every credential record, from the first id whatever Rotation.After
// says, and returns ErrRotationIncomplete, with
// RotationProgress.Remaining, when any value is still sealed with another
// key. Servers must already seal with the new primary key (and open with
// the old one as a previous key) before a rotation starts: a server still
// sealing with the old key writes what the check then finds.
//
// Values already sealed by the primary key are left alone, so a rotation
// can be run again, or resumed with Rotation.After, at no cost. Each
// re-sealed record is written with Store.UpdateRecord and so counts as an
// update (its version grows by one). A value that no key of the ring
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
	var relookupID string // the record last found under a stale path
	relookups := 0
	for {
		refs, err := s.FindCredentialRecords(ctx, p.LastID, batch)
		if err != nil {
			return p, fmt.Errorf("hds: rotate credentials: %w", err)
		}
		stale := false
		for _, ref := range refs {
			id := ref.Record.ID
			resealed, err := resealRecord(ctx, s, ring, ref.Path)
			if errors.Is(err, store.ErrNotFound) {
				if id != relookupID {
					relookupID, relookups = id, 0
				}
				if relookups++; relookups <= maxRelookups {
					stale = true // read the batch again from p.LastID
					break
				}
				err = nil // left to the final check
			}
			if err != nil {
				return p, fmt.Errorf("hds: rotate credentials: %w", err)
			}
			if resealed {
				p.Resealed++
			}
			p.Seen++
			p.LastID = id
		}
		if stale {
			continue
		}
		if r.Progress != nil && len(refs) > 0 {
			r.Progress(p)
		}
		if len(refs) < batch {
			break
		}
	}
	n, err := countStale(ctx, s, ring, batch)
	p.Remaining = n
	if err != nil {
		return p, fmt.Errorf("hds: rotate credentials: final check: %w", err)
	}
	if n > 0 {
		return p, fmt.Errorf("hds: rotate credentials: final check: %d records: %w", n, ErrRotationIncomplete)
	}
	return p, nil
}

// resealRecord re-seals the value of the record at path under the primary
// key, and reports whether it wrote anything.
func resealRecord(ctx context.Context, s store.Store, ring *sealing.Keyring, path store.Path) (bool, error) {
	_, err := s.UpdateRecord(ctx, path, func(cur *store.Record) error {
		if !cur.Type.IsCredential() { // changed since it was listed
			return errUnchanged
		}
		v, changed, err := ring.ResealValue(cur.Type, cur.ID, cur.Value)
		if err != nil {
			return err
		}
		if !changed {
			return errUnchanged
		}
		cur.Value = v
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return false, nil
	}
	return err == nil, err
}

// countStale counts the credential records of s holding a value that is
// not sealed by the primary key of ring (or that no key of ring opens).
func countStale(ctx context.Context, s store.Store, ring *sealing.Keyring, batch int) (int, error) {
	n, after := 0, ""
	for {
		refs, err := s.FindCredentialRecords(ctx, after, batch)
		if err != nil {
			return n, err
		}
		for _, ref := range refs {
			rec := ref.Record
			if _, changed, err := ring.ResealValue(rec.Type, rec.ID, rec.Value); changed || err != nil {
				n++
			}
			after = rec.ID
		}
		if len(refs) < batch {
			return n, nil
		}
	}
}
