package uuidtext_test

import (
	"testing"

	"github.com/hds-go/hds/internal/uuidtext"
)

func TestAppend(t *testing.T) {
	b := [16]byte{0x01, 0x9a, 0x0b, 0xcd, 0xef, 0x12, 0x7a, 0xbc, 0x8d, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab}
	got := string(uuidtext.Append([]byte("id="), b))
	if want := "id=019a0bcd-ef12-7abc-8def-0123456789ab"; got != want {
		t.Errorf("Append = %q, want %q", got, want)
	}
}
