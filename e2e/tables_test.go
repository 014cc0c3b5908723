package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTableLifecycleFollowsTheStateTable walks interface.md's entity lifecycle for a
// table: create, read, patch, soft delete, restore, hard delete.
func TestTableLifecycleFollowsTheStateTable(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	if schemaFQN != "svc.db.sch" {
		t.Fatalf("schema FQN = %q, want svc.db.sch", schemaFQN)
	}

	r := c.do("POST", "/api/v1/tables", map[string]any{"name": "t", "databaseSchema": schemaFQN,
		"description": "first", "columns": twoColumns()}, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("%s: want 201", r)
	}
	tbl := r.obj(t)
	id := str(tbl["id"])
	if tbl["fullyQualifiedName"] != "svc.db.sch.t" || tbl["name"] != "t" || tbl["deleted"] != false {
		t.Errorf("created table = %v", tbl)
	}
	wantVersion(t, tbl, 0.1)
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/api/v1/tables/"+id) {
		t.Errorf("Location = %q, want …/api/v1/tables/%s", loc, id)
	}
	if ref := object(tbl["databaseSchema"]); ref["type"] != "databaseSchema" || ref["fullyQualifiedName"] != schemaFQN {
		t.Errorf("databaseSchema reference = %v", tbl["databaseSchema"])
	}
	if tbl["serviceType"] != "Mysql" || object(tbl["service"])["type"] != "databaseService" {
		t.Errorf("serviceType = %v, service = %v", tbl["serviceType"], tbl["service"])
	}

	var etag string
	t.Run("GET by id and by name", func(t *testing.T) {
		r := c.do("GET", "/api/v1/tables/"+id, nil, nil)
		if r.status != 200 || str(r.obj(t)["id"]) != id {
			t.Fatalf("%s", r)
		}
		etag = r.header.Get("ETag")
		if etag == "" {
			t.Errorf("GET by id: no ETag header")
		}
		byName := c.must(200, "GET", "/api/v1/tables/name/"+esc("svc.db.sch.t"), nil)
		if byName["id"] != id {
			t.Errorf("GET by name id = %v, want %s", byName["id"], id)
		}
		expectError(t, c.do("GET", "/api/v1/tables/name/svc.db.sch.nope", nil, nil), 404, "not found")
		expectError(t, c.do("GET", "/api/v1/tables/00000000-0000-4000-8000-000000000000", nil, nil), 404, "not found")
	})

	t.Run("fields selects relationship fields", func(t *testing.T) {
		plain := c.must(200, "GET", "/api/v1/tables/"+id, nil)
		if _, ok := plain["owners"]; ok {
			t.Errorf("owners present without fields: %v", plain["owners"])
		}
		e := c.must(200, "GET", "/api/v1/tables/"+id+"?fields=owners,tags,columns", nil)
		for _, f := range []string{"owners", "tags", "columns"} {
			if _, ok := e[f].([]any); !ok {
				t.Errorf("fields=owners,tags,columns: %s = %v, want an array", f, e[f])
			}
		}
		if len(list(e["columns"])) != 2 {
			t.Errorf("columns = %v, want 2", e["columns"])
		}
		expectError(t, c.do("GET", "/api/v1/tables/"+id+"?fields=owners,bogus", nil, nil), 400, "Invalid field name bogus")
		expectError(t, c.do("GET", "/api/v1/tables?fields=bogus", nil, nil), 400, "Invalid field name bogus")
	})

	t.Run("PATCH description makes version 0.2 with a changeDescription and an ETag", func(t *testing.T) {
		r := c.do("PATCH", "/api/v1/tables/"+id, ops(patchOp("replace", "/description", "second")), nil)
		if r.status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		e := r.obj(t)
		wantVersion(t, e, 0.2)
		if e["description"] != "second" {
			t.Errorf("description = %v", e["description"])
		}
		fc := fieldChange(e, "fieldsUpdated", "description")
		if fc == nil || fc["oldValue"] != "first" || fc["newValue"] != "second" {
			t.Errorf("changeDescription = %v, want description first → second", e["changeDescription"])
		}
		if pv := num(object(e["changeDescription"])["previousVersion"]); pv != 0.1 {
			t.Errorf("previousVersion = %v, want 0.1", pv)
		}
		newTag := r.header.Get("ETag")
		if newTag == "" || newTag == etag {
			t.Errorf("ETag after patch = %q (before %q), want a new one", newTag, etag)
		}
		if got := r.header.Get("X-OpenMetadata-Change"); got != "entityUpdated" {
			t.Errorf("X-OpenMetadata-Change = %q, want entityUpdated", got)
		}
	})

	t.Run("stale If-Match gives 412", func(t *testing.T) {
		r := c.do("PATCH", "/api/v1/tables/"+id, ops(patchOp("replace", "/description", "third")),
			map[string]string{"If-Match": etag})
		expectError(t, r, http.StatusPreconditionFailed, "modified by another user")
		e := c.must(200, "GET", "/api/v1/tables/"+id, nil)
		wantVersion(t, e, 0.2)
	})

	t.Run("PATCH /id is refused", func(t *testing.T) {
		r := c.do("PATCH", "/api/v1/tables/"+id,
			ops(patchOp("replace", "/id", "00000000-0000-4000-8000-000000000000")), nil)
		expectError(t, r, 400, "id")
	})

	t.Run("soft delete answers the entity deleted at version 0.3", func(t *testing.T) {
		r := c.do("DELETE", "/api/v1/tables/"+id, nil, nil)
		if r.status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		e := r.obj(t)
		if e["deleted"] != true || e["id"] != id {
			t.Errorf("soft delete body = %v", e)
		}
		wantVersion(t, e, 0.3)
		if got := r.header.Get("X-OpenMetadata-Change"); got != "entitySoftDeleted" {
			t.Errorf("X-OpenMetadata-Change = %q, want entitySoftDeleted", got)
		}
		expectError(t, c.do("GET", "/api/v1/tables/"+id, nil, nil), 404, "not found")
		expectError(t, c.do("GET", "/api/v1/tables/name/svc.db.sch.t", nil, nil), 404, "not found")
		for _, inc := range []string{"deleted", "all"} {
			d := c.must(200, "GET", "/api/v1/tables/"+id+"?include="+inc, nil)
			if d["deleted"] != true {
				t.Errorf("include=%s: deleted = %v", inc, d["deleted"])
			}
		}
		// A soft-deleted table cannot be patched.
		expectError(t, c.do("PATCH", "/api/v1/tables/"+id, ops(patchOp("replace", "/description", "x")), nil), 404, "")
	})

	t.Run("restore answers the entity active at version 0.4", func(t *testing.T) {
		r := c.do("PUT", "/api/v1/tables/restore", map[string]any{"id": id}, nil)
		if r.status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		e := r.obj(t)
		if e["deleted"] != false {
			t.Errorf("restored deleted = %v", e["deleted"])
		}
		wantVersion(t, e, 0.4)
		if got := r.header.Get("X-OpenMetadata-Change"); got != "entityRestored" {
			t.Errorf("X-OpenMetadata-Change = %q, want entityRestored", got)
		}
		c.must(200, "GET", "/api/v1/tables/"+id, nil)
	})

	t.Run("hard delete answers 204 with no body and removes the table", func(t *testing.T) {
		r := c.do("DELETE", "/api/v1/tables/"+id+"?hardDelete=true", nil, nil)
		if r.status != http.StatusNoContent {
			t.Fatalf("%s: want 204", r)
		}
		if len(r.raw) != 0 {
			t.Errorf("hard delete body = %q, want empty", r.raw)
		}
		expectError(t, c.do("GET", "/api/v1/tables/"+id+"?include=all", nil, nil), 404, "not found")
		expectError(t, c.do("GET", "/api/v1/tables/"+id+"/versions", nil, nil), 404, "")
		// The name is free again, and the new table starts a new history.
		again := table(t, c, schemaFQN, "t", nil)
		if again["id"] == id {
			t.Errorf("re-created table reused the hard-deleted id")
		}
		wantVersion(t, again, 0.1)
		c.must(200, "DELETE", "/api/v1/tables/"+str(again["id"]), nil)
		r = c.do("DELETE", "/api/v1/tables/"+str(again["id"])+"?hardDelete=true", nil, nil)
		if r.status != http.StatusNoContent {
			t.Errorf("%s: hard delete of a soft-deleted table, want 204", r)
		}
	})

	t.Run("If-Match with the current ETag succeeds", func(t *testing.T) {
		tb := table(t, c, schemaFQN, "locked", nil)
		g := c.do("GET", "/api/v1/tables/"+str(tb["id"]), nil, nil)
		cur := g.header.Get("ETag")
		r := c.do("PATCH", "/api/v1/tables/"+str(tb["id"]), ops(patchOp("add", "/description", "x")),
			map[string]string{"If-Match": cur})
		if r.status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		r = c.do("PATCH", "/api/v1/tables/"+str(tb["id"]), ops(patchOp("replace", "/description", "y")),
			map[string]string{"If-Match": cur})
		expectError(t, r, http.StatusPreconditionFailed, "")
	})

	t.Run("delete by name", func(t *testing.T) {
		tb := table(t, c, schemaFQN, "by_name", nil)
		e := c.must(200, "DELETE", "/api/v1/tables/name/"+esc("svc.db.sch.by_name"), nil)
		if e["deleted"] != true || e["id"] != tb["id"] {
			t.Errorf("delete by name = %v", e)
		}
		r := c.do("DELETE", "/api/v1/tables/name/"+esc("svc.db.sch.by_name")+"?hardDelete=true", nil, nil)
		if r.status != http.StatusNoContent {
			t.Errorf("%s: want 204", r)
		}
	})
}

