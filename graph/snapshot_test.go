package graph

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/tggo/goRDFlib/term"
)

// mixedCatalog is a store's worth of every kind of term and description: typed,
// language-tagged and plain literals, blank nodes, a triple two descriptions put, a
// soft-deleted description, and freed ids (descriptions replaced and removed).
func mixedCatalog(tables int) *Store {
	s := NewStore()
	s.Load(syntheticCatalog(tables))
	s.Load(chain(30))
	shared := Triple{IRI(ex + "shared"), IRI(ex + "p"), TypedLiteral("42", "http://www.w3.org/2001/XMLSchema#integer")}
	s.Apply(Delta{Put: []Description{
		{Entity: ex + "a", Triples: []Triple{shared, {IRI(ex + "a"), IRI(rdfsLabel), Term{Kind: KindLiteral, Value: "chat", Lang: "fr"}}}},
		{Entity: ex + "b", Triples: []Triple{shared, {IRI(ex + "b"), IRI(ex + "node"), Blank("b0")}, {Blank("b0"), IRI(ex + "v"), Literal("x")}}},
		{Entity: ex + "gone", Deleted: true, Triples: []Triple{{IRI(ex + "gone"), IRI(rdfsLabel), Literal("hidden")}}},
	}})
	s.Apply(Delta{Remove: []string{ex + "e3", EntityIRI("table", fmt.Sprintf("00000000-0000-0000-0000-%012d", 7))},
		Put: syntheticRange(10, 5)})
	return s
}

// dump lists a store's live triples with their reference counts, its hidden nodes and
// what each description put, by term keys (ids may differ between equal stores).
func dump(s *Store) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	key := func(id uint32) string { return term.TermKey(s.terms[id]) }
	var out []string
	for _, r := range s.triples {
		if r.refs > 0 {
			out = append(out, fmt.Sprintf("T %s %s %s ×%d", key(r.s), key(r.p), key(r.o), r.refs))
		}
	}
	for id := range s.hidden {
		out = append(out, "H "+key(id))
	}
	for iri, o := range s.owners {
		var ts []string
		for _, id := range o.triples {
			r := s.triples[id]
			ts = append(ts, key(r.s)+" "+key(r.p)+" "+key(r.o))
		}
		sort.Strings(ts)
		out = append(out, fmt.Sprintf("O %s deleted=%v %q", iri, o.deleted, ts))
	}
	sort.Strings(out)
	return out
}

// checkIndexes fails unless every live triple is at its recorded place in the three
// indexes, byS is ordered by predicate, and every term reference is counted.
func checkIndexes(t *testing.T, s *Store) {
	t.Helper()
	refs := make([]uint32, len(s.terms))
	for id, r := range s.triples {
		if r.refs == 0 {
			continue
		}
		for i, l := range [][]uint32{s.byS[r.s], s.byP[r.p], s.byO[r.o]} {
			if int(r.pos[i]) >= len(l) || l[r.pos[i]] != uint32(id) {
				t.Fatalf("triple %d is not at its place %d in index %d", id, r.pos[i], i)
			}
		}
		refs[r.s] += r.refs
		refs[r.p] += r.refs
		refs[r.o] += r.refs
	}
	for sid, l := range s.byS {
		if !sort.SliceIsSorted(l, func(i, j int) bool { return s.triples[l[i]].p < s.triples[l[j]].p }) {
			t.Fatalf("byS[%d] is not ordered by predicate", sid)
		}
	}
	for id := range s.terms {
		if refs[id] != s.termRefs[id] {
			t.Fatalf("term %d has %d references, counted %d", id, s.termRefs[id], refs[id])
		}
	}
}

