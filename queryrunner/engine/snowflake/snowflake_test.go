package snowflake

import (
	"context"
	"encoding/json"
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

// fake is a stand-in for Snowflake's SQL API: SELECT answers two partitions of
// three rows each; SLEEP answers 202 until cancelled.
type fake struct {
	mu        sync.Mutex
	cancelled []string
	bodies    []map[string]any
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer good-token" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"390303","message":"Invalid OAuth access token."}`))
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v2/statements":
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.mu.Lock()
		f.bodies = append(f.bodies, b)
		f.mu.Unlock()
		if strings.Contains(b["statement"].(string), "sleep") {
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"statementHandle":"h-sleep","message":"Asynchronous execution in progress."}`))
			return
		}
		_, _ = w.Write([]byte(`{"statementHandle":"h1","resultSetMetaData":{"numRows":6,"rowType":[{"name":"N","type":"fixed"},{"name":"LABEL","type":"text"}],
"partitionInfo":[{"rowCount":3},{"rowCount":3}]},"data":[["1","a"],["2","b"],["3",null]]}`))
	case r.Method == http.MethodGet && r.URL.Path == "/api/v2/statements/h1" && r.URL.Query().Get("partition") == "1":
		_, _ = w.Write([]byte(`{"data":[["4","d"],["5","e"],["6","f"]]}`))
	case r.Method == http.MethodGet && r.URL.Path == "/api/v2/statements/h-sleep":
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"statementHandle":"h-sleep"}`))
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/cancel"):
		f.mu.Lock()
		f.cancelled = append(f.cancelled, r.URL.Path)
		f.mu.Unlock()
		_, _ = w.Write([]byte(`{"message":"cancelled"}`))
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

func conn(t *testing.T, srv *httptest.Server) engine.Conn {
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	return engine.Conn{Type: "Snowflake", AuthType: "oauth", Host: host, Port: p, Token: "good-token", Database: "DB", Warehouse: "WH", Role: "READER",
		Options: map[string]string{"scheme": "http"}}
}

func TestSnowflakeAgainstAFakeSQLAPI(t *testing.T) {
	f := &fake{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := &Engine{}
	c := conn(t, srv)

	t.Run("PartitionsAreStreamedWithTypedValues", func(t *testing.T) {
		var s collect
		sum, err := e.Query(context.Background(), c, "SELECT n, label FROM t", engine.Limits{MaxRows: 100, Timeout: time.Minute}, &s)
		if err != nil || sum.Rows != 6 || sum.Truncated {
			t.Fatalf("%+v %v", sum, err)
		}
		if s.cols[0].Name != "N" || s.rows[0][0] != int64(1) || s.rows[2][1] != nil || s.rows[5][1] != "f" {
			t.Fatalf("cols %v rows %v", s.cols, s.rows)
		}
		b := f.bodies[len(f.bodies)-1]
		if b["timeout"] != float64(60) || b["warehouse"] != "WH" || b["role"] != "READER" ||
			b["parameters"].(map[string]any)["MULTI_STATEMENT_COUNT"] != "1" {
			t.Fatalf("request %v", b)
		}
	})
	t.Run("TheRowCapStops", func(t *testing.T) {
		var s collect
		sum, err := e.Query(context.Background(), c, "SELECT n, label FROM t", engine.Limits{MaxRows: 4, Timeout: time.Minute}, &s)
		if err != nil || sum.Rows != 4 || !sum.Truncated {
			t.Fatalf("%+v %v", sum, err)
		}
	})
	t.Run("CancellingPostsTheCancelRequest", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		defer cancel()
		_, err := e.Query(ctx, c, "SELECT sleep(100)", engine.Limits{MaxRows: 4, Timeout: time.Minute}, &collect{})
		if err == nil {
			t.Fatal("no error")
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.cancelled) != 1 || f.cancelled[0] != "/api/v2/statements/h-sleep/cancel" {
			t.Fatalf("cancelled %v", f.cancelled)
		}
	})
	t.Run("WritesAreRefusedBeforeTheRequest", func(t *testing.T) {
		n := len(f.bodies)
		_, err := e.Query(context.Background(), c, "DELETE FROM t", engine.Limits{MaxRows: 4}, &collect{})
		if meridian.ErrorCode(err) != meridian.EInvalid || len(f.bodies) != n {
			t.Fatalf("%v", err)
		}
	})
	t.Run("ABadTokenIsRefusedWithoutTheSecret", func(t *testing.T) {
		bad := c
		bad.Token = "bad-token-secret"
		err := e.Ping(context.Background(), bad)
		if meridian.ErrorCode(err) != meridian.EUnauthorized || strings.Contains(err.Error(), "bad-token-secret") {
			t.Fatalf("%v", err)
		}
		basic := c
		basic.AuthType, basic.Token, basic.Password = "basic", "", "pw"
		if err := e.Ping(context.Background(), basic); meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "Basic") {
			t.Fatalf("%v", err)
		}
	})
}