func TestTableListWalksEveryPageWithCursors(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	var want []string
	for i := 0; i < 7; i++ {
		name := fmt.Sprintf("t%02d", i)
		table(t, c, schemaFQN, name, nil)
		want = append(want, schemaFQN+"."+name)
	}
	deleted := table(t, c, schemaFQN, "zz_deleted", nil)
	c.must(200, "DELETE", "/api/v1/tables/"+str(deleted["id"]), nil)

	var got []string
	after := ""
	pages := 0
	for {
		path := "/api/v1/tables?limit=3"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		page := c.must(200, "GET", path, nil)
		pages++
		paging := object(page["paging"])
		if num(paging["total"]) != 7 {
			t.Errorf("page %d: paging.total = %v, want 7", pages, paging["total"])
		}
		data := list(page["data"])
		if len(data) > 3 {
			t.Errorf("page %d has %d rows, limit 3", pages, len(data))
		}
		for _, d := range data {
			got = append(got, str(object(d)["fullyQualifiedName"]))
		}
		after = str(paging["after"])
		if after == "" || pages > 10 {
			break
		}
	}
	if pages != 3 {
		t.Errorf("walked %d pages, want 3", pages)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("walked %v, want %v (name order, no soft-deleted rows)", got, want)
	}

	t.Run("before walks back", func(t *testing.T) {
		first := c.must(200, "GET", "/api/v1/tables?limit=3", nil)
		second := c.must(200, "GET", "/api/v1/tables?limit=3&after="+url.QueryEscape(str(object(first["paging"])["after"])), nil)
		before := str(object(second["paging"])["before"])
		if before == "" {
			t.Fatalf("second page has no before cursor: %v", second["paging"])
		}
		back := c.must(200, "GET", "/api/v1/tables?limit=3&before="+url.QueryEscape(before), nil)
		var names []string
		for _, d := range list(back["data"]) {
			names = append(names, str(object(d)["name"]))
		}
		if strings.Join(names, ",") != "t00,t01,t02" {
			t.Errorf("before page = %v, want t00,t01,t02", names)
		}
	})

	t.Run("before and after together are refused", func(t *testing.T) {
		r := c.do("GET", "/api/v1/tables?limit=3&before=x&after=y", nil, nil)
		expectError(t, r, 400, "Only one of before or after query parameter allowed")
	})

	t.Run("limit=0 gives only the total", func(t *testing.T) {
		page := c.must(200, "GET", "/api/v1/tables?limit=0", nil)
		if len(list(page["data"])) != 0 || num(object(page["paging"])["total"]) != 7 {
			t.Errorf("limit=0 = %v", page)
		}
	})

	t.Run("include=deleted and include=all", func(t *testing.T) {
		d := c.must(200, "GET", "/api/v1/tables?include=deleted", nil)
		if num(object(d["paging"])["total"]) != 1 {
			t.Errorf("include=deleted total = %v, want 1", object(d["paging"])["total"])
		}
		a := c.must(200, "GET", "/api/v1/tables?include=all&limit=100", nil)
		if num(object(a["paging"])["total"]) != 8 || len(list(a["data"])) != 8 {
			t.Errorf("include=all total = %v rows = %d, want 8", object(a["paging"])["total"], len(list(a["data"])))
		}
	})

	t.Run("filter by databaseSchema", func(t *testing.T) {
		other, _ := hierarchy(t, c, "svc2", "db", "sch")
		table(t, c, other, "elsewhere", nil)
		p := c.must(200, "GET", "/api/v1/tables?databaseSchema="+url.QueryEscape(other), nil)
		if num(object(p["paging"])["total"]) != 1 {
			t.Errorf("databaseSchema filter = %v", p)
		}
	})
}

