package graph_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// logBuffer records a catalog's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var restartAdmin = &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}

// restart opens the catalog cfg describes, as a server start does (the graph built
// from its snapshot or the catalog), with its log recorded; close ends it without the
// shutdown snapshot, as a killed process would.
func restart(t *testing.T, cfg app.Config) (c *catalogtest.Catalog, log *logBuffer, close func()) {
	t.Helper()
	log = &logBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cat, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	once := sync.OnceFunc(func() { cat.Close() })
	t.Cleanup(once)
	if err := cat.BuildGraph(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &catalogtest.Catalog{Catalog: cat, Admin: restartAdmin}, log, once
}

// everything lists every triple of the projection, deleted descriptions included.
func everything(t *testing.T, c *catalogtest.Catalog) []string {
	t.Helper()
	r, err := c.Graph.Run(context.Background(), c.Admin, graph.Request{Query: "SELECT ?s ?p ?o WHERE { ?s ?p ?o }",
		IncludeDeleted: true, Limit: graph.MaxRows})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completeness != graph.Complete {
		t.Fatal("the projection is too large to compare")
	}
	out := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = fmt.Sprint(row)
	}
	sort.Strings(out)
	return out
}

// labels are the labels of the tables a non-admin sees, and of those an admin sees
// with deleted ones.
func labels(t *testing.T, c *catalogtest.Catalog) (visible, all []string) {
	t.Helper()
	q := `SELECT ?n WHERE { ?t a mer:Table ; rdfs:label ?n ; dct:description ?d }`
	reader := &meridian.Principal{Name: "reader", Roles: []string{meridian.RoleDataConsumer}}
	return selectCol(t, c, reader, q, false), selectCol(t, c, c.Admin, q, true)
}

