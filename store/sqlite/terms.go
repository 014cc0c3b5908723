package sqlite

import (
	"context"
	"sync"
)

// maxCachedStems bounds the stems termCache keeps; when full it starts again empty.
const maxCachedStems = 4096

// termCache keeps each query stem's FTS5 alternatives (termsStarting) across searches
// while the database is unchanged. Reading them scans search_terms (fts5vocab), which
// walks the whole document list of every term in range to count it: about 4 ms of a
// search at 100,000 tables, for the same answer as the search before. Any commit to
// the file, by this process or another, changes the data version and empties it.
type termCache struct {
	mu      sync.Mutex
	version int64
	stems   map[string][]string
}

// termView is the term cache as one search sees it: the stems cached at the data
// version read when the search began.
type termView struct {
	c       *termCache
	version int64
}

// get returns the terms cached for stem, unless the version has moved on.
func (v termView) get(stem string) ([]string, bool) {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if v.c.version != v.version {
		return nil, false
	}
	terms, ok := v.c.stems[stem]
	return terms, ok
}

// put caches the terms of stem under the view's version; a no-op once the cache holds
// a later version.
func (v termView) put(stem string, terms []string) {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if v.version < v.c.version {
		return
	}
	if v.version != v.c.version || v.c.stems == nil || len(v.c.stems) >= maxCachedStems {
		v.c.version, v.c.stems = v.version, map[string][]string{}
	}
	v.c.stems[stem] = terms
}

// termsAt returns the term cache's view for a search starting now. The data version is
// read first, so terms read by the search are kept under a version no later than the
// one they were read at. ok is false when the data version could not be read: the
// search then shares nothing.
func (db *DB) termsAt(ctx context.Context) (v termView, ok bool) {
	version, err := db.dataVersionNumber(ctx)
	if err != nil {
		return termView{}, false
	}
	return termView{c: &db.terms, version: version}, true
}