func TestSnapshotRestoresTheStoreExactlyAndItKeepsUpdating(t *testing.T) {
	orig := mixedCatalog(120)
	loaded, _ := roundTrip(t, orig,
		SnapshotMeta{Seq: 1234, EventID: "ev-1234", Ontology: [32]byte{1, 2, 3}, Version: ProjectionVersion})

	// The loaded store takes the same changes as the original to the same state.
	later := []Delta{
		{Remove: []string{ex + "a", ex + "gone"}},
		{Put: append(syntheticRange(100, 40), Description{Entity: ex + "b", Deleted: true,
			Triples: []Triple{{IRI(ex + "b"), IRI(ex + "node"), Blank("b1")}}})},
		{Remove: []string{ex + "e10"}, Put: chain(12)},
	}
	for i, d := range later {
		orig.Apply(d)
		loaded.Apply(d)
		if a, b := dump(orig), dump(loaded); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("after change %d the stores differ", i)
		}
		checkIndexes(t, loaded)
	}
	for _, q := range []string{
		"SELECT ?s ?n WHERE { ?s <" + ex + "from> ?u . ?u <" + ex + "name> ?n } ORDER BY ?s",
		"SELECT ?u WHERE { <" + ex + "e11> <" + ex + "from>+ ?u } ORDER BY ?u",
		"SELECT ?s ?o WHERE { ?s <" + ex + "node> ?o }",
	} {
		for _, del := range []bool{false, true} {
			a := query(t, embeddedOver(orig), q, Limits{IncludeDeleted: del})
			b := query(t, embeddedOver(loaded), q, Limits{IncludeDeleted: del})
			if fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) {
				t.Fatalf("%s (deleted %v): %v, want %v", q, del, b.Rows, a.Rows)
			}
		}
	}
}

func TestASnapshotOfSeveralChunksRestoresTheStoreExactly(t *testing.T) {
	_, n := roundTrip(t, mixedCatalog(2500), SnapshotMeta{Seq: 9, EventID: "ev-9", Version: ProjectionVersion})
	if n < 3*snapshotChunk {
		t.Fatalf("the snapshot is %d bytes, want several chunks of %d", n, snapshotChunk)
	}
}

// roundTrip writes orig's snapshot with meta and reads it back. It fails unless the
// file has the size WriteSnapshot reported and the loaded store, meta included, equals
// orig with consistent indexes. It returns the loaded store and the file's size.
func roundTrip(t *testing.T, orig *Store, meta SnapshotMeta) (*Store, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.snapshot")
	n, err := orig.WriteSnapshot(path, meta)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != n {
		t.Fatalf("snapshot size %d, reported %d (%v)", fi.Size(), n, err)
	}
	loaded, got, err := ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != meta {
		t.Fatalf("meta = %+v, want %+v", got, meta)
	}
	if a, b := dump(orig), dump(loaded); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("loaded store differs:\n%v\nwant\n%v", b, a)
	}
	if orig.Len() != loaded.Len() || orig.Terms() != loaded.Terms() {
		t.Fatalf("loaded %d triples %d terms, want %d %d", loaded.Len(), loaded.Terms(), orig.Len(), orig.Terms())
	}
	checkIndexes(t, loaded)
	return loaded, n
}

func embeddedOver(s *Store) *Embedded {
	e := NewEmbedded()
	e.install(s)
	return e
}

func TestRestoreRemovesTheTemporaryFilesOfAnInterruptedWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "graph.snapshot")
	left := path + ".tmp-123"
	if err := os.WriteFile(left, []byte("half a snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "graph.snapshot.bak")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removeStaleTemps(path, slog.New(slog.DiscardHandler))
	if _, err := os.Stat(left); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the temporary file is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another file was removed: %v", err)
	}
}

