package rest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// lineageCatalog creates svc.db.sch with tables a, b and c.
func lineageCatalog(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	for _, c := range []struct{ path, body string }{
		{"/api/v1/services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
		{"/api/v1/databases", `{"name":"db","service":"svc"}`},
		{"/api/v1/databaseSchemas", `{"name":"sch","database":"svc.db"}`},
	} {
		if r := f.call(http.MethodPost, c.path, c.body); r.status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", c.path, r.status, r.body)
		}
	}
	ids := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		r := f.call(http.MethodPost, "/api/v1/tables", `{"name":"`+name+`","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"INT"}]}`)
		if r.status != http.StatusCreated {
			t.Fatalf("create table %s: %d %s", name, r.status, r.body)
		}
		ids[name] = r.json(t)["id"].(string)
	}
	return ids
}

func TestLineageAPI(t *testing.T) {
	f := newFixture(t)
	ids := lineageCatalog(t, f)
	put := func(body string) response { return f.call(http.MethodPut, "/api/v1/lineage", body) }

	r := put(`{"edge":{"fromEntity":{"type":"table","id":"` + ids["a"] + `"},"toEntity":{"type":"table","fullyQualifiedName":"svc.db.sch.b"},
		"lineageDetails":{"sqlQuery":"insert into b select * from a","columnsLineage":[{"fromColumns":["svc.db.sch.a.id"],"toColumn":"svc.db.sch.b.id"}]}}}`)
	if r.status != http.StatusOK || len(r.body) != 0 || r.header.Get(ChangeHeader) != "entityLineageAdded" {
		t.Fatalf("add: %d %q %s", r.status, r.header.Get(ChangeHeader), r.body)
	}
	if r := put(`{"edge":{"fromEntity":{"type":"table","id":"` + ids["b"] + `"},"toEntity":{"type":"table","id":"` + ids["c"] + `"}}}`); r.status != http.StatusOK {
		t.Fatalf("add b>c: %d %s", r.status, r.body)
	}

	r = f.call(http.MethodGet, "/api/v1/lineage/table/name/svc.db.sch.b?upstreamDepth=1&downstreamDepth=1", "")
	if r.status != http.StatusOK {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	body := r.json(t)
	if body["entity"].(map[string]any)["id"] != ids["b"] || len(body["nodes"].([]any)) != 2 {
		t.Fatalf("lineage %s", r.body)
	}
	up := body["upstreamEdges"].([]any)[0].(map[string]any)
	if up["fromEntity"] != ids["a"] || up["toEntity"] != ids["b"] || up["lineageDetails"].(map[string]any)["sqlQuery"] == nil {
		t.Fatalf("upstream edge %v", up)
	}
	down := body["downstreamEdges"].([]any)[0].(map[string]any)
	if down["fromEntity"] != ids["b"] || down["toEntity"] != ids["c"] || down["lineageDetails"] != nil {
		t.Fatalf("downstream edge %v", down)
	}
	// Default depth 1 by id.
	r = f.call(http.MethodGet, "/api/v1/lineage/table/"+ids["a"], "")
	if r.status != http.StatusOK || len(r.json(t)["nodes"].([]any)) != 1 {
		t.Fatalf("default depth: %d %s", r.status, r.body)
	}
	r = f.call(http.MethodGet, "/api/v1/lineage/table/"+ids["a"]+"?downstreamDepth=2", "")
	if len(r.json(t)["nodes"].([]any)) != 2 {
		t.Fatalf("depth 2: %s", r.body)
	}

	for _, c := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{http.MethodGet, "/api/v1/lineage/table/" + ids["a"] + "?upstreamDepth=4", "", 400, "[query param upstreamDepth must be less than or equal to 3]"},
		{http.MethodGet, "/api/v1/lineage/table/" + ids["a"] + "?downstreamDepth=-1", "", 400, "[query param downstreamDepth must be greater than or equal to 0]"},
		{http.MethodGet, "/api/v1/lineage/table/name/svc.db.sch.nope", "", 404, "table instance for svc.db.sch.nope not found"},
		{http.MethodGet, "/api/v1/lineage/nokind/name/x", "", 400, "Unknown entity type nokind"},
		{http.MethodPut, "/api/v1/lineage", `{}`, 400, "[edge must not be null]"},
		{http.MethodPut, "/api/v1/lineage", `{"edge":{"fromEntity":{"type":"table","fullyQualifiedName":"svc.db.sch.zz"},"toEntity":{"type":"table","id":"` + ids["a"] + `"}}}`, 404, ""},
		{http.MethodPut, "/api/v1/lineage", `{"edge":{"fromEntity":{"type":"table","id":"` + ids["a"] + `"},"toEntity":{"type":"table","id":"` + ids["a"] + `"}}}`, 400, ""},
		{http.MethodDelete, "/api/v1/lineage/table/" + ids["c"] + "/table/" + ids["a"], "", 404, "Lineage edge not found"},
	} {
		wantError(t, f.call(c.method, c.path, c.body), c.status, c.msg)
	}

	r = f.call(http.MethodDelete, "/api/v1/lineage/table/"+ids["a"]+"/table/"+ids["b"], "")
	if r.status != http.StatusOK || r.header.Get(ChangeHeader) != "entityLineageDeleted" {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	r = f.call(http.MethodDelete, "/api/v1/lineage/table/name/"+url.PathEscape("svc.db.sch.b")+"/table/name/svc.db.sch.c", "")
	if r.status != http.StatusOK {
		t.Fatalf("delete by name: %d %s", r.status, r.body)
	}
	r = f.call(http.MethodGet, "/api/v1/lineage/table/"+ids["b"]+"?upstreamDepth=3&downstreamDepth=3", "")
	if b := r.json(t); len(b["nodes"].([]any)) != 0 || len(b["upstreamEdges"].([]any)) != 0 {
		t.Fatalf("edges left: %s", r.body)
	}

	// A DataConsumer owns nothing here: it may read lineage but not add it.
	consumer := f.userToken("reader", []string{"DataConsumer"}, false)
	res := f.do(http.MethodGet, "/api/v1/lineage/table/"+ids["a"], consumer, nil)
	if res.status != http.StatusOK {
		t.Fatalf("consumer read: %d %s", res.status, res.body)
	}
	res = f.do(http.MethodPut, "/api/v1/lineage", consumer, strings.NewReader(`{"edge":{"fromEntity":{"type":"table","id":"`+ids["a"]+`"},"toEntity":{"type":"table","id":"`+ids["c"]+`"}}}`))
	wantError(t, res, http.StatusForbidden, "")
}
