// Command graph is Meridian's knowledge-graph benchmark (issue 10): it projects a
// synthetic catalog of -n entities (about ten triples each, so 100,000 entities are
// about 1 M triples) in the projection's vocabulary into the embedded store and, when
// a Virtuoso answers, into the remote store, and reports with the machine: the build
// time, the incremental update rate, the memory the graph takes, and p50/p99 of
// entity_neighborhood, find_by_tag, a two-join SELECT and a lineage closure, each
// beside a same-run floor (the cheapest query through the same path: an ASK on one
// node).
//
//	go run ./bench/graph -n 100000 -o bench/graph-report.md
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench/graph:", err)
		os.Exit(1)
	}
}

type config struct {
	n, samples, updates int
	endpoint, out       string
	graphIRI            string
	seed                uint64
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.n, "n", 100000, "entities in the synthetic catalog")
	fs.IntVar(&c.samples, "samples", 200, "timed calls per operation")
	fs.IntVar(&c.updates, "updates", 1000, "incremental updates timed")
	fs.StringVar(&c.endpoint, "endpoint", "http://127.0.0.1:18890/sparql", "Virtuoso's SPARQL endpoint (scripts/start-virtuoso.sh); \"\" to skip")
	fs.StringVar(&c.graphIRI, "graph", "urn:meridian:bench", "the named graph the bench owns on the server (its own graphs are emptied before and after)")
	fs.StringVar(&c.out, "o", "", "report file (\"\" prints it)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the catalog and of the samples")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logf := func(f string, a ...any) { fmt.Fprintf(stderr, "bench/graph: "+f+"\n", a...) }
	ctx := context.Background()
	started := time.Now()
	load := loadAvg()
	cat := generate(c.n, c.seed)
	logf("%d entities, %d descriptions, %d triples generated", c.n, len(cat.descs), cat.triples)

	var cols []*column
	emb := graph.NewEmbedded()
	cols = append(cols, measure(ctx, c, "Embedded (goRDFlib over the compact store)", emb, cat, logf, func() string {
		return fmt.Sprintf("%d triples, %d terms in the store", emb.Store().Len(), emb.Store().Terms())
	}))
	if c.endpoint != "" {
		rc, err := remote.New(remote.Config{QueryEndpoint: c.endpoint, Graph: c.graphIRI, Timeout: 120 * time.Second})
		if err == nil {
			err = rc.Ping(ctx)
		}
		if err != nil {
			cols = append(cols, &column{name: "Virtuoso", failed: "not answering at " + c.endpoint + ": " + err.Error()})
		} else {
			b := remote.NewBackend(rc)
			col := measure(ctx, c, "Virtuoso 7 (remote, SPARQL protocol)", b, cat, logf, func() string {
				n, _ := rc.Count(ctx)
				return fmt.Sprintf("%d triples in the graph; server RSS %s", n, virtuosoRSS())
			})
			col.memNote = "server RSS " + virtuosoRSS()
			cols = append(cols, col)
			_ = b.Reset(ctx)
		}
	}
	rep := report(c, cat, cols, load, time.Since(started))
	if c.out == "" {
		_, err := io.WriteString(stdout, rep)
		return err
	}
	return os.WriteFile(c.out, []byte(rep), 0o644)
}

// column is one store's measurements.
type column struct {
	name, failed       string
	build              time.Duration
	heap               uint64
	memNote, note      string
	updateRate         float64
	batchRate          float64 // updates a second, updateBatch a Apply
	ops                []timing
	completeness       map[string]string
	neighbourhoodEdges float64
	// The embedded store's snapshot: the time to write it (atomically, synced), its
	// size, and the time to read it back into a store (what a start does before it
	// catches up with the outbox); zero for a remote store.
	snapshotWrite, snapshotLoad time.Duration
	snapshotBytes               int64
}

