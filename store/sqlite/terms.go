package sqlite

import (
	"context"
	"sync"
)

// maxCachedStems bounds the stems termCache keeps; when full it starts again empty.
const maxCachedStems = 4096

// termCache keeps each query stem's FTS5 alternatives (termsStarting) across searches
// while the keyword index is unchanged. Reading them scans search_terms (fts5vocab),
// which walks the whole document list of every term in range to count it: about 4 ms
// of a search at 100,000 tables, for the same answer as the search before. Any change
// to the index, by this process or another, moves its generation and empties it;
// commits that leave the index alone (a consumer's position, a billing entry) do not.
type termCache struct {
	mu      sync.Mutex
	version int64
	stems   map[string][]string
}

// termView is the term cache as one search sees it: the stems cached at the index
// generation its snapshot holds.
type termView struct {
	c       *termCache
	version int64
}

// get returns the terms cached for stem, unless the generation has moved on.
func (v termView) get(stem string) ([]string, bool) {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if v.c.version != v.version {
		return nil, false
	}
	terms, ok := v.c.stems[stem]
	return terms, ok
}

// put caches the terms of stem under the view's generation; a no-op once the cache
// holds a later one.
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

// termsAt returns the term cache's view for the search t runs: the keyword index's
// generation (migrations/0007) read in t's own snapshot, so the terms the search reads
// are kept under the generation they were read at. ok is false when the generation
// could not be read: the search then shares nothing.
func (t *tx) termsAt(ctx context.Context) (v termView, ok bool) {
	var generation int64
	if err := t.queryRow(ctx, stmtSearchGeneration).Scan(&generation); err != nil {
		return termView{}, false
	}
	return termView{c: &t.db.terms, version: generation}, true
}
