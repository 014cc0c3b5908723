package auth

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// The principal cache: Verify keeps the principal of each token it has verified, keyed
// by the token's hash, so that a request whose token is cached costs no database read
// for authentication.
//
// Invalidation. A cached principal depends on its token row and on its user entity. The
// cache forgets it when either changes:
//
//   - Revoke drops the token at once on its own server, and records the hash in the
//     token_invalidations table (in the revoking transaction).
//   - Entity writes reach the cache through the outbox: the change events of the account
//     kinds (user, team, bot: Kind.Account), which the engine appends in the write's own
//     transaction. An event about a cached principal's user drops that user's tokens;
//     any other account event (a team's roles, a bot) empties the cache.
//
// The cache follows both logs itself, from their heads at UseCache, rather than as a
// Dispatcher consumer: a consumer's position is stored under its name in the shared
// database, so a per-server consumer would leave one position per server ever started,
// and the dispatcher polls once a second, too slowly for the bound below.
//
// Freshness. Before it answers from the cache, Verify catches up with both logs (one
// short read of each) when the last catch-up is older than CacheConfig.Poll (250 ms by
// default), or when the local engine has committed a write since (Changed, wired as the
// engine's post-commit Notify). So a change made on this server is seen by the very
// next request, and a change made by another server sharing the database within Poll
// plus one short read. A principal read from the store while a change is being caught
// up is not cached (the generation check in put). Entries also expire after MaxAge as a
// safety net, and never outlive their token's expiry.

// Cache defaults.
const (
	DefaultCacheSize   = 10000
	DefaultCacheMaxAge = 5 * time.Minute
	DefaultCachePoll   = 250 * time.Millisecond
)

// catchUpLimit bounds the events and invalidations one catch-up reads; with more
// pending, the cache is emptied instead.
const catchUpLimit = 1000

// syncTimeout bounds one catch-up.
const syncTimeout = 5 * time.Second

// CacheConfig configures the principal cache. Zero values take the defaults.
type CacheConfig struct {
	// Size is the most principals kept; the least recently used goes first.
	Size int
	// MaxAge is the longest a principal is served from the cache.
	MaxAge time.Duration
	// Poll is the longest a Verify answers from the cache without catching up with the
	// changes other servers made.
	Poll time.Duration
	// Registry names the account kinds whose changes invalidate principals;
	// nil means meridian.DefaultRegistry().
	Registry *meridian.Registry
}

// UseCache makes Verify cache the principals it verifies (see the top of cache.go). It
// starts following the outbox and the token invalidations from their current heads.
// Call it once, before serving; wire Changed as the engine's post-commit hook.
func (a *Authority) UseCache(ctx context.Context, cfg CacheConfig) error {
	if cfg.Size <= 0 {
		cfg.Size = DefaultCacheSize
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultCacheMaxAge
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultCachePoll
	}
	reg := cfg.Registry
	if reg == nil {
		reg = meridian.DefaultRegistry()
	}
	c := &principalCache{db: a.db, cfg: cfg, now: a.now, entries: map[string]*list.Element{},
		byUser: map[string]map[string]bool{}, userKinds: map[string]bool{}, lru: list.New()}
	for _, k := range reg.Kinds() {
		if k.Account {
			c.kinds = append(c.kinds, k.Name)
		}
	}
	tx, err := store.BeginShort(ctx, a.db)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if c.lastEvent, err = store.OutboxHead(ctx, tx); err != nil {
		return err
	}
	if c.lastRevoked, err = invalidationHead(ctx, tx.SQL()); err != nil {
		return err
	}
	c.synced.Store(c.now().UnixNano())
	a.cache = c
	return nil
}

// Changed tells the principal cache that this server's engine committed a write: the
// next Verify catches up with the outbox before it answers from the cache. It never
// blocks; without a cache it does nothing. Wire it as store.Config.Notify (beside the
// dispatcher's).
func (a *Authority) Changed() {
	if a.cache != nil {
		a.cache.dirty.Store(true)
	}
}

// principalCache is an LRU of verified principals by token hash. Safe for concurrent use.
type principalCache struct {
	db    store.Driver
	cfg   CacheConfig
	now   func() time.Time
	kinds []string // the account kinds, whose change events can change a principal

	dirty  atomic.Bool  // the local engine wrote since the last catch-up
	synced atomic.Int64 // when the last catch-up started, unix ns

	syncMu      sync.Mutex // one catch-up at a time; guards the two positions
	lastEvent   int64      // outbox position
	lastRevoked int64      // token_invalidations position

	mu        sync.Mutex
	gen       uint64 // bumped by every invalidation
	lru       *list.List
	entries   map[string]*list.Element   // token hash → element holding a *cacheEntry
	byUser    map[string]map[string]bool // user id → token hashes
	userKinds map[string]bool            // the kinds of the cached principals' entities
}

type cacheEntry struct {
	hash      string
	p         meridian.Principal
	userKind  string
	expiresAt int64 // epoch ms, the token's expiry; 0 never
	cachedAt  time.Time
}

