package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Resource bounds (issue 8, items 7, 8, 9, 14 and 16): each refusal is a 4xx
// {code, message} that names the limit, never a 500.

// Document limits, as the README documents them.
const (
	maxDocumentBytes = 8 << 20
	maxColumns       = 10000
)

func columns(n int) []any {
	cols := make([]any, n)
	for i := range cols {
		cols[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "dataType": "INT"}
	}
	return cols
}

func TestDocumentLimitsAnswer400NamingTheLimit(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schema, _ := hierarchy(t, c, "svc", "db", "sch")
	body := func(name string, descBytes int, cols []any) map[string]any {
		return map[string]any{"name": name, "databaseSchema": schema, "columns": cols,
			"description": strings.Repeat("lorem ipsum ", descBytes/12)}
	}
	t.Run("at the size limit", func(t *testing.T) {
		c.must(http.StatusCreated, "POST", "/api/v1/tables", body("at_limit", maxDocumentBytes-16<<10, twoColumns()))
	})
	t.Run("just over the size limit", func(t *testing.T) {
		r := c.do("POST", "/api/v1/tables", body("over_limit", maxDocumentBytes+24, twoColumns()), nil)
		expectError(t, r, http.StatusBadRequest, "larger than the maximum of 8388608 bytes")
	})
	t.Run("at the column limit", func(t *testing.T) {
		c.must(http.StatusCreated, "POST", "/api/v1/tables", body("wide", 0, columns(maxColumns)))
	})
	t.Run("over the column limit", func(t *testing.T) {
		r := c.do("POST", "/api/v1/tables", body("too_wide", 0, columns(maxColumns+1)), nil)
		expectError(t, r, http.StatusBadRequest, "more than the maximum of 10000 items")
	})
	t.Run("a PUT over the size limit", func(t *testing.T) {
		r := c.do("PUT", "/api/v1/tables", body("at_limit", maxDocumentBytes+24, twoColumns()), nil)
		expectError(t, r, http.StatusBadRequest, "larger than the maximum of 8388608 bytes")
	})
	t.Run("a body past the body limit", func(t *testing.T) {
		r := c.do("POST", "/api/v1/tables", body("huge", maxDocumentBytes+2<<20, twoColumns()), nil)
		expectError(t, r, http.StatusRequestEntityTooLarge, "")
	})
}

func TestJSONPatchIsBoundedAsAWhole(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	consumer := s.user(t, "consumer", "DataConsumer")
	self := "/api/v1/users/" + consumer.id
	big := strings.Repeat("x", 1<<20)
	amplify := ops(patchOp("add", "/description", big))
	for i := 0; i < 100; i++ {
		amplify = append(amplify, map[string]any{"op": "copy", "from": "/description", "path": fmt.Sprintf("/extension%d", i)})
	}
	noops := ops()
	for i := 0; i < 1001; i++ {
		noops = append(noops, patchOp("test", "/name", "consumer"))
	}
	cases := []struct {
		name  string
		patch []any
		msg   string
	}{
		{"copies past the document maximum", amplify, "larger than the maximum of 8388608 bytes"},
		{"more operations than the maximum", noops, "more than the maximum of 1000 operations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := consumer.c.do("PATCH", self, tc.patch, nil)
			expectError(t, r, http.StatusBadRequest, tc.msg)
		})
	}
	t.Run("the entity is unchanged and other requests go on", func(t *testing.T) {
		me := consumer.c.must(http.StatusOK, "GET", self, nil)
		if d := str(me["description"]); d == big {
			t.Fatal("a refused patch was written")
		}
		consumer.c.must(http.StatusOK, "PATCH", self, ops(patchOp("add", "/displayName", "Consumer")))
	})
}

func TestSearchCostIsBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	consumer := s.user(t, "searcher", "DataConsumer")
	// 4,000 words fit in the request line (64 KiB) and reach the search's own bounds;
	// 10,000 do not, and the HTTP server refuses them first, with a JSON 431.
	words := url.QueryEscape(strings.TrimSpace(strings.Repeat("customer orders ", 2000)))
	huge := url.QueryEscape(strings.TrimSpace(strings.Repeat("customer orders ", 5000)))
	must := make([]string, 1000)
	for i := range must {
		must[i] = fmt.Sprintf(`{"term":{"owners.name":"u%d"}}`, i)
	}
	filter := url.QueryEscape(`{"query":{"bool":{"must":[` + strings.Join(must, ",") + `]}}}`)
	cases := []struct{ name, query, msg string }{
		{"q with 4,000 words", "q=" + words, "q is longer than the maximum of 1000 characters"},
		{"q with 33 words", "q=" + url.QueryEscape(strings.Repeat("w ", 33)), "more than the maximum of 32 words"},
		{"query_filter with 1,000 bool.must terms", "q=*&query_filter=" + filter, "query_filter is larger than the maximum of 16384 bytes"},
		{"from + size past the window", "q=*&from=9999&size=2", "from + size must be less than or equal to: [10000]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := consumer.c.do("GET", "/api/v1/search/query?"+tc.query, nil, nil)
			expectError(t, r, http.StatusBadRequest, tc.msg)
		})
	}
	t.Run("q with 10,000 words", func(t *testing.T) {
		r := consumer.c.do("GET", "/api/v1/search/query?q="+huge, nil, nil)
		expectError(t, r, http.StatusRequestHeaderFieldsTooLarge, "the request line and headers are limited to 65536 bytes")
	})
	t.Run("the words at the limit are answered", func(t *testing.T) {
		consumer.c.must(http.StatusOK, "GET", "/api/v1/search/query?q="+url.QueryEscape(strings.Repeat("w ", 32)), nil)
	})
	t.Run("four huge searches do not stall other requests", func(t *testing.T) {
		var wg sync.WaitGroup
		statuses := make([]int, 4)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = consumer.c.do("GET", "/api/v1/search/query?q="+words, nil, nil).status
			}()
		}
		consumer.c.must(http.StatusOK, "GET", "/api/v1/users/"+consumer.id, nil)
		wg.Wait()
		for i, st := range statuses {
			if st != http.StatusBadRequest {
				t.Errorf("huge search %d answered %d, want 400", i, st)
			}
		}
	})
}

func TestMetricPatchPreconditionsAndTableDefaults(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	m := c.must(http.StatusCreated, "POST", "/api/v1/metrics", map[string]any{"name": "revenue", "description": "old"})
	path := "/api/v1/metrics/" + str(m["id"])
	stale := `"` + str(m["id"]) + `:0.1"`
	c.must(http.StatusOK, "PATCH", path, ops(patchOp("replace", "/description", "new")))
	r := c.do("PATCH", path, ops(patchOp("replace", "/description", "newer")), map[string]string{"If-Match": stale})
	expectError(t, r, http.StatusPreconditionFailed, "")

	schema, _ := hierarchy(t, c, "svc", "db", "sch")
	tbl := table(t, c, schema, "orders", nil)
	if got := str(tbl["tableType"]); got != "Regular" {
		t.Errorf("a table created without tableType has tableType %q, want Regular", got)
	}
}

func TestPostgresReadSurvivesTerminatedBackends(t *testing.T) {
	if os.Getenv("MERIDIAN_E2E_DRIVER") != "postgres" {
		t.Skip("PostgreSQL only: set MERIDIAN_E2E_DRIVER=postgres")
	}
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schema, _ := hierarchy(t, c, "svc", "db", "sch")
	tbl := table(t, c, schema, "orders", nil)
	path := "/api/v1/tables/" + str(tbl["id"])
	for round := 0; round < 3; round++ {
		c.must(http.StatusOK, "GET", path, nil)
		terminateBackends(t, s.dbArgs[1])
		if r := c.do("GET", path, nil, nil); r.status != http.StatusOK {
			t.Fatalf("round %d: %s after every backend was terminated, want 200", round, r)
		}
	}
	c.must(http.StatusOK, "PATCH", path, ops(patchOp("add", "/description", "still writable")))
}

// terminateBackends ends every other connection to the database at dbURL, as
// pg_terminate_backend by an administrator or a failover does, and waits until they
// are gone.
func terminateBackends(t *testing.T, dbURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The server reconnects at once (its pool keeps a minimum, background pollers
	// run), so wait for the terminated backends to be gone, not for none at all.
	var pids []int32
	rows, err := conn.Query(ctx, "SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity "+
		"WHERE datname = current_database() AND pid <> pg_backend_pid()")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ok bool
		var pid int32
		if err := rows.Scan(&ok, &pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	for {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
