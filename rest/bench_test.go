package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkGetByName serves GET /api/v1/tables/name/{fqn}?fields=columns in process
// (no network): authentication, routing, the engine's read and the answer.
func BenchmarkGetByName(b *testing.B) {
	f := newFixture(b)
	for _, c := range []struct{ kind, body string }{
		{"services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
		{"databases", `{"name":"db","service":"svc"}`},
		{"databaseSchemas", `{"name":"sch","database":"svc.db"}`},
		{"tables", `{"name":"t","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"INT"}]}`},
	} {
		if r := f.call(http.MethodPost, "/api/v1/"+c.kind, c.body); r.status != http.StatusCreated {
			b.Fatalf("create %s: %d %s", c.kind, r.status, r.body)
		}
	}
	h := f.srv.Config.Handler
	req := httptest.NewRequest(http.MethodGet, "/api/v1/tables/name/svc.db.sch.t?fields=columns", nil)
	req.Header.Set("Authorization", "Bearer "+f.admin)
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET: %d %s", w.Code, w.Body)
		}
	}
}

// benchTableBody is the create request of table i: 20 columns, as the bench's tables.
func benchTableBody(i int) map[string]any {
	cols := make([]any, 20)
	for j := range cols {
		c := map[string]any{"name": fmt.Sprintf("column_%d_value", j), "dataType": "VARCHAR", "dataLength": 64}
		if j%2 == 0 {
			c["description"] = fmt.Sprintf("The value of column %d, loaded nightly.", j)
		}
		cols[j] = c
	}
	return map[string]any{"name": fmt.Sprintf("orders_daily_%d", i), "databaseSchema": "svc.db.sch",
		"description": "Daily orders, one row per order and customer.", "columns": cols}
}

// BenchmarkIngestTables creates tables from 8 concurrent clients in process (no
// network), through POST /api/v1/tables one at a time and through PUT
// /api/v1/tables/bulk 100 at a time; b.N counts tables. The catalog's consumers (the
// semantic indexer among them) run meanwhile, as in `meridian serve`.
func BenchmarkIngestTables(b *testing.B) {
	for _, per := range []int{1, 100} {
		b.Run(fmt.Sprintf("per-request=%d", per), func(b *testing.B) {
			f := newFixture(b)
			for _, c := range []struct{ kind, body string }{
				{"services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
				{"databases", `{"name":"db","service":"svc"}`},
				{"databaseSchemas", `{"name":"sch","database":"svc.db"}`},
			} {
				if r := f.call(http.MethodPost, "/api/v1/"+c.kind, c.body); r.status != http.StatusCreated {
					b.Fatalf("create %s: %d %s", c.kind, r.status, r.body)
				}
			}
			h := f.srv.Config.Handler
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 8 {
				wg.Go(func() {
					for {
						first := int(next.Add(int64(per))) - per
						if first >= b.N {
							return
						}
						var body any
						method, path, want := http.MethodPost, "/api/v1/tables", http.StatusCreated
						if per == 1 {
							body = benchTableBody(first)
						} else {
							method, path, want = http.MethodPut, "/api/v1/tables/bulk", http.StatusOK
							var list []any
							for i := first; i < min(first+per, b.N); i++ {
								list = append(list, benchTableBody(i))
							}
							body = list
						}
						raw, _ := json.Marshal(body)
						req := httptest.NewRequest(method, path, bytes.NewReader(raw))
						req.Header.Set("Authorization", "Bearer "+f.admin)
						req.Header.Set("Content-Type", "application/json")
						w := httptest.NewRecorder()
						h.ServeHTTP(w, req)
						if w.Code != want || per > 1 && !strings.Contains(w.Body.String(), `"status":"success"`) {
							b.Errorf("%s %s: %d %.300s", method, path, w.Code, w.Body)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
