package vectors

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// Bounds of what the index stores and answers.
const (
	// MaxDimension is the longest vector stored: pgvector's HNSW limit for halfvec.
	MaxDimension = 4000
	// MaxChunks is how many chunks of text one entity has at most, per model.
	MaxChunks = 32
	// MaxK is how many entities one search returns at most.
	MaxK = 1000
)

// Entry is what the index keeps about one entity for one model: its chunks of text
// with their vectors, and the columns searches filter by.
type Entry struct {
	EntityID string
	Kind     string
	FQN      string
	Service  string   // compared case-insensitively
	Tags     []string // tag and glossary term FQNs, compared case-insensitively
	Deleted  bool
	Model    string
	Dim      int
	Hash     string // the content hash the indexer computed over the chunks and filters
	Chunks   []Chunk
}

// Chunk is one passage of an entity's text and its vector.
type Chunk struct {
	Text   string
	Vector []float32
}

// Query is a nearest-neighbour search among the vectors of one model and dimension:
// the K entities whose best chunk is closest to Vector by cosine, after the filters.
// Empty filters let everything through; Kinds, Services and Tags match any of their
// values (Tags: any of the entity's tags). Deleted nil searches active entities only.
type Query struct {
	Model    string
	Dim      int
	Vector   []float32
	K        int
	Kinds    []string
	Services []string
	Tags     []string
	Deleted  *bool
}

// Hit is one entity found, with the chunk that matched best and its cosine similarity.
type Hit struct {
	EntityID string
	Kind     string
	FQN      string
	Chunk    int
	Text     string
	Score    float64
}

// Index stores entity vectors in the catalog database and searches them: with an HNSW
// index (pgvector, cosine, iterative scans for filtered queries) on PostgreSQL, and
// with a scan of a compact in-memory matrix on SQLite (one-bit sign codes first when it
// is large, then int8 codes; scan.go), the best rescored from the stored float16
// vectors. It is safe for concurrent use; on SQLite the matrix of a
// model is loaded on its first search and kept in sync with every write, this
// process's and others'.
type Index struct {
	db  store.Driver
	mem *memory

	hnswMu sync.Mutex
	hnsw   map[int]bool // dimensions known to have their HNSW index (PostgreSQL)
	// forceIndex makes PostgreSQL searches use the HNSW index even on small tables (tests).
	forceIndex bool
}

// NewIndex returns the index over a catalog opened with Module.
func NewIndex(db store.Driver) *Index {
	return &Index{db: db, mem: newMemory(), hnsw: map[int]bool{}}
}

// validate checks an entry against the index's bounds.
func (e Entry) validate() error {
	switch {
	case e.EntityID == "" || e.Kind == "":
		return fmt.Errorf("vectors: an entry needs an entity id and a kind")
	case e.Model == "":
		return fmt.Errorf("vectors: an entry needs a model")
	case e.Dim < 1 || e.Dim > MaxDimension:
		return fmt.Errorf("vectors: dimension %d is not between 1 and %d", e.Dim, MaxDimension)
	case len(e.Chunks) > MaxChunks:
		return fmt.Errorf("vectors: %d chunks, at most %d", len(e.Chunks), MaxChunks)
	}
	for i, c := range e.Chunks {
		if len(c.Vector) != e.Dim {
			return fmt.Errorf("vectors: chunk %d has %d dimensions, the entry %d", i, len(c.Vector), e.Dim)
		}
	}
	return nil
}

// Upsert replaces the entity's vectors of the entry's model and dimension with the
// entry's chunks (none removes them). Errors: a malformed entry, and those of the
// driver.
func (ix *Index) Upsert(ctx context.Context, e Entry) error { return ix.UpsertMany(ctx, []Entry{e}) }

// UpsertMany upserts entries in one transaction.
func (ix *Index) UpsertMany(ctx context.Context, entries []Entry) error {
	for i := range entries {
		if err := entries[i].validate(); err != nil {
			return err
		}
		entries[i].Service, entries[i].Tags = strings.ToLower(entries[i].Service), search.Lower(entries[i].Tags)
	}
	return ix.write(ctx, func(db store.SQL) error { return ix.upsert(ctx, db, entries) }, func(m *memory) {
		for _, e := range entries {
			m.upsert(e)
		}
	})
}

// vectorColumns are the columns of one row of vectors, in the order upsert binds them.
const vectorColumns = 12

