package executions

import (
	"testing"

	"github.com/meridian-catalog/meridian/collab"
)

func FuzzParseCursor(f *testing.F) {
	f.Add(collab.Cursor{TS: 1767225600000, ID: "5d0b0a52-6a53-4b8f-8c1e-1d8b2b0c9a11"}.String())
	f.Add("MTIzOng")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCursor(s)
		if err != nil {
			return
		}
		again, err := parseCursor(c.String())
		if err != nil || again != c {
			t.Fatalf("cursor %q does not round-trip: %+v, %v", s, again, err)
		}
	})
}
