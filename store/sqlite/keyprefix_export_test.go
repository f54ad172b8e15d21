package sqlite

import (
	"encoding/json"

	"github.com/hds-go/hds/store"
)

// UncutRecordKeys returns the vkey, rkey, vtext and vtext_lower a record
// had before migration 0007 (keys whole, every text lower-cased), for
// its upgrade test.
func UncutRecordKeys(t store.DataType, v json.RawMessage) (vk []byte, rk any, vtext any, vlower any) {
	k := store.KeyOf(t, v)
	vk = vkey(k)
	if b := rkey(t, k); b != nil {
		rk = b
	}
	if k.HasText {
		vtext, vlower = k.Text, lower(k.Text)
	}
	return vk, rk, vtext, vlower
}
