package graph

import (
	"context"
	"strings"
	"sync"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// CatalogSource is the Source over the entity engine. It reads as the engine's own
// principal, which sees every entity but no secret (secrets are masked for every
// principal that is not a secrets-reading bot).
type CatalogSource struct {
	Entities *store.Entities
}

var _ Source = (*CatalogSource)(nil)

// Entity implements Source.
func (c *CatalogSource) Entity(ctx context.Context, kind, id string) (meridian.Entity, error) {
	k, err := c.Entities.Registry().Lookup(kind)
	if err != nil {
		return nil, err
	}
	return c.Entities.Get(ctx, meridian.System, kind, store.ByID(id),
		store.GetOptions{Fields: projectedFields(k), Include: store.IncludeAll})
}

// projectedFields is the ?fields= of the ProjectedFields the kind has.
func projectedFields(k *meridian.Kind) string {
	var fields []string
	for _, f := range ProjectedFields {
		if k.HasField(f) {
			fields = append(fields, f)
		}
	}
	return strings.Join(fields, ",")
}

var _ EntityLister = (*CatalogSource)(nil)

// EachEntity implements EntityLister, kind by kind, a page of eachPage entities per
// read transaction (Entities.List with the projected fields).
func (c *CatalogSource) EachEntity(ctx context.Context, f func(kind string, e meridian.Entity) error) error {
	for _, k := range c.Entities.Registry().Kinds() {
		o := store.ListOptions{Fields: projectedFields(k), Include: store.IncludeAll, Limit: eachPage}
		for {
			page, err := c.Entities.List(ctx, meridian.System, k.Name, o)
			if err != nil {
				return err
			}
			for _, e := range page.Data {
				if err := f(k.Name, e); err != nil {
					return err
				}
			}
			if page.After == "" {
				break
			}
			o.After = page.After
		}
	}
	return nil
}

// Upstream implements Source with a one-level upstream lineage walk
// (store.UpstreamOf, which does not read the entity's document again).
func (c *CatalogSource) Upstream(ctx context.Context, _, id string) ([]Upstream, error) {
	ups, err := c.UpstreamOfMany(ctx, []string{id})
	return ups[id], err
}

var _ UpstreamBatcher = (*CatalogSource)(nil)

// UpstreamOfMany implements UpstreamBatcher, in one read transaction.
func (c *CatalogSource) UpstreamOfMany(ctx context.Context, ids []string) (map[string][]Upstream, error) {
	out := make(map[string][]Upstream, len(ids))
	err := c.Entities.InTx(ctx, false, func(tx store.Tx) error {
		for _, id := range ids {
			edges, rows, err := store.UpstreamOf(ctx, tx, id)
			if err != nil {
				return err
			}
			out[id] = upstreams(id, edges, rows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// upstreams maps the lineage edges into id, with the rows of their upstream ends, to
// the projection's Upstream.
func upstreams(id string, edges []store.LineageEdge, rows map[string]store.Row) []Upstream {
	var out []Upstream
	for _, e := range edges {
		n, ok := rows[e.FromEntity]
		if e.ToEntity != id || !ok {
			continue
		}
		up := Upstream{Kind: n.Kind, ID: n.ID, FQN: n.FQN}
		if e.LineageDetails != nil {
			for _, cl := range e.LineageDetails.ColumnsLineage {
				up.Columns = append(up.Columns, ColumnEdge{From: cl.FromColumns, To: cl.ToColumn})
			}
		}
		out = append(out, up)
	}
	return out
}

// Resolve implements Source with a read of the entity's row alone: the projection
// needs only its id, not its document, relations and computed fields.
func (c *CatalogSource) Resolve(ctx context.Context, kind, fqn string) (string, error) {
	if _, err := c.Entities.Registry().Lookup(kind); err != nil {
		return "", err
	}
	fqn, err := meridian.NormalizeFQN(fqn)
	if err != nil {
		return "", err
	}
	var id string
	err = c.Entities.InTx(ctx, false, func(tx store.Tx) error {
		r, err := tx.GetByFQN(ctx, kind, fqn)
		id = r.ID
		return err
	})
	return id, err
}

// eachPage is how many entities one read transaction of Each lists.
const eachPage = 500

// Each implements Source, kind by kind, a page per read transaction.
func (c *CatalogSource) Each(ctx context.Context, f func(kind, id string) error) error {
	for _, k := range c.Entities.Registry().Kinds() {
		var after *store.Cursor
		for {
			var ids []string
			err := c.Entities.InTx(ctx, false, func(tx store.Tx) error {
				rows, _, err := tx.List(ctx, store.ListQuery{Kind: k.Name, Include: store.IncludeAll, After: after, Limit: eachPage})
				if err != nil {
					return err
				}
				for _, r := range rows {
					ids = append(ids, r.ID)
				}
				if n := len(rows); n > 0 {
					after = &store.Cursor{Name: rows[n-1].Name, ID: rows[n-1].ID}
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, id := range ids {
				if err := f(k.Name, id); err != nil {
					return err
				}
			}
			if len(ids) < eachPage {
				break
			}
		}
	}
	return nil
}

var _ Outbox = (*CatalogSource)(nil)

// Mark implements Outbox.
func (c *CatalogSource) Mark(ctx context.Context) (store.OutboxMark, error) {
	var m store.OutboxMark
	err := c.Entities.InTx(ctx, false, func(tx store.Tx) error {
		var err error
		m, err = store.ReadOutboxMark(ctx, tx)
		return err
	})
	return m, err
}

// EventsAfter implements Outbox.
func (c *CatalogSource) EventsAfter(ctx context.Context, after int64, limit int) ([]meridian.ChangeEvent, error) {
	var out []meridian.ChangeEvent
	err := c.Entities.InTx(ctx, false, func(tx store.Tx) error {
		var err error
		out, err = tx.Events(ctx, store.EventQuery{After: after, Limit: limit})
		return err
	})
	return out, err
}

// resolveCacheSize bounds the FQNs a resolveCache remembers.
const resolveCacheSize = 100_000

// resolveCache is a Source that remembers the ids Resolve found (at most
// resolveCacheSize of them), for the duration of one rebuild: an entity deleted or
// renamed meanwhile is re-projected by its change event afterwards.
type resolveCache struct {
	Source
	mu  sync.Mutex
	ids map[[2]string]string
}

func newResolveCache(src Source) *resolveCache {
	return &resolveCache{Source: src, ids: map[[2]string]string{}}
}

// Resolve implements Source.
func (r *resolveCache) Resolve(ctx context.Context, kind, fqn string) (string, error) {
	k := [2]string{kind, fqn}
	r.mu.Lock()
	id, ok := r.ids[k]
	r.mu.Unlock()
	if ok {
		return id, nil
	}
	id, err := r.Source.Resolve(ctx, kind, fqn)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	if len(r.ids) < resolveCacheSize {
		r.ids[k] = id
	}
	r.mu.Unlock()
	return id, nil
}
