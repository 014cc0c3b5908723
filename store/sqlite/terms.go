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

// at returns the cache's view at version: the stems cached at that version, and a
// function that caches more under it (a no-op once the version has moved on).
func (c *termCache) at(version int64) (get func(string) ([]string, bool), put func(string, []string)) {
	get = func(stem string) ([]string, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.version != version {
			return nil, false
		}
		terms, ok := c.stems[stem]
		return terms, ok
	}
	put = func(stem string, terms []string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if version < c.version {
			return
		}
		if version != c.version || c.stems == nil || len(c.stems) >= maxCachedStems {
			c.version, c.stems = version, map[string][]string{}
		}
		c.stems[stem] = terms
	}
	return get, put
}

// termsAt returns the term cache's view for a search starting now: the data version
// is read first, so terms read by the search are kept under a version no later than
// the one they were read at. Without a data version (it failed) nothing is shared.
func (db *DB) termsAt(ctx context.Context) (get func(string) ([]string, bool), put func(string, []string)) {
	v, err := db.DataVersion(ctx)
	if err != nil {
		return func(string) ([]string, bool) { return nil, false }, func(string, []string) {}
	}
	return db.terms.at(v)
}