// measureSnapshot writes the embedded store's snapshot to a temporary directory and
// loads it back, checking the loaded store holds as many triples and terms.
func measureSnapshot(col *column, e *graph.Embedded) error {
	dir, err := os.MkdirTemp("", "meridian-bench-graph-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "graph.snapshot")
	start := time.Now()
	n, err := e.Store().WriteSnapshot(path, graph.SnapshotMeta{Seq: 1, EventID: "bench", Version: graph.ProjectionVersion})
	if err != nil {
		return err
	}
	col.snapshotWrite, col.snapshotBytes = time.Since(start), n
	runtime.GC()
	start = time.Now()
	st, _, err := graph.ReadSnapshot(path)
	if err != nil {
		return err
	}
	col.snapshotLoad = time.Since(start)
	if st.Len() != e.Store().Len() || st.Terms() != e.Store().Terms() {
		return fmt.Errorf("the loaded store holds %d triples and %d terms, the written one %d and %d",
			st.Len(), st.Terms(), e.Store().Len(), e.Store().Terms())
	}
	return nil
}

// timing is one operation's samples.
type timing struct {
	name     string
	p50, p99 time.Duration
	err      string
	note     string
}

// measure loads cat into b and times the operations through a graph.Service over it.
func measure(ctx context.Context, c config, name string, b graph.Backend, cat *catalog, logf func(string, ...any), about func() string) *column {
	col := &column{name: name, completeness: map[string]string{}}
	runtime.GC()
	debug.FreeOSMemory()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	logf("%s: loading", name)
	start := time.Now()
	if err := b.Reset(ctx); err != nil {
		col.failed = err.Error()
		return col
	}
	const batch = 2000
	for i := 0; i < len(cat.descs); i += batch {
		if err := b.Load(ctx, cat.descs[i:min(i+batch, len(cat.descs))]); err != nil {
			col.failed = "load: " + err.Error()
			return col
		}
	}
	col.build = time.Since(start)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapAlloc > before.HeapAlloc {
		col.heap = after.HeapAlloc - before.HeapAlloc
	}
	col.note = about()
	logf("%s: built in %s (%s)", name, col.build.Round(time.Millisecond), col.note)
	if e, ok := b.(*graph.Embedded); ok {
		if err := measureSnapshot(col, e); err != nil {
			col.failed = "snapshot: " + err.Error()
			return col
		}
		logf("%s: snapshot of %d bytes written in %s, loaded in %s", name, col.snapshotBytes,
			col.snapshotWrite.Round(time.Millisecond), col.snapshotLoad.Round(time.Millisecond))
	}

	// Incremental updates: one description replaced per Apply, as the outbox consumer
	// does for one event, then updateBatch per Apply, as it does (up to 200) for the
	// entities below a deleted or restored one and for a hard delete's referrers.
	rng := rand.New(rand.NewPCG(c.seed, 7))
	revise := func(i int) graph.Description {
		d := cat.descs[cat.tables[rng.IntN(len(cat.tables))]]
		d.Triples = append(append([]graph.Triple(nil), d.Triples...), graph.Triple{S: graph.IRI(d.Entity),
			P: graph.IRI(graph.NSMer + "benchRevision"), O: graph.Literal(strconv.Itoa(i))})
		return d
	}
	for _, per := range []int{1, updateBatch} {
		start = time.Now()
		for i := 0; i < c.updates; i += per {
			var delta graph.Delta
			for k := i; k < min(i+per, c.updates); k++ {
				delta.Put = append(delta.Put, revise(k))
			}
			if err := b.Apply(ctx, delta); err != nil {
				col.failed = "apply: " + err.Error()
				return col
			}
		}
		rate := float64(c.updates) / time.Since(start).Seconds()
		if per == 1 {
			col.updateRate = rate
		} else {
			col.batchRate = rate
		}
		logf("%s: %.0f updates/s, %d a Apply", name, rate, per)
	}

	sync := graph.NewSync(meridian.DefaultRegistry(), nil, b, nil)
	sync.MarkReady()
	svc := graph.NewService(graph.Config{Backend: b, Sync: sync, Timeout: 60 * time.Second})
	admin := &meridian.Principal{Name: "bench", Roles: []string{meridian.RoleAdmin}}
	pick := func() string { return cat.descs[cat.tables[rng.IntN(len(cat.tables))]].Entity }
	ops := []struct {
		name string
		call func() (string, error)
	}{
		{"floor: ASK on one node (same query path)", func() (string, error) {
			_, err := svc.Run(ctx, admin, graph.Request{Query: "ASK { <" + pick() + "> ?p ?o }"})
			return "", err
		}},
		{"entity_neighborhood (depth 2, limit 200)", func() (string, error) {
			n, err := svc.Neighborhood(ctx, admin, pick(), 2, 200, false)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d triples %s", len(n.Triples), n.Completeness), nil
		}},
		{"find_by_tag (descendants, page of 50)", func() (string, error) {
			page, err := svc.FindByTag(ctx, admin, cat.tagFQNs[rng.IntN(len(cat.tagFQNs))], nil, 50, "")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d entities", len(page.Entities)), nil
		}},
		{"two-join SELECT (tables of an owner, their columns)", func() (string, error) {
			u := cat.users[rng.IntN(len(cat.users))]
			r, err := svc.Run(ctx, admin, graph.Request{Query: "SELECT ?t ?cl WHERE { ?t mer:owners <" + u +
				"> . ?t mer:column ?c . ?c rdfs:label ?cl }", Limit: graph.MaxRows})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d rows %s", len(r.Rows), r.Completeness), nil
		}},
		{"lineage closure (prov:wasDerivedFrom+, upstream)", func() (string, error) {
			r, err := svc.Run(ctx, admin, graph.Request{Query: "SELECT ?up WHERE { <" + pick() + "> prov:wasDerivedFrom+ ?up }",
				Limit: graph.MaxRows})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d rows %s", len(r.Rows), r.Completeness), nil
		}},
	}
	for _, op := range ops {
		logf("%s: %s", name, op.name)
		col.ops = append(col.ops, timeOp(op.name, op.call, c.samples))
	}
	return col
}

// updateBatch is how many descriptions one Apply replaces in the batched update run.
const updateBatch = 20

// timeOp runs call samples times after a tenth as many warm-ups.
func timeOp(name string, call func() (string, error), samples int) timing {
	t := timing{name: name}
	for i := 0; i < max(5, samples/10); i++ {
		if _, err := call(); err != nil {
			t.err = oneLine(err.Error())
			return t
		}
	}
	d := make([]time.Duration, 0, samples)
	notes := map[string]int{}
	for i := 0; i < samples; i++ {
		s := time.Now()
		note, err := call()
		d = append(d, time.Since(s))
		if err != nil {
			t.err = oneLine(err.Error())
			return t
		}
		if note != "" {
			notes[note]++
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	t.p50, t.p99 = d[len(d)/2], d[min(len(d)-1, len(d)*99/100)]
	t.note = summarize(notes)
	return t
}

// summarize describes the answers' sizes: the most frequent, and the range.
func summarize(notes map[string]int) string {
	if len(notes) == 0 {
		return ""
	}
	keys := make([]string, 0, len(notes))
	for k := range notes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return notes[keys[i]] > notes[keys[j]] })
	if len(keys) > 3 {
		keys = keys[:3]
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, notes[k])
	}
	return strings.Join(parts, ", ")
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// loadAvg is the 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// virtuosoRSS is the resident memory of the virtuoso-t process.
func virtuosoRSS() string {
	out, err := exec.Command("pgrep", "-x", "virtuoso-t").Output()
	if err != nil {
		return "?"
	}
	pid := strings.Fields(string(out))
	if len(pid) == 0 {
		return "?"
	}
	b, err := os.ReadFile("/proc/" + pid[0] + "/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
		}
	}
	return "?"
}
