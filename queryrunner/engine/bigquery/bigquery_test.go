package bigquery

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

// fake is a stand-in for the BigQuery REST API: a query answers an incomplete job,
// then two pages; a query with "sleep" never completes until cancelled.
type fake struct {
	mu        sync.Mutex
	cancelled []string
	bodies    []map[string]any
}

const page1 = `{"jobComplete":true,"jobReference":{"projectId":"p","jobId":"j1","location":"EU"},"schema":{"fields":[{"name":"n","type":"INTEGER"},{"name":"ok","type":"BOOLEAN"}]},
"rows":[{"f":[{"v":"1"},{"v":"true"}]},{"f":[{"v":"2"},{"v":null}]}],"pageToken":"t2"}`
const page2 = `{"jobComplete":true,"jobReference":{"projectId":"p","jobId":"j1","location":"EU"},"schema":{"fields":[{"name":"n","type":"INTEGER"},{"name":"ok","type":"BOOLEAN"}]},
"rows":[{"f":[{"v":"3"},{"v":"false"}]}]}`

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer good-token" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":401,"message":"Request had invalid authentication credentials."}}`))
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/bigquery/v2/projects/p/queries":
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.mu.Lock()
		f.bodies = append(f.bodies, b)
		f.mu.Unlock()
		job := "j1"
		if strings.Contains(b["query"].(string), "sleep") {
			job = "j-sleep"
		}
		_, _ = w.Write([]byte(`{"jobComplete":false,"jobReference":{"projectId":"p","jobId":"` + job + `","location":"EU"}}`))
	case r.Method == http.MethodGet && r.URL.Path == "/bigquery/v2/projects/p/queries/j1":
		if r.URL.Query().Get("pageToken") == "t2" {
			_, _ = w.Write([]byte(page2))
			return
		}
		_, _ = w.Write([]byte(page1))
	case r.Method == http.MethodGet && r.URL.Path == "/bigquery/v2/projects/p/queries/j-sleep":
		time.Sleep(100 * time.Millisecond)
		_, _ = w.Write([]byte(`{"jobComplete":false,"jobReference":{"projectId":"p","jobId":"j-sleep","location":"EU"}}`))
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/cancel"):
		f.mu.Lock()
		f.cancelled = append(f.cancelled, r.URL.Path)
		f.mu.Unlock()
		_, _ = w.Write([]byte(`{}`))
	case r.URL.Path == "/bigquery/v2/projects/p/datasets":
		_, _ = w.Write([]byte(`{"datasets":[{"datasetReference":{"datasetId":"sales"}}]}`))
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

func TestBigQueryAgainstAFakeRESTAPI(t *testing.T) {
	f := &fake{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	c := engine.Conn{Type: "BigQuery", AuthType: "oauth", Host: host, Port: p, Token: "good-token", Database: "p", Dataset: "sales",
		Options: map[string]string{"scheme": "http"}}
	e := &Engine{}

	t.Run("PagesAreStreamedWithTypedValues", func(t *testing.T) {
		var s collect
		sum, err := e.Query(context.Background(), c, "SELECT n, ok FROM `p.sales.t`", engine.Limits{MaxRows: 100, Timeout: time.Minute}, &s)
		if err != nil || sum.Rows != 3 || sum.Truncated {
			t.Fatalf("%+v %v", sum, err)
		}
		if s.rows[0][0] != int64(1) || s.rows[0][1] != true || s.rows[1][1] != nil || s.rows[2][0] != int64(3) {
			t.Fatalf("%v", s.rows)
		}
		b := f.bodies[len(f.bodies)-1]
		if b["useLegacySql"] != false || b["jobTimeoutMs"] != "60000" || b["defaultDataset"].(map[string]any)["datasetId"] != "sales" {
			t.Fatalf("request %v", b)
		}
	})
	t.Run("TheRowCapStopsAndCancelsTheJob", func(t *testing.T) {
		var s collect
		sum, err := e.Query(context.Background(), c, "SELECT n, ok FROM t", engine.Limits{MaxRows: 2}, &s)
		if err != nil || sum.Rows != 2 || !sum.Truncated {
			t.Fatalf("%+v %v", sum, err)
		}
	})
	t.Run("CancellingPostsJobsCancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if _, err := e.Query(ctx, c, "SELECT sleep(1)", engine.Limits{MaxRows: 2}, &collect{}); err == nil {
			t.Fatal("no error")
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.cancelled) == 0 || f.cancelled[len(f.cancelled)-1] != "/bigquery/v2/projects/p/jobs/j-sleep/cancel" {
			t.Fatalf("%v", f.cancelled)
		}
	})
	t.Run("WritesAreRefusedBeforeTheRequest", func(t *testing.T) {
		n := len(f.bodies)
		_, err := e.Query(context.Background(), c, "DELETE FROM t WHERE true", engine.Limits{MaxRows: 2}, &collect{})
		if meridian.ErrorCode(err) != meridian.EInvalid || len(f.bodies) != n {
			t.Fatalf("%v", err)
		}
	})
	t.Run("DatasetsAreTheSchemas", func(t *testing.T) {
		s, err := e.Schemas(context.Background(), c, "p")
		if err != nil || len(s) != 1 || s[0] != "sales" {
			t.Fatalf("%v %v", s, err)
		}
	})
	t.Run("ABadTokenIsRefusedWithoutTheSecret", func(t *testing.T) {
		bad := c
		bad.Token = "bad-token-secret"
		err := e.Ping(context.Background(), bad)
		if meridian.ErrorCode(err) != meridian.EUnauthorized || strings.Contains(err.Error(), "bad-token-secret") {
			t.Fatalf("%v", err)
		}
	})
}
