package sealing

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hds-go/hds/store"
)

var (
	credType  = store.Credential
	credArray = store.ArrayOf(store.Credential)
)

const recordID = "0195a8a0-0000-7000-8000-000000000001"

func newKey(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, KeyBytes)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func mustRing(t testing.TB, primary []byte, previous ...[]byte) *Keyring {
	t.Helper()
	k, err := NewKeyring(primary, previous...)
	if err != nil {
		t.Fatalf("NewKeyring: %v", err)
	}
	return k
}

// keyForms are the ways a key could show up in text.
func keyForms(key []byte) []string {
	return []string{
		string(key),
		base64.StdEncoding.EncodeToString(key),
		base64.RawStdEncoding.EncodeToString(key),
		base64.URLEncoding.EncodeToString(key),
		base64.RawURLEncoding.EncodeToString(key),
		hex.EncodeToString(key),
	}
}

// noLeak reports an error whose text holds any of secrets.
func noLeak(t *testing.T, what string, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q contains %q", what, err, s)
		}
	}
}

func TestNewKeyringKeySize(t *testing.T) {
	good := newKey(t)
	for _, n := range []int{0, 1, 16, 24, 31, 33, 64} {
		bad := bytes.Repeat([]byte{0x5a}, n)
		if n == 0 {
			bad = nil
		}
		if _, err := NewKeyring(bad); err == nil {
			t.Errorf("NewKeyring with a primary key of %d bytes: no error", n)
		} else {
			noLeak(t, "bad key size", err, keyForms(bad)[1:]...)
		}
		if _, err := NewKeyring(good, bad); err == nil {
			t.Errorf("NewKeyring with a previous key of %d bytes: no error", n)
		} else {
			noLeak(t, "bad previous key size", err, keyForms(good)...)
		}
		if _, err := NewKeyring(good, good, bad); err == nil {
			t.Errorf("NewKeyring with a second previous key of %d bytes: no error", n)
		}
	}
	if _, err := NewKeyring(good); err != nil {
		t.Errorf("NewKeyring with a 32-byte key: %v", err)
	}
	if _, err := NewKeyring(good, newKey(t), newKey(t)); err != nil {
		t.Errorf("NewKeyring with three 32-byte keys: %v", err)
	}
	if _, err := NewKeyring(good, good); err != nil {
		t.Errorf("NewKeyring with the primary key listed again as previous: %v", err)
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	k := mustRing(t, newKey(t))
	for _, plain := range []string{"s3cret", "", "ünïcødé 🔑", strings.Repeat("long-", 10_000), "\x00\xff binary"} {
		sealed := k.Seal(recordID, []byte(plain))
		if !strings.HasPrefix(sealed, "hds1:") || !IsSealed(sealed) {
			t.Errorf("sealed value %q lacks the hds1: form", sealed)
		}
		if plain != "" && strings.Contains(sealed, plain) {
			t.Errorf("sealed value holds the plain text %q", plain)
		}
		got, err := k.Open(recordID, sealed)
		if err != nil {
			t.Errorf("Open(Seal(%.20q)): %v", plain, err)
			continue
		}
		if string(got) != plain {
			t.Errorf("Open(Seal(%.20q)) = %.20q", plain, got)
		}
	}
}

func TestOpenWrongAAD(t *testing.T) {
	k := mustRing(t, newKey(t))
	sealed := k.Seal(recordID, []byte("s3cret"))
	for _, other := range []string{"", "0195a8a0-0000-7000-8000-000000000002", strings.ToUpper(recordID), recordID + "[0]", recordID + " "} {
		got, err := k.Open(other, sealed)
		if !errors.Is(err, ErrOpen) {
			t.Errorf("Open with record id %q: %q, %v; want ErrOpen", other, got, err)
		}
		if got != nil {
			t.Errorf("Open with record id %q returned %q", other, got)
		}
		noLeak(t, "wrong AAD", err, "s3cret", sealed)
	}
}

func TestOpenTampered(t *testing.T) {
	k := mustRing(t, newKey(t))
	sealed := k.Seal(recordID, []byte("s3cret"))
	id, data, ok := split(sealed)
	if !ok {
		t.Fatalf("split(%q) failed", sealed)
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		t.Fatalf("payload is not base64url: %v", err)
	}
	var cases []string
	for i := range raw { // every byte of nonce, ciphertext and tag
		b := bytes.Clone(raw)
		b[i] ^= 0x01
		cases = append(cases, prefix+id+":"+base64.RawURLEncoding.EncodeToString(b))
	}
	cases = append(cases,
		prefix+id+":"+base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]), // truncated
		prefix+id+":"+base64.RawURLEncoding.EncodeToString(append(bytes.Clone(raw), 0)),
		prefix+id+":"+base64.RawURLEncoding.EncodeToString(raw[:12]), // nonce only
		prefix+id+":",
		prefix+id+":"+data+"!", // not base64url
		prefix+id+":"+strings.ToUpper(data),
		prefix+id+data, // no separator
		"hds2:"+id+":"+data,
		id+":"+data,
		data,
		"",
		"s3cret",
		prefix,
	)
	for _, c := range cases {
		got, err := k.Open(recordID, c)
		if !errors.Is(err, ErrOpen) || got != nil {
			t.Errorf("Open of tampered %q: %q, %v; want ErrOpen", c, got, err)
		}
		noLeak(t, "tampered", err, "s3cret", c)
	}
}