func TestSchemaDeleteRecursesAndRestoreBringsChildrenBack(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, schemaID := hierarchy(t, c, "svc", "db", "sch")
	t1 := table(t, c, schemaFQN, "a", nil)
	t2 := table(t, c, schemaFQN, "b", nil)
	ids := []string{str(t1["id"]), str(t2["id"])}

	expectError(t, c.do("DELETE", "/api/v1/databaseSchemas/"+schemaID, nil, nil), 400, "databaseSchema is not empty")
	expectError(t, c.do("DELETE", "/api/v1/databaseSchemas/"+schemaID+"?hardDelete=true", nil, nil), 400, "databaseSchema is not empty")

	e := c.must(200, "DELETE", "/api/v1/databaseSchemas/"+schemaID+"?recursive=true", nil)
	if e["deleted"] != true {
		t.Errorf("recursive delete body deleted = %v", e["deleted"])
	}
	for _, id := range ids {
		expectError(t, c.do("GET", "/api/v1/tables/"+id, nil, nil), 404, "")
		d := c.must(200, "GET", "/api/v1/tables/"+id+"?include=deleted", nil)
		if d["deleted"] != true {
			t.Errorf("child %s deleted = %v", id, d["deleted"])
		}
	}
	expectError(t, c.do("GET", "/api/v1/databaseSchemas/"+schemaID, nil, nil), 404, "")
	// A soft-deleted schema takes no new children.
	expectError(t, c.do("POST", "/api/v1/tables", map[string]any{"name": "late", "databaseSchema": schemaFQN,
		"columns": twoColumns()}, nil), 404, "")

	r := c.must(200, "PUT", "/api/v1/databaseSchemas/restore", map[string]any{"id": schemaID})
	if r["deleted"] != false {
		t.Errorf("restored schema deleted = %v", r["deleted"])
	}
	for _, id := range ids {
		d := c.must(200, "GET", "/api/v1/tables/"+id, nil)
		if d["deleted"] != false {
			t.Errorf("child %s after restore deleted = %v", id, d["deleted"])
		}
	}

	t.Run("recursive hard delete removes the children", func(t *testing.T) {
		r := c.do("DELETE", "/api/v1/databaseSchemas/"+schemaID+"?recursive=true&hardDelete=true", nil, nil)
		if r.status != 200 && r.status != 204 {
			t.Fatalf("%s: want 200 or 204", r)
		}
		for _, id := range ids {
			expectError(t, c.do("GET", "/api/v1/tables/"+id+"?include=all", nil, nil), 404, "")
		}
		expectError(t, c.do("GET", "/api/v1/databaseSchemas/"+schemaID+"?include=all", nil, nil), 404, "")
	})
}

