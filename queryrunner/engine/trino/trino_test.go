package trino

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
)

// fake is a stand-in for a Trino coordinator's client protocol: transactions by
// header, a SELECT answered in two pages after a queued first answer, and a query
// containing "sleep" that runs until it is deleted.
type fake struct {
	srv       *httptest.Server
	mu        sync.Mutex
	statement []string
	session   []string
	txHeaders []string
	deleted   []string
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	reply := func(v map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	cols := []any{
		map[string]any{"name": "n", "type": "integer", "typeSignature": map[string]any{"rawType": "integer", "arguments": []any{}}},
		map[string]any{"name": "label", "type": "varchar", "typeSignature": map[string]any{"rawType": "varchar", "arguments": []any{}}},
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/statement":
		b, _ := io.ReadAll(r.Body)
		q := string(b)
		f.statement = append(f.statement, q)
		f.session = append(f.session, r.Header.Get("X-Trino-Session"))
		f.txHeaders = append(f.txHeaders, r.Header.Get("X-Trino-Transaction-Id"))
		switch {
		case strings.HasPrefix(q, "START TRANSACTION"):
			w.Header().Set("X-Trino-Started-Transaction-Id", "tx1")
			reply(map[string]any{"id": "qtx", "stats": map[string]any{"state": "FINISHED"}, "updateType": "START TRANSACTION"})
		case q == "ROLLBACK" || q == "COMMIT":
			w.Header().Set("X-Trino-Clear-Transaction-Id", "true")
			reply(map[string]any{"id": "qend", "stats": map[string]any{"state": "FINISHED"}, "updateType": q})
		case strings.Contains(q, "missing"):
			reply(map[string]any{"id": "qe", "stats": map[string]any{"state": "FAILED"},
				"error": map[string]any{"message": "line 1:8: Column 'missing' cannot be resolved", "errorName": "COLUMN_NOT_FOUND", "errorType": "USER_ERROR", "errorCode": 47}})
		case strings.Contains(q, "sleep"):
			reply(map[string]any{"id": "qs", "nextUri": f.srv.URL + "/v1/statement/qs/1", "stats": map[string]any{"state": "QUEUED"}})
		default:
			reply(map[string]any{"id": "q1", "nextUri": f.srv.URL + "/v1/statement/q1/1", "stats": map[string]any{"state": "QUEUED"}})
		}
	case r.Method == http.MethodGet && r.URL.Path == "/v1/statement/q1/1":
		reply(map[string]any{"id": "q1", "columns": cols, "data": []any{[]any{1, "a"}, []any{2, "b"}},
			"nextUri": f.srv.URL + "/v1/statement/q1/2", "stats": map[string]any{"state": "RUNNING"}})
	case r.Method == http.MethodGet && r.URL.Path == "/v1/statement/q1/2":
		reply(map[string]any{"id": "q1", "columns": cols, "data": []any{[]any{3, nil}}, "stats": map[string]any{"state": "FINISHED"}})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/statement/qs/"):
		f.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		f.mu.Lock()
		reply(map[string]any{"id": "qs", "columns": cols, "nextUri": f.srv.URL + "/v1/statement/qs/2", "stats": map[string]any{"state": "RUNNING"}})
	case r.Method == http.MethodDelete:
		f.deleted = append(f.deleted, r.URL.Path)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

type collect struct {
	cols []engine.Column
	rows [][]any
}

func (c *collect) Columns(cols []engine.Column) error { c.cols = cols; return nil }
func (c *collect) Row(v []any) error                  { c.rows = append(c.rows, v); return nil }

func TestTrinoAgainstAFakeCoordinator(t *testing.T) {
	f := &fake{}
	f.srv = httptest.NewServer(f)
	defer f.srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(f.srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	c := engine.Conn{Type: "Trino", AuthType: "basic", Host: host, Port: p, Username: "alice", Database: "hive", Schema: "sales"}
	e := Engine{}

	t.Run("AQueryRunsInAReadOnlyTransactionWithTheTimeout", func(t *testing.T) {
		var s collect
		sum, err := e.Query(context.Background(), c, "SELECT n, label FROM t", engine.Limits{MaxRows: 10, Timeout: 90 * time.Second}, &s)
		if err != nil || sum.Rows != 3 || sum.Truncated {
			t.Fatalf("%+v %v", sum, err)
		}
		if s.cols[0].Name != "n" || s.rows[0][0] != int64(1) || s.rows[2][1] != nil {
			t.Fatalf("cols %v rows %v", s.cols, s.rows)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.statement) < 2 || f.statement[0] != "START TRANSACTION READ ONLY" || f.txHeaders[1] != "tx1" {
			t.Fatalf("statements %q tx %q", f.statement, f.txHeaders)
		}
		if !strings.Contains(f.session[1], "query_max_execution_time=90s") {
			t.Fatalf("session %q", f.session[1])
		}
	})
	t.Run("TheRowCapStops", func(t *testing.T) {
		sum, err := e.Query(context.Background(), c, "SELECT n, label FROM t", engine.Limits{MaxRows: 2}, &collect{})
		if err != nil || sum.Rows != 2 || !sum.Truncated {
			t.Fatalf("%+v %v", sum, err)
		}
	})
	t.Run("CancellingDeletesTheQueryOnTheCoordinator", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if _, err := e.Query(ctx, c, "SELECT sleep(100)", engine.Limits{MaxRows: 2}, &collect{}); err == nil {
			t.Fatal("no error")
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			f.mu.Lock()
			var found bool
			for _, d := range f.deleted {
				found = found || strings.Contains(d, "qs")
			}
			f.mu.Unlock()
			if found {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no DELETE of the query: %v", f.deleted)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("ARefusedStatementIsInvalid", func(t *testing.T) {
		_, err := e.Query(context.Background(), c, "SELECT missing", engine.Limits{MaxRows: 2}, &collect{})
		if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "cannot be resolved") {
			t.Fatalf("%v", err)
		}
	})
}
