package store

import (
	"context"
	"strings"
	"sync"

	"github.com/meridian-catalog/meridian"
)

// DataVersioner is a Driver capability: DataVersion returns a value that changes
// whenever anything is committed to the database, by this process or another one
// sharing it: on SQLite at once (PRAGMA data_version); on PostgreSQL at once for a
// commit made through the same driver, and for another process's or node's when its
// notification reaches the change feed, typically within a few milliseconds and at most a
// second later (store/postgres, changes.go). A driver that has it gets the
// engine's read cache; one that has not reads every GET from the database.
type DataVersioner interface {
	DataVersion(ctx context.Context) (string, error)
}

// Bounds of the read cache: the most answers it holds and their most bytes (when
// either is reached it starts again empty), and the largest answer it keeps.
const (
	maxCached       = 4096
	maxCachedBytes  = 64 << 20
	maxCachedAnswer = 1 << 20
)

// readCache holds encoded GET answers, valid while the database is unchanged. An
// entity's answer depends on more than its own row (its relationships, the rows they
// point at, module fields computed from other tables, the caller's rights), so the
// cache is not invalidated per entity: any commit empties it. The engine empties it
// after each of its own commits, before the write is acknowledged, and every GET first
// compares the driver's DataVersion with the one the entries were read at, which
// catches commits by other processes on the same database (meridian mcp beside
// meridian serve on one SQLite file, other nodes on one PostgreSQL database) and by
// module code writing outside the engine. So a GET never answers older than the last
// commit that finished before it began in this process, nor older than DataVersion's
// delay for a commit of another process or node (none on SQLite; on PostgreSQL, the
// change feed's, at most a second).
type readCache struct {
	mu      sync.Mutex
	version string // the DataVersion the entries were read at
	gen     uint64 // counts emptyings, so a read that overlapped one is not kept
	entries map[cacheKey]cached
	bytes   int // of the entries' bodies
}

// cacheKey names one answer: the entity, the request options and the caller.
type cacheKey struct {
	kind, id, fqn, fields, include, caller string
}

// cached is one encoded answer and its ETag.
type cached struct {
	body []byte
	etag string
}

// clear empties the cache.
func (c *readCache) clear() {
	c.mu.Lock()
	c.entries, c.bytes = nil, 0
	c.gen++
	c.mu.Unlock()
}

// lookup returns the answer cached for key at version, and the generation to store a
// fresh answer under.
func (c *readCache) lookup(version string, key cacheKey) (cached, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if version != c.version {
		c.entries, c.bytes = nil, 0
		c.gen++
		c.version = version
	}
	v, ok := c.entries[key]
	return v, ok, c.gen
}

// store keeps an answer read after lookup returned gen, unless the cache was emptied
// since.
func (c *readCache) store(gen uint64, key cacheKey, v cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || len(v.body) > maxCachedAnswer {
		return
	}
	if c.entries == nil || len(c.entries) >= maxCached || c.bytes+len(v.body) > maxCachedBytes {
		c.entries, c.bytes = make(map[cacheKey]cached), 0
	}
	if old, ok := c.entries[key]; ok {
		c.bytes -= len(old.body)
	}
	c.entries[key] = v
	c.bytes += len(v.body)
}

// callerKey is what of a principal an answer can depend on.
func callerKey(p *meridian.Principal) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(p.ID)
	b.WriteByte(0)
	b.WriteString(p.Name)
	b.WriteByte(0)
	b.WriteString(p.Email)
	b.WriteByte(0)
	b.WriteString(p.TokenType)
	if p.IsBot {
		b.WriteString("\x00bot")
	}
	for _, l := range [][]string{p.Roles, p.Scopes} {
		b.WriteByte(1)
		for _, s := range l {
			b.WriteString(s)
			b.WriteByte(0)
		}
	}
	return b.String()
}

// GetJSON is Get answered as JSON (encodeAnswer) with the entity's ETag. On a driver
// with a DataVersion it is served from the read cache while the database is unchanged.
// The bytes returned are shared: the caller must not change them. Errors as Get.
func (s *Entities) GetJSON(ctx context.Context, p *meridian.Principal, kind string, key Key, o GetOptions) ([]byte, string, error) {
	dv, ok := s.db.(DataVersioner)
	var (
		ck  cacheKey
		gen uint64
	)
	if ok {
		version, err := dv.DataVersion(ctx)
		if err != nil {
			return nil, "", err
		}
		ck = cacheKey{kind: kind, id: key.ID, fqn: key.FQN, fields: o.Fields, include: string(o.Include), caller: callerKey(p)}
		var v cached
		if v, ok, gen = s.cache.lookup(version, ck); ok {
			return v.body, v.etag, nil
		}
		ok = true
	}
	e, err := s.Get(ctx, p, kind, key, o)
	if err != nil {
		return nil, "", err
	}
	body, err := encodeAnswer(e)
	if err != nil {
		return nil, "", err
	}
	v := cached{body: body, etag: ETag(e)}
	if ok {
		s.cache.store(gen, ck, v)
	}
	return v.body, v.etag, nil
}