// batchRows is how many rows one multi-row statement of upsert deletes or inserts:
// within both drivers' limits on bound parameters.
const batchRows = 500

// upsert replaces the entries' vectors with a DELETE per model and dimension and
// multi-row INSERTs, batchRows rows a statement: a round trip per row made indexing a
// backlog on PostgreSQL slow.
func (ix *Index) upsert(ctx context.Context, db store.SQL, entries []Entry) error {
	type row struct {
		e     *Entry
		chunk int
	}
	type key struct {
		s  space
		id string
	}
	last := map[key]int{} // an entity given twice keeps its last entry
	for i, e := range entries {
		last[key{space{e.Model, e.Dim}, e.EntityID}] = i
	}
	var rows []row
	ids := map[space][]any{}
	for i := range entries {
		e := &entries[i]
		if last[key{space{e.Model, e.Dim}, e.EntityID}] != i {
			continue
		}
		if db.Dialect() == store.DialectPostgres {
			if err := ix.ensureHNSW(ctx, db, e.Dim); err != nil {
				return err
			}
		}
		s := space{e.Model, e.Dim}
		ids[s] = append(ids[s], e.EntityID)
		for c := range e.Chunks {
			rows = append(rows, row{e, c})
		}
	}
	for s, l := range ids {
		for part := range slices.Chunk(l, batchRows) {
			if _, err := db.Exec(ctx, "DELETE FROM vectors WHERE model = $1 AND dim = $2 AND entity_id IN ("+placeholders(3, len(part), 1)+")",
				append([]any{s.model, s.dim}, part...)...); err != nil {
				return err
			}
		}
	}
	for part := range slices.Chunk(rows, batchRows) {
		args := make([]any, 0, vectorColumns*len(part))
		for _, r := range part {
			e, c := r.e, r.e.Chunks[r.chunk]
			var tags any = e.Tags
			if db.Dialect() == store.DialectSQLite {
				b, _ := json.Marshal(e.Tags)
				tags = string(b)
			}
			args = append(args, e.EntityID, e.Model, e.Dim, r.chunk, e.Hash, e.Kind, e.FQN, e.Service, tags, e.Deleted,
				c.Text, embeddingArg(db.Dialect(), c.Vector))
		}
		if _, err := db.Exec(ctx, `INSERT INTO vectors (entity_id, model, dim, chunk, content_hash, kind, fqn, service, tags, deleted, text, embedding)
VALUES `+placeholders(1, len(part), vectorColumns), args...); err != nil {
			return err
		}
	}
	return nil
}

// placeholders is n groups of width numbered parameters from $first, "($1, $2), ($3,
// $4)" (or "$1, $2" when width is 1), for a statement built from counts, never input.
func placeholders(first, n, width int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		if width > 1 {
			b.WriteByte('(')
		}
		for j := range width {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d", first+i*width+j)
		}
		if width > 1 {
			b.WriteByte(')')
		}
	}
	return b.String()
}

// Delete removes every vector of the entity, of every model. Errors: the driver's.
func (ix *Index) Delete(ctx context.Context, entityID string) error {
	return ix.write(ctx, func(db store.SQL) error {
		_, err := db.Exec(ctx, "DELETE FROM vectors WHERE entity_id = $1", entityID)
		return err
	}, func(m *memory) { m.remove(entityID) })
}

// SetDeleted marks every vector of the entity deleted or not, as its entity is soft
// deleted or restored. Errors: the driver's.
func (ix *Index) SetDeleted(ctx context.Context, entityID string, deleted bool) error {
	return ix.write(ctx, func(db store.SQL) error {
		_, err := db.Exec(ctx, "UPDATE vectors SET deleted = $1 WHERE entity_id = $2", deleted, entityID)
		return err
	}, func(m *memory) { m.setDeleted(entityID, deleted) })
}

// Stored returns the content hash and deleted flag stored for an entity's vectors of a
// model and dimension; found is false when it has none.
func (ix *Index) Stored(ctx context.Context, entityID, model string, dim int) (hash string, deleted, found bool, err error) {
	m, err := ix.storedMany(ctx, []string{entityID}, model, dim)
	st, found := m[entityID]
	return st.hash, st.deleted, found, err
}

// stored is what Stored returns of one entity.
type stored struct {
	hash    string
	deleted bool
}