func TestAsyncDeleteAnswers202AndDeletesInTheBackground(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	tb := table(t, c, schemaFQN, "orders", nil)
	id := str(tb["id"])

	r := c.do("DELETE", "/api/v1/tables/async/"+id, nil, nil)
	if r.status != http.StatusAccepted {
		t.Fatalf("%s: want 202", r)
	}
	job := r.obj(t)
	if str(job["jobId"]) == "" {
		t.Errorf("async delete body has no jobId: %v", job)
	}
	if !strings.Contains(str(job["message"]), "orders") {
		t.Errorf("async delete message = %v", job["message"])
	}
	eventually(t, 10*time.Second, "the table is soft-deleted", func() bool {
		return c.do("GET", "/api/v1/tables/"+id, nil, nil).status == http.StatusNotFound
	})
	d := c.must(200, "GET", "/api/v1/tables/"+id+"?include=deleted", nil)
	if d["deleted"] != true {
		t.Errorf("after async delete deleted = %v", d["deleted"])
	}

	t.Run("async hard delete", func(t *testing.T) {
		r := c.do("DELETE", "/api/v1/tables/async/"+id+"?hardDelete=true", nil, nil)
		if r.status != http.StatusAccepted {
			t.Fatalf("%s: want 202", r)
		}
		eventually(t, 10*time.Second, "the table is gone", func() bool {
			return c.do("GET", "/api/v1/tables/"+id+"?include=all", nil, nil).status == http.StatusNotFound
		})
	})

	t.Run("async delete of a missing table is 404", func(t *testing.T) {
		expectError(t, c.do("DELETE", "/api/v1/tables/async/00000000-0000-4000-8000-000000000000", nil, nil), 404, "")
	})
}

