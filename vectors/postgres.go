package vectors

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/pgvector/pgvector-go"

	"github.com/meridian-catalog/meridian/store"
)

// embeddingArg is a vector as the dialect stores it: a halfvec on PostgreSQL, float16
// bytes on SQLite.
func embeddingArg(d store.Dialect, v []float32) any {
	if d == store.DialectPostgres {
		return pgvector.NewHalfVector(v)
	}
	return encodeHalf(v)
}

// ensureHNSW creates the partial HNSW index of a dimension on first use. The dimension
// is an integer within MaxDimension, never text from a caller.
func (ix *Index) ensureHNSW(ctx context.Context, db store.SQL, dim int) error {
	ix.hnswMu.Lock()
	defer ix.hnswMu.Unlock()
	if ix.hnsw[dim] {
		return nil
	}
	if _, err := db.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS vectors_hnsw_%[1]d ON vectors
USING hnsw ((embedding::halfvec(%[1]d)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 128) WHERE dim = %[1]d`, dim)); err != nil {
		return err
	}
	ix.hnsw[dim] = true
	return nil
}

// Bounds of hnsw.ef_search, the candidate list of an HNSW scan's first pass. An
// iterative scan goes on past it until the LIMIT is met, so it need not cover the
// LIMIT; a larger one costs time on every search (EXPLAIN ANALYZE at 10,000 rows, a
// search for 400 rows: 20 ms at 1,000, 6.9 ms at 200, 5.5 ms at 100, in one run;
// the gap was smaller in others), and 100 let recall@10 on 10,000 vectors fall to
// 0.948 in one run.
const (
	minEfSearch = 200
	maxEfSearch = 1000
)

// Rows the kNN query asks for per entity wanted: an entity has one row per chunk, so
// k entities need more than k rows. Two per entity answer k entities in practice (at
// 100,000 tables, 200 rows held 157 to 185 tables), and an HNSW scan past its first
// pass costs about as much again (k = 100: 8.7 ms for 200 rows, 17.7 ms for 400 in one
// run). When the rows hold fewer than k entities and more rows exist, the query runs
// again for twice as many, up to MaxChunks per entity, which holds every chunk.
const firstRowsPerEntity = 2

// searchPostgres runs the kNN query on the dimension's HNSW index, with iterative
// scans so filters do not starve the answer, for enough rows to hold q.K entities.
func (ix *Index) searchPostgres(ctx context.Context, db store.SQL, q Query) ([]Hit, error) {
	if err := ix.configureSearch(ctx, db, q.K); err != nil {
		return nil, err
	}
	most := MaxChunks * q.K
	for limit := firstRowsPerEntity * q.K; ; limit = min(2*limit, most) {
		rows, err := knnPostgres(ctx, db, q, limit)
		if err != nil {
			return nil, err
		}
		n := len(rows)
		hits := best(rows, q.K)
		if len(hits) == q.K || n < limit || limit == most {
			return hits, nil
		}
	}
}

// knnPostgres returns the limit rows nearest to q.Vector that pass q's filters.
func knnPostgres(ctx context.Context, db store.SQL, q Query, limit int) ([]Hit, error) {
	query, args := pgSearch(q, limit)
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var d float64
		if err := rows.Scan(&h.EntityID, &h.Chunk, &h.Kind, &h.FQN, &h.Text, &d); err != nil {
			return nil, err
		}
		h.Score = 1 - d
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// configureSearch sets, for the transaction, how a search of k entities scans: an
// iterative HNSW scan with an ef_search within minEfSearch..maxEfSearch, and no sort.
// The only plan that answers ORDER BY distance LIMIT without sorting every row is the
// HNSW scan; without statistics (a table loaded since the last ANALYZE, or autovacuum
// off) the planner took the table for a few rows and read all of them by the primary
// key, then sorted them (16 to 90 ms at 10,000 rows against 5 to 12 through HNSW).
func (ix *Index) configureSearch(ctx context.Context, db store.SQL, k int) error {
	ef := min(max(k, minEfSearch), maxEfSearch)
	var seqscan any // unchanged
	if ix.forceIndex {
		seqscan = "off"
	}
	var a, b, c, d string
	return db.QueryRow(ctx, `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true),
set_config('enable_sort', 'off', true), set_config('enable_seqscan', COALESCE($2, current_setting('enable_seqscan')), true)`,
		strconv.Itoa(ef), seqscan).Scan(&a, &b, &c, &d)
}

// pgSearch is the kNN statement of q returning at most limit rows, and its arguments.
func pgSearch(q Query, limit int) (string, []any) {
	args := []any{pgvector.NewHalfVector(q.Vector), q.Model, limit}
	var where strings.Builder
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&where, " AND "+cond, len(args))
	}
	if len(q.Kinds) > 0 {
		add("kind = ANY($%d)", q.Kinds)
	}
	if len(q.Services) > 0 {
		add("service = ANY($%d)", q.Services)
	}
	if len(q.Tags) > 0 {
		add("tags && $%d", q.Tags)
	}
	deleted := false
	if q.Deleted != nil {
		deleted = *q.Deleted
	}
	add("deleted = $%d", deleted)
	return fmt.Sprintf(`SELECT entity_id, chunk, kind, fqn, text, embedding::halfvec(%[1]d) <=> $1 AS distance
FROM vectors WHERE dim = %[1]d AND model = $2%[2]s
ORDER BY embedding::halfvec(%[1]d) <=> $1 LIMIT $3`, q.Dim, where.String()), args
}
