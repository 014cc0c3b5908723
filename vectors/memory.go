package vectors

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/meridian-catalog/meridian/store"
)

// space is the vectors of one model and dimension: they are only ever compared with
// each other.
type space struct {
	model string
	dim   int
}

// memory holds, for SQLite, one compact matrix per space: int8 codes and a sign code,
// each with a scale, per row (dim + dim/8 + 8 bytes) and the filter columns. gen is the vectors_state generation the
// matrices reflect; a search that reads another one reloads.
type memory struct {
	mu   sync.RWMutex
	gen  int64
	mats map[space]*matrix
}

func newMemory() *memory { return &memory{gen: -1, mats: map[space]*matrix{}} }

// matrix is the rows of one space, each coded twice: int8 codes with a scale, and a
// one-bit sign code (words uint64 per row) with its scale, which a large scan reads
// first (scan.go).
type matrix struct {
	dim      int
	words    int
	rows     []memRow
	codes    []int8 // len(rows)·dim
	scales   []float32
	signs    []uint64 // len(rows)·words
	alphas   []float32
	byEntity map[string][]int
	// The columns every search filters on, one value per row, kept apart from rows: a
	// scan reads 5 bytes a row instead of a whole memRow and the kind's string.
	kinds   []uint32 // the row's kind, as its index in kindIDs
	deleted []bool
	kindIDs map[string]uint32
}

type memRow struct {
	entity  string
	chunk   int
	service string
	tags    []string
}

// applied records a committed write of generation g: when the matrices reflected the
// generation before it, the write is applied to them; otherwise they are dropped and
// the next search reloads.
func (m *memory) applied(g int64, apply func(*memory)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen == g-1 {
		apply(m)
		m.gen = g
		return
	}
	m.gen, m.mats = -1, map[space]*matrix{}
}

// upsert, remove, setDeleted and keepOnly change the loaded matrices; m.mu is held.
func (m *memory) upsert(e Entry) {
	mat := m.mats[space{e.Model, e.Dim}]
	if mat == nil {
		return // loaded from the database when first searched
	}
	mat.remove(e.EntityID)
	for i, c := range e.Chunks {
		mat.add(memRow{entity: e.EntityID, chunk: i, service: e.Service, tags: e.Tags}, e.Kind, e.Deleted, c.Vector)
	}
}

func (m *memory) remove(entityID string) {
	for _, mat := range m.mats {
		mat.remove(entityID)
	}
}

func (m *memory) setDeleted(entityID string, deleted bool) {
	for _, mat := range m.mats {
		for _, i := range mat.byEntity[entityID] {
			mat.deleted[i] = deleted
		}
	}
}

func (m *memory) keepOnly(s space) {
	for k := range m.mats {
		if k != s {
			delete(m.mats, k)
		}
	}
}

func newMatrix(dim int) *matrix {
	return &matrix{dim: dim, words: signWords(dim), byEntity: map[string][]int{}, kindIDs: map[string]uint32{}}
}

func (mat *matrix) add(r memRow, kind string, deleted bool, v []float32) {
	i := len(mat.rows)
	mat.rows = append(mat.rows, r)
	id, ok := mat.kindIDs[kind]
	if !ok {
		id = uint32(len(mat.kindIDs))
		mat.kindIDs[kind] = id
	}
	mat.kinds = append(mat.kinds, id)
	mat.deleted = append(mat.deleted, deleted)
	mat.codes = append(mat.codes, make([]int8, mat.dim)...)
	mat.scales = append(mat.scales, quantise(v, mat.codes[i*mat.dim:]))
	mat.signs = append(mat.signs, make([]uint64, mat.words)...)
	mat.alphas = append(mat.alphas, signCode(v, mat.signs[i*mat.words:(i+1)*mat.words]))
	mat.byEntity[r.entity] = append(mat.byEntity[r.entity], i)
}

// remove deletes an entity's rows, moving the last rows into their places.
func (mat *matrix) remove(entity string) {
	idx := mat.byEntity[entity]
	if len(idx) == 0 {
		return
	}
	delete(mat.byEntity, entity)
	slices.Sort(idx)
	for j := len(idx) - 1; j >= 0; j-- {
		i, last := idx[j], len(mat.rows)-1
		if i != last {
			moved := mat.rows[last]
			mat.rows[i] = moved
			copy(mat.codes[i*mat.dim:(i+1)*mat.dim], mat.codes[last*mat.dim:])
			mat.scales[i] = mat.scales[last]
			copy(mat.signs[i*mat.words:(i+1)*mat.words], mat.signs[last*mat.words:])
			mat.alphas[i] = mat.alphas[last]
			mat.kinds[i], mat.deleted[i] = mat.kinds[last], mat.deleted[last]
			pos := mat.byEntity[moved.entity]
			pos[slices.Index(pos, last)] = i
		}
		mat.rows = mat.rows[:last]
		mat.codes = mat.codes[:last*mat.dim]
		mat.scales = mat.scales[:last]
		mat.signs = mat.signs[:last*mat.words]
		mat.alphas = mat.alphas[:last]
		mat.kinds = mat.kinds[:last]
		mat.deleted = mat.deleted[:last]
	}
}