func TestNamesWithDotsAreQuotedAndBadNamesRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	svc := c.must(201, "POST", "/api/v1/services/databaseServices", map[string]any{"name": "prod.mysql", "serviceType": "Mysql"})
	if svc["fullyQualifiedName"] != `"prod.mysql"` {
		t.Errorf("service FQN = %v, want \"prod.mysql\" quoted", svc["fullyQualifiedName"])
	}
	db := c.must(201, "POST", "/api/v1/databases", map[string]any{"name": "sales", "service": `"prod.mysql"`})
	if db["fullyQualifiedName"] != `"prod.mysql".sales` {
		t.Errorf("database FQN = %v", db["fullyQualifiedName"])
	}
	sch := c.must(201, "POST", "/api/v1/databaseSchemas", map[string]any{"name": "public", "database": `"prod.mysql".sales`})
	tb := c.must(201, "POST", "/api/v1/tables", map[string]any{"name": "order.items", "databaseSchema": sch["fullyQualifiedName"],
		"columns": twoColumns()})
	const tableFQN = `"prod.mysql".sales.public."order.items"`
	if tb["fullyQualifiedName"] != tableFQN {
		t.Errorf("table FQN = %v, want %s", tb["fullyQualifiedName"], tableFQN)
	}

	t.Run("GET by URL-encoded quoted FQN", func(t *testing.T) {
		got := c.must(200, "GET", "/api/v1/services/databaseServices/name/"+esc(`"prod.mysql"`), nil)
		if got["id"] != svc["id"] {
			t.Errorf("service by name = %v", got)
		}
		got = c.must(200, "GET", "/api/v1/tables/name/"+url.QueryEscape(tableFQN), nil)
		if got["id"] != tb["id"] {
			t.Errorf("table by name = %v", got)
		}
		got = c.must(200, "GET", "/api/v1/tables/name/"+esc(tableFQN), nil)
		if got["id"] != tb["id"] {
			t.Errorf("table by name = %v", got)
		}
	})

	bad := []struct {
		name string
		body map[string]any
		msg  string
	}{
		{"a name holding :: is refused", map[string]any{"name": "a::b", "serviceType": "Mysql"}, "name"},
		{"a name with a stray quote is refused", map[string]any{"name": `a"b`, "serviceType": "Mysql"}, "name"},
		{"a name longer than 256 is refused", map[string]any{"name": strings.Repeat("n", 257), "serviceType": "Mysql"}, "name"},
		{"an empty name is refused", map[string]any{"name": "", "serviceType": "Mysql"}, "name"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			expectError(t, c.do("POST", "/api/v1/services/databaseServices", tc.body, nil), 400, tc.msg)
		})
	}
	t.Run("a 256-character name is accepted", func(t *testing.T) {
		c.must(201, "POST", "/api/v1/services/databaseServices", map[string]any{"name": strings.Repeat("n", 256), "serviceType": "Mysql"})
	})
	t.Run("a column name with :: is refused", func(t *testing.T) {
		r := c.do("POST", "/api/v1/tables", map[string]any{"name": "c", "databaseSchema": sch["fullyQualifiedName"],
			"columns": []any{map[string]any{"name": "a::b", "dataType": "INT"}}}, nil)
		expectError(t, r, 400, "")
	})
}

// sortedNames returns the names of a list of entity references, sorted.
func sortedNames(v any, key string) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, str(object(x)[key]))
	}
	sort.Strings(out)
	return out
}

func TestConcurrentPatchesLoseNoUpdate(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	tb := table(t, c, schemaFQN, "hot", nil)
	id := str(tb["id"])

	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := c.do("PATCH", "/api/v1/tables/"+id, ops(patchOp("add", "/description", fmt.Sprintf("writer %d", i))), nil)
			if r.status != 200 {
				checkErrorShape(t, r)
			}
			statuses <- r.status
		}(i)
	}
	wg.Wait()
	close(statuses)
	ok := 0
	for st := range statuses {
		switch st {
		case 200:
			ok++
		case http.StatusConflict, http.StatusPreconditionFailed:
		default:
			t.Errorf("concurrent PATCH answered %d, want 200, 409 or 412", st)
		}
	}
	e := c.must(200, "GET", "/api/v1/tables/"+id, nil)
	h := c.must(200, "GET", "/api/v1/tables/"+id+"/versions", nil)
	if got, want := len(list(h["versions"])), 1+ok; got != want {
		t.Errorf("%d patches succeeded but there are %d versions, want %d", ok, got, want)
	}
	wantVersion(t, e, 0.1+0.1*float64(ok))
}