func TestOpenUnknownKey(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	r1 := mustRing(t, k1)
	sealed := r1.Seal(recordID, []byte("s3cret"))
	got, err := mustRing(t, k2).Open(recordID, sealed)
	if !errors.Is(err, ErrOpen) || got != nil {
		t.Errorf("Open by a ring without the sealing key: %q, %v; want ErrOpen", got, err)
	}
	noLeak(t, "unknown key", err, append(keyForms(k1), "s3cret", sealed)...)

	// A value claiming the id of a key in the ring, but sealed by another
	// key, does not open either.
	_, data, _ := split(sealed)
	forged := prefix + KeyID(k2) + ":" + data
	if _, err := mustRing(t, k2).Open(recordID, forged); !errors.Is(err, ErrOpen) {
		t.Errorf("Open of a value relabelled with the ring's key id: %v, want ErrOpen", err)
	}

	// Listed as a previous key, k1 opens what it sealed; as primary, k2
	// seals.
	both := mustRing(t, k2, k1)
	if got, err := both.Open(recordID, sealed); err != nil || string(got) != "s3cret" {
		t.Errorf("Open by a ring holding the old key as previous: %q, %v", got, err)
	}
	fresh := both.Seal(recordID, []byte("new"))
	if !strings.Contains(fresh, KeyID(k2)) || strings.Contains(fresh, KeyID(k1)) {
		t.Errorf("a ring seals with its primary key: %q (primary %s, previous %s)", fresh, KeyID(k2), KeyID(k1))
	}
	if _, err := r1.Open(recordID, fresh); !errors.Is(err, ErrOpen) {
		t.Errorf("a value sealed by the new primary opened with the old key alone: %v", err)
	}
	if got, err := mustRing(t, k2).Open(recordID, fresh); err != nil || string(got) != "new" {
		t.Errorf("a value sealed by the new primary, opened by it alone: %q, %v", got, err)
	}
}

func TestSealsDiffer(t *testing.T) {
	k := mustRing(t, newKey(t))
	seen := map[string]bool{}
	for range 50 {
		s := k.Seal(recordID, []byte("same secret"))
		if seen[s] {
			t.Fatalf("two seals of the same plain text gave the same value %q", s)
		}
		seen[s] = true
	}
	v1, err := k.SealValue(credType, recordID, json.RawMessage(`"same secret"`))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := k.SealValue(credType, recordID, json.RawMessage(`"same secret"`))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(v1, v2) {
		t.Errorf("SealValue twice gave the same value %s", v1)
	}
	arr, err := k.SealValue(credArray, recordID, json.RawMessage(`["dup","dup"]`))
	if err != nil {
		t.Fatal(err)
	}
	var elems []string
	if err := json.Unmarshal(arr, &elems); err != nil || len(elems) != 2 {
		t.Fatalf("SealValue of a 2-element array: %s, %v", arr, err)
	}
	if elems[0] == elems[1] {
		t.Errorf("two equal elements sealed to the same value %q", elems[0])
	}
}

