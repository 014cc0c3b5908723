package activity

import (
	"testing"

	"github.com/meridian-catalog/meridian/collab/collabtest"
)

func FuzzParseCursor(f *testing.F) {
	collabtest.FuzzCursorRoundTrip(f, parseCursor, "MTIzOng")
}
