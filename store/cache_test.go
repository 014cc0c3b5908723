package store

import (
	"strconv"
	"testing"
)

func TestReadCacheStaysWithinItsBounds(t *testing.T) {
	for _, c := range []struct {
		name    string
		answers int
		size    int
		// kept: the most entries that may remain after storing them all.
		kept      int
		lastFound bool
	}{
		{"small answers up to the count", maxCached, 100, maxCached, true},
		{"past the count it starts again", maxCached + 10, 100, 10, true},
		{"large answers up to the byte budget", 200, maxCachedAnswer, maxCachedBytes / maxCachedAnswer, true},
		{"an answer over the largest is never kept", 3, maxCachedAnswer + 1, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rc readCache
			var last cacheKey
			for i := range c.answers {
				last = cacheKey{kind: "table", fqn: strconv.Itoa(i)}
				_, _, gen := rc.lookup("1", last)
				rc.store(gen, last, cached{body: make([]byte, c.size)})
			}
			if len(rc.entries) > c.kept || rc.bytes > maxCachedBytes {
				t.Fatalf("%d entries of %d bytes kept, want at most %d within %d bytes", len(rc.entries), rc.bytes, c.kept, maxCachedBytes)
			}
			if _, ok, _ := rc.lookup("1", last); ok != c.lastFound {
				t.Fatalf("last answer found = %v, want %v", ok, c.lastFound)
			}
		})
	}
}

func TestReadCacheDropsAnAnswerReadAcrossAChange(t *testing.T) {
	var rc readCache
	key := cacheKey{kind: "table", fqn: "a"}
	_, _, gen := rc.lookup("1", key)
	rc.clear() // a commit while the answer was being read
	rc.store(gen, key, cached{body: []byte("old")})
	if _, ok, _ := rc.lookup("1", key); ok {
		t.Fatal("an answer read across a commit was kept")
	}
	_, _, gen = rc.lookup("1", key)
	rc.store(gen, key, cached{body: []byte("new")})
	if _, ok, _ := rc.lookup("2", key); ok {
		t.Fatal("an answer was served after the data version moved")
	}
}
