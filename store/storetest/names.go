package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/store"
)

// invalidNames break one rule of store.ValidateName each.
var invalidNames = []struct{ why, name string }{
	{"empty", ""},
	{"slash", "a/b"},
	{"dot", "."},
	{"dot dot", ".."},
	{"leading space", " lead"},
	{"trailing space", "trail "},
	{"leading no-break space", "\u00a0lead"},
	{"trailing ideographic space", "trail\u3000"},
	{"U+0000", "bad\x00"},
	{"tab", "a\tb"},
	{"newline", "a\nb"},
	{"DEL", "a\x7fb"},
	{"C1 control", "a\u0085b"},
	{"invalid UTF-8", "a\xffb"},
	{"encoded surrogate", "\xed\xa0\x80"},
	{"129 code points", strings.Repeat("a", store.MaxNameLength+1)},
	{"129 two-byte code points", strings.Repeat("é", store.MaxNameLength+1)},
}

// nameWrite is a Store method that writes a new name at a level: a create
// or a rename.
type nameWrite struct {
	op    string
	level int
	do    func(f *fixture, name string) error
}

var nameWrites = []nameWrite{
	{"CreateProject", 0, func(f *fixture, name string) error {
		_, err := f.s.CreateProject(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: name})
		return err
	}},
	{"CreateCollection", 1, func(f *fixture, name string) error {
		_, err := f.s.CreateCollection(f.ctx, setLevel(f.path(1), 1, name))
		return err
	}},
	{"CreateCluster", 2, func(f *fixture, name string) error {
		_, err := f.s.CreateCluster(f.ctx, setLevel(f.path(2), 2, name))
		return err
	}},
	{"CreateRecord", 3, func(f *fixture, name string) error {
		_, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, name), &store.Record{Type: store.Null, Value: json.RawMessage("null")}, store.Write{})
		return err
	}},
	{"RenameProject", 0, func(f *fixture, name string) error {
		_, err := f.s.RenameProject(f.ctx, f.path(0), name)
		return err
	}},
	{"RenameCollection", 1, func(f *fixture, name string) error {
		_, err := f.s.RenameCollection(f.ctx, f.path(1), name)
		return err
	}},
	{"RenameCluster", 2, func(f *fixture, name string) error {
		_, err := f.s.RenameCluster(f.ctx, f.path(2), name)
		return err
	}},
	{"UpdateRecordRename", 3, func(f *fixture, name string) error {
		_, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			r.Name = name
			return nil
		})
		return err
	}},
	{"UpdateRecordRenameAndValue", 3, func(f *fixture, name string) error {
		_, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			r.Name, r.Type, r.Value = name, store.String, json.RawMessage(`"changed"`)
			return nil
		})
		return err
	}},
}

// testInvalidNames checks that every create and rename, at every level,
// refuses each invalid name with a *store.ValidationError and changes
// nothing.
func testInvalidNames(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, w := range nameWrites {
		t.Run(w.op, func(t *testing.T) {
			f := newFixture(t, newStore(t))
			for _, tc := range invalidNames {
				err := w.do(f, tc.name)
				var ve *store.ValidationError
				if assert.ErrorAs(t, err, &ve, "%s with an invalid name (%s) %q: want a *store.ValidationError", w.op, tc.why, tc.name) {
					assert.NotEmpty(t, ve.Message, "%s with an invalid name (%s): the ValidationError says which rule failed", w.op, tc.why)
				}
				assert.NotErrorIs(t, err, store.ErrUnavailable, "%s with an invalid name (%s) is not ErrUnavailable", w.op, tc.why)
			}
			f.assertUnchanged(t, w.op+" with invalid names")
		})
	}
}
