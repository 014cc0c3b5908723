package store

import (
	"bytes"
	"context"
	"slices"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// readSet is a Tx that records the reads made through it, so that work done against a
// read snapshot can be checked under the writer: replay makes the same reads in the
// write transaction and reports whether every one answers as it did. Get, GetByFQN,
// Related and Relations are recorded; any other read (a list, a search, a module's
// SQL, …) marks the set as not replayable, and so does an error other than
// ENotFound.
//
// This is how a create does its pure CPU work (the draft, beforeWrite, encoding) outside
// the single writer (optimistic.go): beforeWrite's outcome depends on the catalog only
// through these reads, so when they answer alike under the writer, running it there
// would have produced the same document.
//
// A row read twice (a tag named by several columns) is read from the database and
// replayed once: in one snapshot, and in one write transaction, it answers alike.
type readSet struct {
	Tx
	reads      []func(ctx context.Context, tx Tx) bool // each re-reads and compares (not rows)
	unreplayed bool                                    // a read that cannot be replayed was made
	rows       map[RowKey]rowRead                      // the rows read, by key
	shared     *recentRows                             // rows other sets found; nil for none
	// claimed is the key of the row the write inserts, read (claim) to make sure it is
	// absent; replay leaves it to the insert on a ConflictKeeper.
	claimed RowKey
}

// rowRead is the answer to a row read.
type rowRead struct {
	row Row
	err error
}

// readRow reads the row key names: by id when it has one, else by FQN.
func readRow(ctx context.Context, tx Tx, key RowKey) (Row, error) {
	if key.ID != "" {
		return tx.Get(ctx, key.Kind, key.ID)
	}
	return tx.GetByFQN(ctx, key.Kind, key.FQN)
}

// row answers a row read from the set when it was made before, else from the rows
// other sets found lately (shared) or the database, and records it. An error other
// than ENotFound makes the set not replayable.
func (r *readSet) row(ctx context.Context, key RowKey) (Row, error) {
	if rr, ok := r.rows[key]; ok {
		return rr.row, rr.err
	}
	row, found := r.shared.get(key)
	var err error
	if !found {
		if row, err = readRow(ctx, r.Tx, key); err == nil {
			r.shared.put(key, row)
		}
	}
	if r.rows == nil {
		r.rows = map[RowKey]rowRead{}
	}
	r.rows[key] = rowRead{row, err}
	if err != nil && meridian.ErrorCode(err) != meridian.ENotFound {
		r.unreplayed = true
	}
	return row, err
}

func (r *readSet) Get(ctx context.Context, kind, id string) (Row, error) {
	return r.row(ctx, RowKey{Kind: kind, ID: id})
}

func (r *readSet) GetByFQN(ctx context.Context, kind, fqn string) (Row, error) {
	return r.row(ctx, RowKey{Kind: kind, FQN: fqn})
}

// claim reads the row a create is about to insert, by kind and FQN, as GetByFQN does,
// and records its key: under the writer, the insert checks that the row is still
// absent on a ConflictKeeper, and replay reads it again elsewhere.
func (r *readSet) claim(ctx context.Context, kind, fqn string) (Row, error) {
	r.claimed = RowKey{Kind: kind, FQN: fqn}
	return r.row(ctx, r.claimed)
}

func (r *readSet) Related(ctx context.Context, id string, types []string, inverse bool) ([]RelatedRow, error) {
	rows, err := r.Tx.Related(ctx, id, types, inverse)
	if err != nil {
		r.unreplayed = true
		return rows, err
	}
	types = slices.Clone(types)
	r.reads = append(r.reads, func(ctx context.Context, tx Tx) bool {
		now, err := tx.Related(ctx, id, types, inverse)
		return err == nil && slices.EqualFunc(rows, now, func(a, b RelatedRow) bool { return a.Type == b.Type && sameRow(a.Row, b.Row) })
	})
	return rows, nil
}

func (r *readSet) Relations(ctx context.Context, q RelationQuery) ([]Relation, error) {
	rels, err := r.Tx.Relations(ctx, q)
	if err != nil {
		r.unreplayed = true
		return rels, err
	}
	r.reads = append(r.reads, func(ctx context.Context, tx Tx) bool {
		now, err := tx.Relations(ctx, q)
		return err == nil && slices.EqualFunc(rels, now, sameRelation)
	})
	return rels, nil
}

// The reads that are not replayed.

func (r *readSet) List(ctx context.Context, q ListQuery) ([]Row, int, error) {
	r.unreplayed = true
	return r.Tx.List(ctx, q)
}

func (r *readSet) Versions(ctx context.Context, id string) ([][]byte, error) {
	r.unreplayed = true
	return r.Tx.Versions(ctx, id)
}

func (r *readSet) Version(ctx context.Context, id string, v meridian.Version) ([]byte, error) {
	r.unreplayed = true
	return r.Tx.Version(ctx, id, v)
}

func (r *readSet) Events(ctx context.Context, q EventQuery) ([]meridian.ChangeEvent, error) {
	r.unreplayed = true
	return r.Tx.Events(ctx, q)
}

func (r *readSet) Search(ctx context.Context, q search.Query) (search.Result, error) {
	r.unreplayed = true
	return r.Tx.Search(ctx, q)
}

func (r *readSet) Setting(ctx context.Context, key string) (string, error) {
	r.unreplayed = true
	return r.Tx.Setting(ctx, key)
}

func (r *readSet) SQL() SQL {
	r.unreplayed = true
	return r.Tx.SQL()
}

// replay reports whether every recorded read answers in tx as it did, but for the
// claimed row on a ConflictKeeper, whose absence the write's Insert checks.
// The rows are read again in one call on a RowBatcher, one by one otherwise. A row
// that seen holds is not read again: seen is what tx answered for rows found in it
// (nil for none), and replay adds the rows it finds.
func (r *readSet) replay(ctx context.Context, tx Tx, seen seenRows) bool {
	if r.unreplayed {
		return false
	}
	_, insertChecks := tx.(ConflictKeeper)
	keys := make([]RowKey, 0, len(r.rows))
	for key, was := range r.rows {
		if !seen.holds(key, was) && !(insertChecks && key == r.claimed) {
			keys = append(keys, key)
		}
	}
	answer := func(i int) (Row, error) { return readRow(ctx, tx, keys[i]) }
	if b, ok := tx.(RowBatcher); ok && len(keys) > 1 {
		rows, errs := b.GetRows(ctx, keys)
		answer = func(i int) (Row, error) { return rows[i], errs[i] }
	}
	for i, key := range keys {
		was := r.rows[key]
		if now, err := answer(i); !sameAnswer(was.row, was.err, now, err) {
			return false
		}
		seen.add(key, was)
	}
	for _, read := range r.reads {
		if !read(ctx, tx) {
			return false
		}
	}
	return true
}

// seenRows is what a write transaction answered for rows found in it, while that
// answer stands: BulkCreateOrUpdate keeps one across the prepared creates of a chunk,
// and a Group across those of a group (withPrepared). Prepared creates only insert new
// entities (their rows, relations, snapshots, search documents and events), so the
// rows of other entities that one create's replay found (the parent, tags,
// classifications that the tables of a chunk or group share) answer alike for the
// next, and are not read again. An absence is never kept: an inserted entity may fill
// it.
type seenRows map[RowKey]Row

// holds reports whether seen has key's row, found, as was answered it.
func (seen seenRows) holds(key RowKey, was rowRead) bool {
	row, ok := seen[key]
	return ok && was.err == nil && sameRow(row, was.row)
}

// add keeps a row found.
func (seen seenRows) add(key RowKey, was rowRead) {
	if seen != nil && was.err == nil {
		seen[key] = was.row
	}
}

// sameAnswer reports whether a row read answered now (row, err) as it did (was,
// wasErr): the same row, or ENotFound both times.
func sameAnswer(was Row, wasErr error, row Row, err error) bool {
	if wasErr != nil {
		return meridian.ErrorCode(wasErr) == meridian.ENotFound && meridian.ErrorCode(err) == meridian.ENotFound
	}
	return err == nil && sameRow(was, row)
}

func sameRow(a, b Row) bool {
	return a.ID == b.ID && a.Kind == b.Kind && a.Name == b.Name && a.FQN == b.FQN && a.Version == b.Version &&
		a.UpdatedAt == b.UpdatedAt && a.UpdatedBy == b.UpdatedBy && a.Deleted == b.Deleted && bytes.Equal(a.Doc, b.Doc)
}

func sameRelation(a, b Relation) bool {
	return a.FromID == b.FromID && a.FromKind == b.FromKind && a.ToID == b.ToID && a.ToKind == b.ToKind &&
		a.Type == b.Type && bytes.Equal(a.Doc, b.Doc)
}