func TestKeyID(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	id := KeyID(k1)
	if id != KeyID(bytes.Clone(k1)) {
		t.Errorf("KeyID is not stable: %q, %q", id, KeyID(k1))
	}
	if id == KeyID(k2) {
		t.Errorf("two keys have the same id %q", id)
	}
	if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Errorf("KeyID %q is not 16 lowercase hex digits", id)
	}
	for _, f := range keyForms(k1) {
		if strings.Contains(f, id) || strings.Contains(id, f) {
			t.Errorf("KeyID %q shares text with the key", id)
		}
	}
	// The id names the key, not the ring: a sealed value carries it.
	sealed := mustRing(t, k1).Seal(recordID, []byte("x"))
	if !strings.HasPrefix(sealed, prefix+id+":") {
		t.Errorf("sealed value %q does not name key %s", sealed, id)
	}
	for _, f := range keyForms(k1) {
		if strings.Contains(sealed, f) {
			t.Errorf("sealed value %q holds the key", sealed)
		}
	}
}

func TestKeyringCopiesKeys(t *testing.T) {
	key := newKey(t)
	orig := bytes.Clone(key)
	k := mustRing(t, key)
	sealed := k.Seal(recordID, []byte("s3cret"))
	for i := range key {
		key[i] = 0
	}
	if got, err := k.Open(recordID, sealed); err != nil || string(got) != "s3cret" {
		t.Errorf("after the caller cleared its key slice: %q, %v", got, err)
	}
	if got, err := mustRing(t, orig).Open(recordID, k.Seal(recordID, []byte("y"))); err != nil || string(got) != "y" {
		t.Errorf("the ring kept sealing with the original key: %q, %v", got, err)
	}
}

func TestSealedByPrimary(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	old := mustRing(t, k1)
	ring := mustRing(t, k2, k1)
	byOld := old.Seal(recordID, []byte("x"))
	byNew := ring.Seal(recordID, []byte("x"))
	if ring.SealedByPrimary(byOld) {
		t.Errorf("SealedByPrimary of a value sealed by a previous key: true")
	}
	if !ring.SealedByPrimary(byNew) {
		t.Errorf("SealedByPrimary of a value sealed by the primary key: false")
	}
	if !old.SealedByPrimary(byOld) {
		t.Errorf("SealedByPrimary of the old ring's own value: false")
	}
	for _, s := range []string{"", "x", prefix, "hds1:" + KeyID(k2), `"` + byNew + `"`} {
		if ring.SealedByPrimary(s) {
			t.Errorf("SealedByPrimary(%q): true", s)
		}
	}
	if IsSealed("plain") || IsSealed("") || !IsSealed(byOld) {
		t.Errorf("IsSealed does not tell sealed values from others")
	}
}