// changeAfterSnapshot creates, patches, soft-deletes and hard-deletes tables, and
// adds a lineage edge into the one that stays.
func changeAfterSnapshot(t *testing.T, c *catalogtest.Catalog) {
	t.Helper()
	ctx := context.Background()
	c.Table(t, "pg", "dwh", "sales", "created", 1)
	id := func(name string) string {
		e, err := c.Entities.Get(ctx, c.Admin, "table", store.ByFQN("pg.dwh.sales."+name), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID()
	}
	if _, err := c.Entities.Patch(ctx, c.Admin, "table", store.ByID(id("patched")),
		[]byte(`[{"op":"replace","path":"/description","value":"Patched after the snapshot"}]`), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Entities.Delete(ctx, c.Admin, "table", store.ByID(id("soft")), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Entities.Delete(ctx, c.Admin, "table", store.ByID(id("hard")), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Entities.AddLineage(ctx, c.Admin, store.AddLineage{Edge: store.EdgeInput{
		FromEntity: meridian.EntityRef{Type: "table", FullyQualifiedName: "pg.dwh.sales.created"},
		ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: "pg.dwh.sales.patched"}}}); err != nil {
		t.Fatal(err)
	}
}

// populate creates the tables changeAfterSnapshot changes, a lineage edge into the
// one hard-deleted later, and delivers their events.
func populate(t *testing.T, c *catalogtest.Catalog) {
	t.Helper()
	ctx := context.Background()
	for _, n := range []string{"patched", "soft", "hard", "kept"} {
		c.Table(t, "pg", "dwh", "sales", n, 2)
	}
	if _, err := c.Entities.AddLineage(ctx, c.Admin, store.AddLineage{Edge: store.EdgeInput{
		FromEntity: meridian.EntityRef{Type: "table", FullyQualifiedName: "pg.dwh.sales.hard"},
		ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: "pg.dwh.sales.kept"}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Dispatcher.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// handleWithoutCommit hands the graph's consumer every event after its committed
// position without committing a new one, as a process killed between handling a batch
// and saving its position leaves it.
func handleWithoutCommit(t *testing.T, c *catalogtest.Catalog) {
	t.Helper()
	ctx := context.Background()
	pos, err := c.Dispatcher.Position(ctx, graph.ConsumerName)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := (&graph.CatalogSource{Entities: c.Entities}).EventsAfter(ctx, pos, 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := c.Graph.Sync().Handle(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
}

func TestARestartRestoresTheSnapshotAndCatchesUpWhateverTheKillLeft(t *testing.T) {
	// Each case is where a killed process stopped after the snapshot was written.
	kills := []struct {
		name string
		// after runs once the changes are made, before the process is killed.
		after func(t *testing.T, c *catalogtest.Catalog)
	}{
		{"before the consumer handled the changes", func(*testing.T, *catalogtest.Catalog) {}},
		{"after the consumer handled and committed them", func(t *testing.T, c *catalogtest.Catalog) {
			if err := c.Dispatcher.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
		{"after a snapshot newer than the consumer's committed position", func(t *testing.T, c *catalogtest.Catalog) {
			handleWithoutCommit(t, c)
			c.SaveGraphSnapshot(false)
		}},
	}
	for _, d := range drivers {
		for _, k := range kills {
			t.Run(d.name+"/"+k.name, func(t *testing.T) {
				ctx := context.Background()
				cfg := d.cfg(t)
				cfg.DataDir = t.TempDir()
				c, log, kill := restart(t, cfg)
				if !strings.Contains(log.String(), "no graph snapshot") {
					t.Fatalf("a first start found a snapshot:\n%s", log)
				}
				populate(t, c)
				c.SaveGraphSnapshot(false)
				before := everything(t, c)
				changeAfterSnapshot(t, c)
				k.after(t, c)
				kill()

				c, log, kill = restart(t, cfg)
				defer kill()
				if out := log.String(); !strings.Contains(out, "restored from its snapshot") || strings.Contains(out, "projection rebuilt") {
					t.Fatalf("the restart did not restore the snapshot:\n%s", out)
				}
				visible, all := labels(t, c)
				if got := strings.Join(visible, ","); got != "created,kept,patched" {
					t.Fatalf("tables a reader sees after the restart: %s", got)
				}
				if got := strings.Join(all, ","); got != "created,kept,patched,soft" {
					t.Fatalf("tables an admin sees with deleted ones after the restart: %s", got)
				}
				restored := everything(t, c)
				if fmt.Sprint(restored) == fmt.Sprint(before) {
					t.Fatal("the changes after the snapshot are missing")
				}
				// The consumer delivers again what it had not committed: nothing changes.
				if err := c.Dispatcher.Drain(ctx); err != nil {
					t.Fatal(err)
				}
				if got := everything(t, c); fmt.Sprint(got) != fmt.Sprint(restored) {
					t.Fatal("replaying the outbox after the restore changed the projection")
				}
				// A rebuild from the catalog gives the same graph.
				if _, err := c.Graph.Sync().Rebuild(ctx, &graph.CatalogSource{Entities: c.Entities}, nil); err != nil {
					t.Fatal(err)
				}
				if rebuilt := everything(t, c); fmt.Sprint(rebuilt) != fmt.Sprint(restored) {
					t.Fatalf("restored and caught up:\n%v\nrebuilt:\n%v", restored, rebuilt)
				}
			})
		}
	}
}

func TestAnUnusableSnapshotIsIgnoredAndTheGraphRebuilt(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		spoil  func(t *testing.T, c *catalogtest.Catalog, path string)
		reason string
	}{
		{"damaged", func(t *testing.T, _ *catalogtest.Catalog, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-3] ^= 0xff
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "the checksum does not match"},
		{"written under an older projection version", func(t *testing.T, _ *catalogtest.Catalog, path string) {
			st, meta, err := graph.ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			meta.Version = graph.ProjectionVersion - 1
			if _, err := st.WriteSnapshot(path, meta); err != nil {
				t.Fatal(err)
			}
		}, "another projection version"},
		{"written under another ontology", func(t *testing.T, _ *catalogtest.Catalog, path string) {
			st, meta, err := graph.ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			meta.Ontology[0] ^= 1
			if _, err := st.WriteSnapshot(path, meta); err != nil {
				t.Fatal(err)
			}
		}, "another ontology"},
		{"older than the events retention pruned", func(t *testing.T, c *catalogtest.Catalog, _ string) {
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Dispatcher.Prune(ctx, time.Now().Add(time.Hour)); err != nil || n == 0 {
				t.Fatalf("pruned %d, %v", n, err)
			}
		}, "events after it were pruned"},
		{"of another database", func(t *testing.T, c *catalogtest.Catalog, path string) {
			// A younger catalog: its snapshot's sequence number is within this one's outbox.
			other := catalogtest.Open(t, app.Config{DataDir: t.TempDir()})
			if err := other.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			other.SaveGraphSnapshot(true)
			b, err := os.ReadFile(filepath.Join(other.DataDir, app.GraphSnapshotFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not this database's"},
	}
	for _, d := range drivers {
		for _, tc := range cases {
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				cfg := d.cfg(t)
				cfg.DataDir = t.TempDir()
				c, _, kill := restart(t, cfg)
				populate(t, c)
				c.SaveGraphSnapshot(false)
				changeAfterSnapshot(t, c)
				path := filepath.Join(cfg.DataDir, app.GraphSnapshotFile)
				tc.spoil(t, c, path)
				kill()

				c, log, kill := restart(t, cfg)
				defer kill()
				out := log.String()
				if !strings.Contains(out, tc.reason) || !strings.Contains(out, "projection rebuilt") ||
					strings.Contains(out, "restored from its snapshot") {
					t.Fatalf("want a rebuild because %q:\n%s", tc.reason, out)
				}
				visible, all := labels(t, c)
				if strings.Join(visible, ",") != "created,kept,patched" || strings.Join(all, ",") != "created,kept,patched,soft" {
					t.Fatalf("after the rebuild a reader sees %v, an admin %v", visible, all)
				}
				// The rebuild saved a usable snapshot again.
				meta, err := graph.ReadSnapshotMeta(path)
				if err != nil || meta.Version != graph.ProjectionVersion || meta.Seq == 0 {
					t.Fatalf("snapshot after the rebuild: %+v, %v", meta, err)
				}
			})
		}
	}
}