func TestDamagedOrForeignSnapshotsAreRefused(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if _, err := mixedCatalog(20).WriteSnapshot(good, SnapshotMeta{Seq: 9, EventID: "e9", Version: ProjectionVersion}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(at int) []byte {
		b := append([]byte(nil), raw...)
		b[at] ^= 0x40
		return b
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"empty file", nil},
		{"another file", []byte("PRAGMA foreign_keys = ON; -- not a snapshot at all, but longer than a header is\n")},
		{"a byte of the payload flipped", flip(len(raw) - 10)},
		{"a byte of the checksum flipped", flip(snapshotHeaderLen - 1)},
		{"another file format", flip(len(snapshotMagic))},
		{"truncated", raw[:len(raw)/2]},
		{"grown", append(append([]byte(nil), raw...), 0)},
		{"a payload length larger than the file", flip(snapshotHeaderLen - 6)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad")
			if err := os.WriteFile(p, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := ReadSnapshot(p); !errors.Is(err, ErrSnapshotInvalid) {
				t.Fatalf("err = %v, want ErrSnapshotInvalid", err)
			}
		})
	}
}

func TestDecodingADamagedPayloadNeverPanics(t *testing.T) {
	var buf bytes.Buffer
	if _, err := mixedCatalog(16).image().encodeTo(&buf); err != nil {
		t.Fatal(err)
	}
	payload := buf.Bytes()
	if _, err := decodeStore(payload); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for at := 0; at < len(payload); at += 1 + len(payload)/400 {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			b := append([]byte(nil), payload...)
			b[at] ^= mask
			if s, err := decodeStore(b); err != nil {
				refused++
			} else {
				checkIndexes(t, s)
			}
		}
		if _, err := decodeStore(payload[:at]); err == nil {
			t.Fatalf("a payload cut at %d was accepted", at)
		}
	}
	if refused == 0 {
		t.Fatal("no damaged payload was refused")
	}
}

// BenchmarkSnapshotOfAMillionTriples writes and loads the snapshot of the store
// BenchmarkMillionTriples builds, reporting the time the read lock is held (the
// tables' copy), the write, the load and the file's size.
func BenchmarkSnapshotOfAMillionTriples(b *testing.B) {
	s := NewStore()
	s.Load(syntheticCatalog(24000))
	path := filepath.Join(b.TempDir(), "graph.snapshot")
	b.ResetTimer()
	var locked, written, loaded time.Duration
	var size int64
	for range b.N {
		start := time.Now()
		img := s.image()
		locked += time.Since(start)
		n, err := writeSnapshot(path, img, SnapshotMeta{Seq: 1, EventID: "e", Version: ProjectionVersion})
		if err != nil {
			b.Fatal(err)
		}
		written += time.Since(start)
		size = n
		start = time.Now()
		if _, _, err := ReadSnapshot(path); err != nil {
			b.Fatal(err)
		}
		loaded += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(locked.Milliseconds())/n, "ms-locked")
	b.ReportMetric(float64(written.Milliseconds())/n, "ms-write")
	b.ReportMetric(float64(loaded.Milliseconds())/n, "ms-load")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}

func TestSnapshotsGrowFurtherApartAsTheCatalogGrows(t *testing.T) {
	const changes, interval = 10_000, 5 * time.Minute
	for _, c := range []struct {
		name    string
		pending uint64
		lastSeq int64
		since   time.Duration
		want    bool
	}{
		{"nothing changed, however long ago", 0, 1000, time.Hour, false},
		{"a change waits for the interval", 1, 1000, time.Minute, false},
		{"the interval writes any change", 1, 1000, interval, true},
		{"a small catalog writes every changes events", 10_000, 1000, time.Second, true},
		{"one short of them waits", 9_999, 1000, time.Second, false},
		{"a large catalog waits for half its position", 30_000, 80_000, time.Second, false},
		{"and writes at half its position", 40_000, 80_000, time.Second, true},
		{"a very large catalog writes every 50,000 events", maxSnapshotChanges, 10_000_000, time.Second, true},
		{"and not sooner", maxSnapshotChanges - 1, 10_000_000, time.Second, false},
	} {
		if got := snapshotDue(c.pending, c.lastSeq, changes, c.since, interval); got != c.want {
			t.Errorf("%s: snapshotDue = %v, want %v", c.name, got, c.want)
		}
	}
}
