package vectors

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/meridian-catalog/meridian/store/drivertest"
)

// unit returns a deterministic pseudo-random unit vector.
func unit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return Normalise(v)
}

func entry(id, kind, service string, tags []string, model string, vecs ...[]float32) Entry {
	e := Entry{EntityID: id, Kind: kind, FQN: "svc." + id, Service: service, Tags: tags, Model: model, Dim: len(vecs[0]), Hash: "h-" + id}
	for i, v := range vecs {
		e.Chunks = append(e.Chunks, Chunk{Text: id + " chunk " + string(rune('0'+i)), Vector: v})
	}
	return e
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.EntityID
	}
	return out
}

// TestIndexConformance runs the index's contract on both drivers.
func TestIndexConformance(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		ctx := context.Background()
		db := open(t, Module())
		ix := NewIndex(db)
		r := rand.New(rand.NewPCG(1, 2))
		const dim = 512
		a, b, c, d := unit(r, dim), unit(r, dim), unit(r, dim), unit(r, dim)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(ix.Upsert(ctx, entry("a", "table", "Warehouse", []string{"PII.Sensitive"}, "m1", a, c)))
		must(ix.Upsert(ctx, entry("b", "table", "lake", nil, "m1", b)))
		must(ix.Upsert(ctx, entry("d", "dashboard", "bi", nil, "m1", d)))
		search := func(q Query) []Hit {
			t.Helper()
			if q.Model == "" {
				q.Model = "m1"
			}
			q.Dim, q.K = len(q.Vector), max(q.K, 10)
			hits, err := ix.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return hits
		}

		t.Run("the nearest entity comes first, once, with its best chunk", func(t *testing.T) {
			hits := search(Query{Vector: c})
			if len(hits) != 3 || hits[0].EntityID != "a" || hits[0].Chunk != 1 || hits[0].Text != "a chunk 1" || math.Abs(hits[0].Score-1) > 0.01 {
				t.Fatalf("hits = %+v", hits)
			}
			if hits[0].Kind != "table" || hits[0].FQN != "svc.a" {
				t.Errorf("hit = %+v", hits[0])
			}
		})
		t.Run("filters by kind, service and tag, case-insensitively", func(t *testing.T) {
			if got := ids(search(Query{Vector: a, Kinds: []string{"dashboard"}})); !slices.Equal(got, []string{"d"}) {
				t.Errorf("kind = %v", got)
			}
			if got := ids(search(Query{Vector: a, Services: []string{"LAKE"}})); !slices.Equal(got, []string{"b"}) {
				t.Errorf("service = %v", got)
			}
			if got := ids(search(Query{Vector: b, Tags: []string{"pii.sensitive"}})); !slices.Equal(got, []string{"a"}) {
				t.Errorf("tags = %v", got)
			}
		})
		t.Run("another model's vectors are never found", func(t *testing.T) {
			if got := search(Query{Model: "m2", Vector: a}); len(got) != 0 {
				t.Errorf("model m2 found %v", ids(got))
			}
			if got := search(Query{Vector: a[:256]}); len(got) != 0 {
				t.Errorf("dimension 256 found %v", ids(got))
			}
		})
		t.Run("soft delete hides, restore shows, delete removes", func(t *testing.T) {
			must(ix.SetDeleted(ctx, "b", true))
			if got := ids(search(Query{Vector: b})); slices.Contains(got, "b") {
				t.Errorf("soft-deleted b found: %v", got)
			}
			yes := true
			if got := ids(search(Query{Vector: b, Deleted: &yes})); !slices.Equal(got, []string{"b"}) {
				t.Errorf("deleted search = %v", got)
			}
			must(ix.SetDeleted(ctx, "b", false))
			if got := ids(search(Query{Vector: b})); got[0] != "b" {
				t.Errorf("restored b: %v", got)
			}
			must(ix.Delete(ctx, "b"))
			if got := ids(search(Query{Vector: b})); slices.Contains(got, "b") {
				t.Errorf("deleted b found: %v", got)
			}
		})
		t.Run("kind and soft delete follow a row moved by a removal", func(t *testing.T) {
			f, g := unit(r, dim), unit(r, dim)
			must(ix.Upsert(ctx, entry("f", "topic", "kafka", nil, "m1", f, unit(r, dim))))
			must(ix.Upsert(ctx, entry("g", "glossary", "terms", nil, "m1", g)))
			must(ix.SetDeleted(ctx, "g", true))
			must(ix.Delete(ctx, "f")) // on SQLite, g's row moves into one of f's
			yes := true
			for _, c := range []struct {
				name string
				q    Query
				want []string
			}{
				{"live glossary", Query{Vector: g, Kinds: []string{"glossary"}}, nil},
				{"deleted glossary", Query{Vector: g, Kinds: []string{"glossary"}, Deleted: &yes}, []string{"g"}},
				{"deleted topic", Query{Vector: g, Kinds: []string{"topic"}, Deleted: &yes}, nil},
				{"live topic", Query{Vector: f, Kinds: []string{"topic"}}, nil},
			} {
				if got := ids(search(c.q)); !slices.Equal(got, c.want) {
					t.Errorf("%s: %v, want %v", c.name, got, c.want)
				}
			}
			must(ix.Delete(ctx, "g"))
		})
		t.Run("an upsert replaces the entity's chunks and hash", func(t *testing.T) {
			e := entry("a", "table", "warehouse", nil, "m1", b)
			e.Hash = "h2"
			must(ix.Upsert(ctx, e))
			hits := search(Query{Vector: c})
			for _, h := range hits {
				if h.EntityID == "a" && h.Chunk != 0 {
					t.Errorf("old chunk kept: %+v", h)
				}
			}
			hash, deleted, found, err := ix.Stored(ctx, "a", "m1", dim)
			if err != nil || !found || deleted || hash != "h2" {
				t.Errorf("Stored = %q %v %v %v", hash, deleted, found, err)
			}
			if _, _, found, _ := ix.Stored(ctx, "a", "m2", dim); found {
				t.Error("Stored found model m2")
			}
		})
		t.Run("another process's writes are seen", func(t *testing.T) {
			other := NewIndex(db)
			e := unit(r, dim)
			must(other.Upsert(ctx, entry("e", "topic", "kafka", nil, "m1", e)))
			if got := ids(search(Query{Vector: e})); got[0] != "e" {
				t.Errorf("other process's upsert not seen: %v", got)
			}
			must(other.Delete(ctx, "e"))
			if got := ids(search(Query{Vector: e})); slices.Contains(got, "e") {
				t.Errorf("other process's delete not seen: %v", got)
			}
		})
		t.Run("a hard delete of the entity removes its vectors", func(t *testing.T) {
			tx, err := db.Begin(ctx, true)
			must(err)
			must(Module().OnRemove(ctx, tx.SQL(), "d"))
			must(tx.Commit())
			if got := ids(search(Query{Vector: d})); slices.Contains(got, "d") {
				t.Errorf("removed d found: %v", got)
			}
		})
		t.Run("k entities are found when each has several chunks nearer than the next entity", func(t *testing.T) {
			// Each entity's 4 chunks lie near the query, entity i's nearer than entity
			// i+1's: the 2·k nearest rows hold fewer than k entities.
			query := unit(r, dim)
			want := []string{"k1", "k2", "k3"}
			for i, id := range append(want, "k4") {
				var vecs [][]float32
				for range 4 {
					v := unit(r, dim)
					for j := range v {
						v[j] = query[j] + float32(i+1)*0.05*v[j]
					}
					vecs = append(vecs, Normalise(v))
				}
				must(ix.Upsert(ctx, entry(id, "chart", "bi", nil, "m3", vecs...)))
			}
			hits, err := ix.Search(ctx, Query{Model: "m3", Dim: dim, Vector: query, K: 3})
			must(err)
			if got := ids(hits); !slices.Equal(got, want) {
				t.Errorf("k=3 found %v, want %v", got, want)
			}
		})
		t.Run("prune keeps one model", func(t *testing.T) {
			must(ix.Upsert(ctx, entry("x", "table", "", nil, "m2", a)))
			if _, err := ix.Prune(ctx, "m2", dim); err != nil {
				t.Fatal(err)
			}
			if n, _ := ix.Count(ctx, "m1", dim); n != 0 {
				t.Errorf("m1 kept %d", n)
			}
			if got := ids(search(Query{Model: "m2", Vector: a})); !slices.Equal(got, []string{"x"}) {
				t.Errorf("m2 = %v", got)
			}
		})
		t.Run("malformed entries and queries are refused", func(t *testing.T) {
			bad := []Entry{
				{EntityID: "z", Kind: "table", Model: "m1", Dim: 0},
				{EntityID: "z", Kind: "table", Model: "m1", Dim: MaxDimension + 1},
				{EntityID: "z", Kind: "table", Model: "", Dim: 3},
				{EntityID: "z", Kind: "table", Model: "m1", Dim: 3, Chunks: []Chunk{{Vector: []float32{1}}}},
			}
			for _, e := range bad {
				if err := ix.Upsert(ctx, e); err == nil {
					t.Errorf("%+v accepted", e)
				}
			}
			for _, q := range []Query{{Model: "m1", Dim: 3, Vector: []float32{1, 0}, K: 1}, {Model: "m1", Dim: 2, Vector: []float32{1, 0}, K: MaxK + 1}} {
				if _, err := ix.Search(ctx, q); err == nil {
					t.Errorf("%+v accepted", q)
				}
			}
		})
	})
}