func TestSealOpenValue(t *testing.T) {
	k := mustRing(t, newKey(t))
	// Other types pass through untouched.
	for typ, v := range map[store.DataType]string{
		store.String:                `"s3cret"`,
		store.Integer:               `5`,
		store.Null:                  `null`,
		store.ArrayOf(store.String): `["a","b"]`,
	} {
		sealed, err := k.SealValue(typ, recordID, json.RawMessage(v))
		if err != nil || string(sealed) != v {
			t.Errorf("SealValue(%s, %s) = %s, %v; want it unchanged", typ, v, sealed, err)
		}
		opened, err := k.OpenValue(typ, recordID, json.RawMessage(v))
		if err != nil || string(opened) != v {
			t.Errorf("OpenValue(%s, %s) = %s, %v; want it unchanged", typ, v, opened, err)
		}
	}

	for _, tt := range []struct {
		typ   store.DataType
		plain string
	}{
		{credType, `"s3cret"`},
		{credType, `"quote \" and \\ and <html> & ü"`},
		{credArray, `["s3cret-a","s3cret-b","s3cret-c"]`},
		{credArray, `[]`},
	} {
		sealed, err := k.SealValue(tt.typ, recordID, json.RawMessage(tt.plain))
		if err != nil {
			t.Errorf("SealValue(%s, %s): %v", tt.typ, tt.plain, err)
			continue
		}
		if tt.plain != `[]` && bytes.Contains(sealed, []byte("s3cret")) {
			t.Errorf("SealValue(%s) holds the plain text: %s", tt.typ, sealed)
		}
		if tt.typ == credArray {
			var elems []string
			var plains []string
			_ = json.Unmarshal([]byte(tt.plain), &plains)
			if err := json.Unmarshal(sealed, &elems); err != nil || len(elems) != len(plains) {
				t.Errorf("SealValue(%s, %s) = %s: not an array of as many strings", tt.typ, tt.plain, sealed)
			}
			for i, e := range elems {
				if !IsSealed(e) {
					t.Errorf("element %d is not sealed: %q", i, e)
				}
			}
		} else {
			var s string
			if err := json.Unmarshal(sealed, &s); err != nil || !IsSealed(s) {
				t.Errorf("SealValue(%s) = %s: not a sealed JSON string", tt.typ, sealed)
			}
		}
		opened, err := k.OpenValue(tt.typ, recordID, sealed)
		if err != nil {
			t.Errorf("OpenValue(SealValue(%s)): %v", tt.plain, err)
			continue
		}
		var want, got any
		_ = json.Unmarshal([]byte(tt.plain), &want)
		if err := json.Unmarshal(opened, &got); err != nil || !jsonEqual(want, got) {
			t.Errorf("OpenValue(SealValue(%s)) = %s", tt.plain, opened)
		}
		// Bound to the record.
		if tt.plain != `[]` {
			other := "0195a8a0-0000-7000-8000-000000000009"
			_, err = k.OpenValue(tt.typ, other, sealed)
			if !errors.Is(err, ErrOpen) {
				t.Errorf("OpenValue of %s under another record id: %v, want ErrOpen", tt.typ, err)
			}
			if err != nil && !strings.Contains(err.Error(), other) {
				t.Errorf("OpenValue error %q does not name the record %s", err, other)
			}
			noLeak(t, "OpenValue under another record", err, "s3cret", string(sealed))
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// Each element of a []CREDENTIAL is bound to its index: elements swapped,
// moved, or taken from another record's array do not open.
func TestArrayElementsBoundToIndex(t *testing.T) {
	k := mustRing(t, newKey(t))
	sealed, err := k.SealValue(credArray, recordID, json.RawMessage(`["s3cret-a","s3cret-b"]`))
	if err != nil {
		t.Fatal(err)
	}
	var e []string
	if err := json.Unmarshal(sealed, &e); err != nil || len(e) != 2 {
		t.Fatalf("sealed array %s", sealed)
	}
	single, err := k.SealValue(credType, recordID, json.RawMessage(`"s3cret-c"`))
	if err != nil {
		t.Fatal(err)
	}
	var singleStr string
	_ = json.Unmarshal(single, &singleStr)
	other, err := k.SealValue(credArray, "0195a8a0-0000-7000-8000-000000000009", json.RawMessage(`["s3cret-d"]`))
	if err != nil {
		t.Fatal(err)
	}
	var o []string
	_ = json.Unmarshal(other, &o)
	enc := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	for what, v := range map[string]json.RawMessage{
		"swapped":                           enc([]string{e[1], e[0]}),
		"element 1 moved to 0":              enc([]string{e[1]}),
		"element 0 moved to 1":              enc([]string{e[0], e[0]}),
		"another record's element":          enc([]string{o[0], e[1]}),
		"the scalar of the same record":     enc([]string{singleStr}),
		"an element as the record's scalar": enc(e[0]),
	} {
		typ := credArray
		if what == "an element as the record's scalar" {
			typ = credType
		}
		got, err := k.OpenValue(typ, recordID, v)
		if !errors.Is(err, ErrOpen) {
			t.Errorf("%s: OpenValue = %s, %v; want ErrOpen", what, got, err)
		}
		noLeak(t, what, err, "s3cret", e[0], e[1], o[0], singleStr)
	}
}

func TestOpenValueNotStrings(t *testing.T) {
	k := mustRing(t, newKey(t))
	for _, tt := range []struct {
		typ store.DataType
		v   string
	}{
		{credType, `["s3cret"]`},
		{credType, `5`},
		{credType, `{"x":"s3cret"}`},
		{credArray, `"s3cret"`},
		{credArray, `["s3cret", 5]`},
		{credArray, `not json s3cret`},
	} {
		for name, f := range map[string]func() (json.RawMessage, error){
			"SealValue": func() (json.RawMessage, error) { return k.SealValue(tt.typ, recordID, json.RawMessage(tt.v)) },
			"OpenValue": func() (json.RawMessage, error) { return k.OpenValue(tt.typ, recordID, json.RawMessage(tt.v)) },
			"MaskValue": func() (json.RawMessage, error) { return MaskValue(tt.typ, json.RawMessage(tt.v)) },
			"ResealValue": func() (json.RawMessage, error) {
				v, _, err := k.ResealValue(tt.typ, recordID, json.RawMessage(tt.v))
				return v, err
			},
		} {
			got, err := f()
			if err == nil {
				t.Errorf("%s(%s, %s) = %s, no error", name, tt.typ, tt.v, got)
			}
			noLeak(t, name, err, "s3cret")
		}
	}
}

func TestResealValue(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	old := mustRing(t, k1)
	ring := mustRing(t, k2, k1)
	newOnly := mustRing(t, k2)

	for _, tt := range []struct {
		typ   store.DataType
		plain string
	}{
		{credType, `"s3cret"`},
		{credArray, `["s3cret-a","s3cret-b"]`},
	} {
		// Already under the primary key: unchanged.
		cur, err := ring.SealValue(tt.typ, recordID, json.RawMessage(tt.plain))
		if err != nil {
			t.Fatal(err)
		}
		got, changed, err := ring.ResealValue(tt.typ, recordID, cur)
		if err != nil || changed || !bytes.Equal(got, cur) {
			t.Errorf("ResealValue of a %s already under the primary key: %s, %v, %v; want it unchanged", tt.typ, got, changed, err)
		}

		// Under a previous key: re-sealed under the primary.
		stale, err := old.SealValue(tt.typ, recordID, json.RawMessage(tt.plain))
		if err != nil {
			t.Fatal(err)
		}
		got, changed, err = ring.ResealValue(tt.typ, recordID, stale)
		if err != nil || !changed || bytes.Equal(got, stale) {
			t.Errorf("ResealValue of a %s under a previous key: %s, %v, %v; want it re-sealed", tt.typ, got, changed, err)
			continue
		}
		opened, err := newOnly.OpenValue(tt.typ, recordID, got)
		if err != nil || compactJSON(opened) != tt.plain {
			t.Errorf("the re-sealed %s, opened by the primary key alone: %s, %v", tt.typ, opened, err)
		}
		if _, err := old.OpenValue(tt.typ, recordID, got); !errors.Is(err, ErrOpen) {
			t.Errorf("the re-sealed %s still opens with the old key alone: %v", tt.typ, err)
		}
		again, changed, err := ring.ResealValue(tt.typ, recordID, got)
		if err != nil || changed || !bytes.Equal(again, got) {
			t.Errorf("ResealValue of a re-sealed %s: %v, %v; want no change", tt.typ, changed, err)
		}

		// Sealed to another record: an error naming the record, not the value.
		_, _, err = ring.ResealValue(tt.typ, "0195a8a0-0000-7000-8000-00000000000f", stale)
		if !errors.Is(err, ErrOpen) {
			t.Errorf("ResealValue of a %s moved from another record: %v, want ErrOpen", tt.typ, err)
		}
		noLeak(t, "ResealValue", err, append(keyForms(k1), "s3cret", string(stale))...)
	}

	// An array mixing keys is re-sealed whole.
	mixed := mixedArray(t, old, ring)
	got, changed, err := ring.ResealValue(credArray, recordID, mixed)
	if err != nil || !changed {
		t.Fatalf("ResealValue of an array mixing keys: %v, %v", changed, err)
	}
	var elems []string
	_ = json.Unmarshal(got, &elems)
	for i, e := range elems {
		if !ring.SealedByPrimary(e) {
			t.Errorf("element %d not re-sealed under the primary key", i)
		}
	}
	if opened, err := newOnly.OpenValue(credArray, recordID, got); err != nil || string(opened) != `["old","new"]` {
		t.Errorf("re-sealed mixed array opens to %s, %v", opened, err)
	}

	// Nothing to re-seal in an empty array.
	if got, changed, err := ring.ResealValue(credArray, recordID, json.RawMessage(`[]`)); err != nil || changed || string(got) != `[]` {
		t.Errorf("ResealValue of []: %s, %v, %v", got, changed, err)
	}

	// No key of the ring opens it.
	lost := mustRing(t, newKey(t)).Seal(recordID, []byte("s3cret"))
	lostJSON, _ := json.Marshal(lost)
	_, _, err = ring.ResealValue(credType, recordID, lostJSON)
	if !errors.Is(err, ErrOpen) || !strings.Contains(err.Error(), recordID) {
		t.Errorf("ResealValue of a value no key opens: %v, want ErrOpen naming the record", err)
	}
	noLeak(t, "ResealValue, unknown key", err, "s3cret", lost)
}

// mixedArray seals ["old","new"] for recordID: element 0 by old, element
// 1 by ring's primary.
func mixedArray(t *testing.T, old, ring *Keyring) json.RawMessage {
	t.Helper()
	a, err := old.SealValue(credArray, recordID, json.RawMessage(`["old","x"]`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ring.SealValue(credArray, recordID, json.RawMessage(`["x","new"]`))
	if err != nil {
		t.Fatal(err)
	}
	var ea, eb []string
	_ = json.Unmarshal(a, &ea)
	_ = json.Unmarshal(b, &eb)
	out, _ := json.Marshal([]string{ea[0], eb[1]})
	return out
}

func compactJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}

func TestMaskValue(t *testing.T) {
	k := mustRing(t, newKey(t))
	for _, tt := range []struct {
		typ   store.DataType
		plain string
		want  string
	}{
		{credType, `"s3cret"`, `"********"`},
		{credArray, `["s3cret-a","s3cret-b","s3cret-c"]`, `["********","********","********"]`},
		{credArray, `["s3cret"]`, `["********"]`},
		{credArray, `[]`, `[]`},
	} {
		sealed, err := k.SealValue(tt.typ, recordID, json.RawMessage(tt.plain))
		if err != nil {
			t.Fatal(err)
		}
		for what, v := range map[string]string{"sealed": string(sealed), "plain": tt.plain} {
			got, err := MaskValue(tt.typ, json.RawMessage(v))
			if err != nil || string(got) != tt.want {
				t.Errorf("MaskValue(%s, %s value) = %s, %v; want %s", tt.typ, what, got, err, tt.want)
			}
		}
	}
	if Masked != "********" {
		t.Errorf("Masked = %q", Masked)
	}
}

func TestConcurrentUse(t *testing.T) {
	k := mustRing(t, newKey(t), newKey(t))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				id := recordID + string(rune('a'+i))
				s := k.Seal(id, []byte("s3cret"))
				if got, err := k.Open(id, s); err != nil || string(got) != "s3cret" {
					t.Errorf("concurrent round trip: %q, %v", got, err)
					return
				}
				_ = k.SealedByPrimary(s)
			}
		}()
	}
	wg.Wait()
}
