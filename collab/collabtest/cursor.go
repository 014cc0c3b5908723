// Package collabtest holds what the tests of the collaboration capabilities share.
// Only tests use it.
package collabtest

import (
	"testing"

	"github.com/meridian-catalog/meridian/collab"
)

// FuzzCursorRoundTrip fuzzes parse, a capability's cursor parser: every cursor it
// accepts must parse again, to the same cursor, from its own encoding. seeds are added
// to a valid cursor and the empty string.
func FuzzCursorRoundTrip(f *testing.F, parse func(string) (collab.Cursor, error), seeds ...string) {
	f.Add(collab.Cursor{TS: 1767225600000, ID: "5d0b0a52-6a53-4b8f-8c1e-1d8b2b0c9a11"}.String())
	f.Add("")
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parse(s)
		if err != nil {
			return
		}
		again, err := parse(c.String())
		if err != nil || again != c {
			t.Fatalf("cursor %q does not round-trip: %+v, %v", s, again, err)
		}
	})
}