// load reads a space's rows into a new matrix, in the transaction that read the
// generation.
func load(ctx context.Context, db store.SQL, s space) (*matrix, error) {
	rows, err := db.Query(ctx, `SELECT entity_id, chunk, kind, service, tags, deleted, embedding FROM vectors
WHERE model = $1 AND dim = $2 ORDER BY entity_id, chunk`, s.model, s.dim)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	mat := newMatrix(s.dim)
	for rows.Next() {
		var (
			r          memRow
			kind, tags string
			deleted    bool
			blob       []byte
		)
		if err := rows.Scan(&r.entity, &r.chunk, &kind, &r.service, &tags, &deleted, &blob); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &r.tags); err != nil {
			return nil, fmt.Errorf("vectors: tags of %s: %w", r.entity, err)
		}
		v, err := decodeHalf(blob, s.dim)
		if err != nil {
			return nil, err
		}
		mat.add(r, kind, deleted, v)
	}
	return mat, rows.Err()
}

// matrixFor returns the space's matrix as of the generation the transaction sees,
// loading it when missing or stale. The caller holds m.mu for reading on return.
func (m *memory) matrixFor(ctx context.Context, db store.SQL, s space) (*matrix, error) {
	g, err := generation(ctx, db)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	if mat := m.mats[s]; mat != nil && m.gen == g {
		return mat, nil
	}
	m.mu.RUnlock()
	m.mu.Lock()
	if m.gen != g {
		m.gen, m.mats = g, map[space]*matrix{}
	}
	mat := m.mats[s]
	if mat == nil {
		if mat, err = load(ctx, db, s); err != nil {
			m.mu.Unlock()
			return nil, err
		}
		m.mats[s] = mat
	}
	m.mu.Unlock()
	m.mu.RLock()
	return mat, nil
}

// rescoreFactor is how many candidate rows per wanted entity the int8 scan keeps, so
// that entities with several close chunks leave room for others.
const rescoreFactor = 4

// rescored is how many entities, of k wanted, have their best row by the int8 codes
// rescored exactly: a margin past k, as the int8 scores are close to the exact ones
// (a difference in the third decimal) but not equal.
func rescored(k int) int { return k + k/4 + 10 }

// searchMemory finds the best rows of the space's matrix for the query (scan.go), then
// rescores the best row of each of the best entities exactly from the stored vectors
// and reads their text.
func (ix *Index) searchMemory(ctx context.Context, db store.SQL, q Query) ([]Hit, error) {
	s := space{q.Model, q.Dim}
	mat, err := ix.mem.matrixFor(ctx, db, s)
	if err != nil {
		return nil, err
	}
	found := mat.nearest(q.Vector, filter(q, mat), q.K*rescoreFactor)
	slices.SortFunc(found, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	want := map[string]int{} // entity → chunk
	for _, c := range found {
		if len(want) == rescored(q.K) {
			break
		}
		r := mat.rows[c.row]
		if _, ok := want[r.entity]; !ok {
			want[r.entity] = r.chunk
		}
	}
	ix.mem.mu.RUnlock()
	if len(want) == 0 {
		return nil, nil
	}
	return rescore(ctx, db, q, want)
}

// filter returns the test of q's filters on row i of mat.
func filter(q Query, mat *matrix) func(i int) bool {
	deleted := q.Deleted != nil && *q.Deleted
	var kinds []bool // by kind id; nil for any kind
	if len(q.Kinds) > 0 {
		kinds = make([]bool, len(mat.kindIDs))
		for _, k := range q.Kinds {
			if id, ok := mat.kindIDs[k]; ok {
				kinds[id] = true
			}
		}
	}
	return func(i int) bool {
		if mat.deleted[i] != deleted || kinds != nil && !kinds[mat.kinds[i]] {
			return false
		}
		r := &mat.rows[i]
		if len(q.Services) > 0 && !slices.Contains(q.Services, r.service) {
			return false
		}
		if len(q.Tags) == 0 {
			return true
		}
		for _, t := range r.tags {
			if slices.Contains(q.Tags, t) {
				return true
			}
		}
		return false
	}
}

// rescore reads the stored vector and text of each wanted entity's chunk, and scores
// them exactly.
func rescore(ctx context.Context, db store.SQL, q Query, want map[string]int) ([]Hit, error) {
	args := []any{q.Model, q.Dim}
	for id, chunk := range want {
		args = append(args, id, chunk)
	}
	rows, err := db.Query(ctx, `SELECT entity_id, chunk, kind, fqn, text, embedding FROM vectors
WHERE model = $1 AND dim = $2 AND (entity_id, chunk) IN (VALUES `+placeholders(3, len(want), 2)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var blob []byte
		if err := rows.Scan(&h.EntityID, &h.Chunk, &h.Kind, &h.FQN, &h.Text, &blob); err != nil {
			return nil, err
		}
		if want[h.EntityID] != h.Chunk {
			continue
		}
		v, err := decodeHalf(blob, q.Dim)
		if err != nil {
			return nil, err
		}
		h.Score = float64(dot(q.Vector, v))
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return best(hits, q.K), nil
}
