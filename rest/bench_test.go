package rest

import (
	"net/http"
	"net/http/httptest"
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
