package tasks

import (
	"testing"

	"github.com/meridian-catalog/meridian"
)

// FuzzDecodeThreadCursor checks that any after= value decodes or is EInvalid without
// panicking, and that a cursor this package encodes decodes to what it encoded.
func FuzzDecodeThreadCursor(f *testing.F) {
	f.Add(encodeThreadCursor(1795670909072, "8342c8eb-6762-4fd7-87c2-7450623d226f"))
	for _, s := range []string{"", "garbage", "MTIz", "fA", "LTF8eA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		at, id, err := decodeThreadCursor(s)
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("%q: %v is not EInvalid", s, err)
			}
			return
		}
		at2, id2, err := decodeThreadCursor(encodeThreadCursor(at, id))
		if err != nil || at2 != at || id2 != id {
			t.Fatalf("%q does not round-trip: %d %q %v", s, at2, id2, err)
		}
	})
}