// storedMany is Stored of several entities, batchRows a query; those with no vectors
// are missing from the map.
func (ix *Index) storedMany(ctx context.Context, ids []string, model string, dim int) (map[string]stored, error) {
	out := make(map[string]stored, len(ids))
	err := ix.read(ctx, func(db store.SQL) error {
		for part := range slices.Chunk(ids, batchRows) {
			args := []any{model, dim}
			for _, id := range part {
				args = append(args, id)
			}
			rows, err := db.Query(ctx, "SELECT entity_id, content_hash, deleted FROM vectors WHERE model = $1 AND dim = $2 AND chunk = 0 AND entity_id IN ("+
				placeholders(3, len(part), 1)+")", args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				var st stored
				if err := rows.Scan(&id, &st.hash, &st.deleted); err != nil {
					rows.Close()
					return err
				}
				out[id] = st
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// Count returns how many entities have vectors of the model and dimension.
func (ix *Index) Count(ctx context.Context, model string, dim int) (int, error) {
	var n int
	err := ix.read(ctx, func(db store.SQL) error {
		return db.QueryRow(ctx, "SELECT COUNT(*) FROM vectors WHERE model = $1 AND dim = $2 AND chunk = 0", model, dim).Scan(&n)
	})
	return n, err
}

// Prune removes the vectors of every model and dimension but the given one, as a
// reindex after a model change ends. It returns how many rows went.
func (ix *Index) Prune(ctx context.Context, model string, dim int) (int64, error) {
	var n int64
	err := ix.write(ctx, func(db store.SQL) error {
		var err error
		n, err = db.Exec(ctx, "DELETE FROM vectors WHERE model <> $1 OR dim <> $2", model, dim)
		return err
	}, func(m *memory) { m.keepOnly(space{model, dim}) })
	return n, err
}

// Search returns the q.K entities nearest to q.Vector, best first, each with its best
// chunk. Errors: a malformed query, and those of the driver.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	switch {
	case q.Model == "":
		return nil, fmt.Errorf("vectors: a search needs a model")
	case q.Dim < 1 || q.Dim > MaxDimension || len(q.Vector) != q.Dim:
		return nil, fmt.Errorf("vectors: the query vector has %d dimensions, the search %d", len(q.Vector), q.Dim)
	case q.K < 1 || q.K > MaxK:
		return nil, fmt.Errorf("vectors: k must be between 1 and %d", MaxK)
	}
	q.Services, q.Tags, q.Vector = search.Lower(q.Services), search.Lower(q.Tags), Normalise(q.Vector)
	var hits []Hit
	err := ix.read(ctx, func(db store.SQL) error {
		var err error
		if db.Dialect() == store.DialectPostgres {
			hits, err = ix.searchPostgres(ctx, db, q)
		} else {
			hits, err = ix.searchMemory(ctx, db, q)
		}
		return err
	})
	return hits, err
}

// write runs f in a writable transaction that also counts the write, and after the
// commit applies the change to the in-memory matrices when they were current.
func (ix *Index) write(ctx context.Context, f func(store.SQL) error, apply func(*memory)) error {
	// Vectors record no change event: on PostgreSQL their writes need not wait for the
	// lock that orders entity writes, nor hold them back (store.InUnorderedTx).
	var g int64
	err := store.InUnorderedTx(ctx, ix.db, func(tx store.Tx) error {
		db := tx.SQL()
		// The generation row first, as a hard delete takes it (removeEntity): two
		// writers that lock it and vector rows in the same order never wait on each
		// other in a cycle.
		var err error
		if g, err = bumpGeneration(ctx, db); err != nil {
			return err
		}
		return f(db)
	})
	if err != nil {
		return err
	}
	ix.mem.applied(g, apply)
	return nil
}

func (ix *Index) read(ctx context.Context, f func(store.SQL) error) error {
	tx, err := ix.db.Begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return f(tx.SQL())
}

// best keeps each entity's best chunk and returns the k best entities.
func best(hits []Hit, k int) []Hit {
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.EntityID, b.EntityID), cmp.Compare(a.Chunk, b.Chunk))
	})
	seen := map[string]bool{}
	out := hits[:0]
	for _, h := range hits {
		if seen[h.EntityID] {
			continue
		}
		seen[h.EntityID] = true
		out = append(out, h)
		if len(out) == k {
			break
		}
	}
	return out
}
