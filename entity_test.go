package meridian

import (
	"testing"

	"github.com/google/uuid"
)

func TestNewIDsAreTimeOrderedUUIDs(t *testing.T) {
	prev := ""
	for range 1000 {
		id := NewID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || len(id) != 36 {
			t.Fatalf("NewID() = %q: version %d, err %v; want a 36-character version 7 UUID", id, u.Version(), err)
		}
		if id <= prev {
			t.Fatalf("NewID() = %q after %q: ids made later must sort later", id, prev)
		}
		prev = id
	}
}
