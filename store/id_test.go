package store_test

import (
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hds-go/hds/store"
)

func TestNewID(t *testing.T) {
	before := time.Now().UnixMilli()
	const n = 10000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = store.NewID()
	}
	after := time.Now().UnixMilli()
	for i, id := range ids {
		checkV7(t, id)
		if i > 0 && id <= ids[i-1] {
			t.Errorf("NewID #%d %s does not sort after #%d %s", i, id, i-1, ids[i-1])
		}
		ms := unixMilli(t, id)
		// A burst may borrow a few milliseconds ahead (RFC 9562 6.2).
		if ms < before || ms > after+100 {
			t.Errorf("NewID %s holds time %d, want within [%d, %d]", id, ms, before, after)
		}
	}
}

func TestNewIDConcurrent(t *testing.T) {
	const goroutines, each = 8, 1000
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, each)
			for i := range ids {
				ids[i] = store.NewID()
			}
			mu.Lock()
			defer mu.Unlock()
			for i, id := range ids {
				if seen[id] {
					t.Errorf("NewID returned %s twice", id)
				}
				seen[id] = true
				if i > 0 && id <= ids[i-1] {
					t.Errorf("NewID in one goroutine: %s does not sort after %s", id, ids[i-1])
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != goroutines*each {
		t.Errorf("%d distinct ids, want %d", len(seen), goroutines*each)
	}
}

// checkV7 checks that id is a lowercase canonical UUID version 7 with the
// RFC 9562 variant.
func checkV7(t *testing.T, id string) {
	t.Helper()
	if c, ok := store.CanonicalUUID(id); !ok || c != id {
		t.Errorf("NewID() = %q, not a lowercase canonical UUID", id)
		return
	}
	if id[14] != '7' {
		t.Errorf("NewID() = %s, version nibble %c, want 7", id, id[14])
	}
	if !strings.ContainsRune("89ab", rune(id[19])) {
		t.Errorf("NewID() = %s, variant nibble %c, want 8, 9, a or b", id, id[19])
	}
}

// unixMilli returns the 48-bit timestamp of a UUIDv7.
func unixMilli(t *testing.T, id string) int64 {
	t.Helper()
	b, err := hex.DecodeString(id[0:8] + id[9:13])
	if err != nil {
		t.Fatalf("decode %s: %v", id, err)
	}
	var ms int64
	for _, c := range b {
		ms = ms<<8 | int64(c)
	}
	return ms
}

func TestCanonicalUUID(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", true},
		{"0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", true},
		{"0190a1B2-c3D4-7e5F-8A9b-0c1D2e3F4a5B", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", true},
		{"00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000", true},
		{"ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff", true},
		{"", "", false},
		{"0190a1b2c3d47e5f8a9b0c1d2e3f4a5b", "", false},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5", "", false},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b0", "", false},
		{"{0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}", "", false},
		{"urn:uuid:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "", false},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g", "", false},
		{"0190a1b2_c3d4-7e5f-8a9b-0c1d2e3f4a5b", "", false},
		{"0190a1b-2c3d4-7e5f-8a9b-0c1d2e3f4a5b", "", false},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a-b", "", false},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5\u00e9"[:36], "", false},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a\x00b", "", false},
		{"+190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "", false},
	} {
		got, ok := store.CanonicalUUID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CanonicalUUID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	id := store.NewID()
	if got, ok := store.CanonicalUUID(strings.ToUpper(id)); !ok || got != id {
		t.Errorf("CanonicalUUID(upper NewID %s) = %q, %v; want the id", id, got, ok)
	}
}