// lookup catches up with the changes made since the last catch-up when due, then
// returns a copy of the principal cached for hash, if any, and the generation to pass
// to put after a miss.
func (c *principalCache) lookup(ctx context.Context, hash string) (*meridian.Principal, uint64, bool) {
	c.catchUp(ctx)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[hash]
	if !ok {
		return nil, c.gen, false
	}
	e := el.Value.(*cacheEntry)
	if now.Sub(e.cachedAt) >= c.cfg.MaxAge || (e.expiresAt != 0 && now.UnixMilli() >= e.expiresAt) {
		c.remove(el)
		return nil, c.gen, false
	}
	c.lru.MoveToFront(el)
	p := e.p
	p.Roles = slices.Clone(p.Roles)
	p.Scopes = slices.Clone(p.Scopes)
	return &p, c.gen, true
}

// put caches p, read from the store for the token hash whose user entity is of
// userKind, unless an invalidation happened since lookup returned gen: p may predate it.
func (c *principalCache) put(hash string, p *meridian.Principal, userKind string, expiresAt int64, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if el, ok := c.entries[hash]; ok {
		c.remove(el)
	}
	e := &cacheEntry{hash: hash, p: *p, userKind: userKind, expiresAt: expiresAt, cachedAt: c.now()}
	e.p.Roles = slices.Clone(p.Roles)
	e.p.Scopes = slices.Clone(p.Scopes)
	c.entries[hash] = c.lru.PushFront(e)
	if c.byUser[p.ID] == nil {
		c.byUser[p.ID] = map[string]bool{}
	}
	c.byUser[p.ID][hash] = true
	c.userKinds[userKind] = true
	for c.lru.Len() > c.cfg.Size {
		c.remove(c.lru.Back())
	}
}

// remove drops one entry; c.mu is held.
func (c *principalCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.hash)
	if hs := c.byUser[e.p.ID]; hs != nil {
		delete(hs, e.hash)
		if len(hs) == 0 {
			delete(c.byUser, e.p.ID)
		}
	}
}

// dropToken forgets one token.
func (c *principalCache) dropToken(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if el, ok := c.entries[hash]; ok {
		c.remove(el)
	}
}

// entityChanged forgets what a change of the account entity id, of kind, can change:
// the tokens of that user, or everything when it is not a cached user (a team, a bot).
// A change to a user nobody has a cached token for changes no principal.
func (c *principalCache) entityChanged(kind, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if hs, ok := c.byUser[id]; ok {
		for h := range hs {
			c.remove(c.entries[h])
		}
		return
	}
	if !c.userKinds[kind] {
		c.clearLocked()
	}
}

// clear forgets everything.
func (c *principalCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.clearLocked()
}

func (c *principalCache) clearLocked() {
	c.lru.Init()
	clear(c.entries)
	clear(c.byUser)
}

// catchUp applies the changes committed since the last catch-up, when the last one is
// older than Poll or the local engine has written since. When it cannot read them, it
// empties the cache (the next Verify reads the store, and reports its error).
func (c *principalCache) catchUp(ctx context.Context) {
	if !c.due() {
		return
	}
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if !c.due() { // another request caught up meanwhile
		return
	}
	// Cleared before reading: a write committed during the read sets it again.
	c.dirty.Store(false)
	start := c.now()
	// A client that hangs up must not empty everyone's cache.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer cancel()
	if err := c.sync(ctx); err != nil {
		c.clear()
	}
	c.synced.Store(start.UnixNano())
}

func (c *principalCache) due() bool {
	return c.dirty.Load() || c.now().UnixNano()-c.synced.Load() >= int64(c.cfg.Poll)
}

// sync reads, on the driver's short-read pool, the account change events and the token
// invalidations after the cache's positions, and applies them. Each log's head is read
// before its rows, so on PostgreSQL (read committed, rows numbered in commit order under
// the write lock) no row at or below the new position can appear later.
func (c *principalCache) sync(ctx context.Context) error {
	tx, err := store.BeginShort(ctx, c.db)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	head, err := store.OutboxHead(ctx, tx)
	if err != nil {
		return err
	}
	if head != c.lastEvent {
		events, err := tx.Events(ctx, store.EventQuery{After: c.lastEvent, EntityTypes: c.kinds, Limit: catchUpLimit})
		if err != nil {
			return err
		}
		if len(events) == catchUpLimit {
			c.clear()
		} else {
			for _, e := range events {
				if e.Seq <= head {
					c.entityChanged(e.EntityType, e.EntityID)
				}
			}
		}
		c.lastEvent = head
	}

	head, err = invalidationHead(ctx, tx.SQL())
	if err != nil {
		return err
	}
	if head != c.lastRevoked {
		hashes, err := invalidatedHashes(ctx, tx.SQL(), c.lastRevoked, head, catchUpLimit)
		if err != nil {
			return err
		}
		if len(hashes) == catchUpLimit {
			c.clear()
		}
		for _, h := range hashes {
			c.dropToken(h)
		}
		c.lastRevoked = head
	}
	return nil
}
