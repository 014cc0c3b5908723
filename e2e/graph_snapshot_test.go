package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGraphSnapshotSurvivesAShutdownAndAKill stops the server gracefully (it saves the
// graph's snapshot), restarts it (the graph is restored, not rebuilt, and answers as
// before), changes the catalog, kills the server with SIGKILL and restarts it again:
// the snapshot is caught up with every change made after it.
func TestGraphSnapshotSurvivesAShutdownAndAKill(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	sch, _ := hierarchy(t, s.admin, "snap_svc", "dwh", "sales")
	ids := map[string]string{}
	for _, n := range []string{"patched", "soft", "hard", "kept"} {
		ids[n] = str(table(t, s.admin, sch, n, map[string]any{"description": "Table " + n})["id"])
	}
	tables := `SELECT ?n WHERE { ?t a mer:Table ; rdfs:label ?n ; dct:description ?d } ORDER BY ?n`
	descriptions := `SELECT ?d WHERE { ?t a mer:Table ; dct:description ?d } ORDER BY ?d`
	answer := func(s *server, q string) string {
		r := s.admin.do("POST", "/api/v1/rdf/sparql", q, map[string]string{"Content-Type": "application/sparql-query", "Accept": "text/csv"})
		if r.status != http.StatusOK {
			return r.String()
		}
		return strings.ReplaceAll(strings.TrimSpace(string(r.raw)), "\r\n", ",")
	}
	wantAnswer := func(s *server, q, want string) {
		t.Helper()
		eventually(t, 5*time.Second, q+" answers "+want, func() bool { return answer(s, q) == want })
	}
	// The server's log reaches the test through a pipe: wait for the line.
	wantRestored := func(s *server) {
		t.Helper()
		eventually(t, 5*time.Second, "the log says the graph was restored from its snapshot", func() bool {
			return strings.Contains(s.stderr.String(), "restored from its snapshot")
		})
		if strings.Contains(s.stderr.String(), "projection rebuilt") {
			t.Fatalf("the graph was rebuilt:\n%s", s.stderr)
		}
	}
	wantAnswer(s, tables, "n,hard,kept,patched,soft")

	s.stop()
	if _, err := os.Stat(filepath.Join(s.dataDir, "graph.snapshot")); err != nil {
		t.Fatalf("no snapshot after a graceful shutdown: %v\n%s", err, s.stderr)
	}
	s = s.restart(t)
	if got := answer(s, tables); got != "n,hard,kept,patched,soft" {
		t.Fatalf("after the restart: %s", got)
	}
	wantRestored(s)

	s.admin.must(http.StatusOK, "PATCH", "/api/v1/tables/"+ids["patched"], ops(patchOp("replace", "/description", "Patched before the kill")))
	s.admin.must(http.StatusOK, "DELETE", "/api/v1/tables/"+ids["soft"], nil)
	s.admin.must(http.StatusNoContent, "DELETE", "/api/v1/tables/"+ids["hard"]+"?hardDelete=true", nil)
	table(t, s.admin, sch, "created", map[string]any{"description": "Created before the kill"})
	wantAnswer(s, tables, "n,created,kept,patched")
	s.crash()

	s = s.restart(t)
	if got := answer(s, tables); got != "n,created,kept,patched" {
		t.Fatalf("after the kill and restart: %s", got)
	}
	wantRestored(s)
	if got := answer(s, descriptions); got != "d,Created before the kill,Patched before the kill,Table kept" {
		t.Fatalf("after the kill and restart: %s", got)
	}
}
