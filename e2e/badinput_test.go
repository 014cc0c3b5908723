package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestBadInputIsAnsweredWithAClientErrorNever500 sends one bad input per error class
// and checks the status and that the body is exactly {code, message}.
func TestBadInputIsAnsweredWithAClientErrorNever500(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	tb := table(t, c, schemaFQN, "orders", nil)
	id := str(tb["id"])
	tbl := "/api/v1/tables/" + id
	jsonPatch := map[string]string{"Content-Type": "application/json-patch+json"}

	cases := []struct {
		name         string
		method, path string
		body         any
		headers      map[string]string
		status       int
		msg          string
	}{
		// Bodies.
		{"malformed JSON body", "POST", "/api/v1/tables", `{"name": "x",`, nil, 400, "Invalid request format"},
		{"body that is not an object", "POST", "/api/v1/tables", `["x"]`, nil, 400, ""},
		{"empty body", "POST", "/api/v1/tables", "", nil, 400, ""},
		{"name of the wrong type", "POST", "/api/v1/services/databaseServices", map[string]any{"name": 5, "serviceType": "Mysql"}, nil, 400, "name"},
		{"columns of the wrong type", "POST", "/api/v1/tables", map[string]any{"name": "x", "databaseSchema": schemaFQN, "columns": "id"}, nil, 400, "columns"},
		{"unknown field", "POST", "/api/v1/services/databaseServices", map[string]any{"name": "x", "serviceType": "Mysql", "colour": "red"}, nil, 400, "colour"},
		{"oversized name", "POST", "/api/v1/services/databaseServices", map[string]any{"name": strings.Repeat("x", 300), "serviceType": "Mysql"}, nil, 400, "name"},
		{"missing required field", "POST", "/api/v1/tables", map[string]any{"name": "x", "databaseSchema": schemaFQN}, nil, 400, "columns"},
		{"missing parent", "POST", "/api/v1/tables", map[string]any{"name": "x", "columns": twoColumns()}, nil, 400, "databaseSchema"},
		{"unknown parent", "POST", "/api/v1/tables", map[string]any{"name": "x", "databaseSchema": "svc.db.nope", "columns": twoColumns()}, nil, 404, ""},
		{"restore without id", "PUT", "/api/v1/tables/restore", map[string]any{}, nil, 400, "id"},
		{"restore with a bad id", "PUT", "/api/v1/tables/restore", map[string]any{"id": "nope"}, nil, 400, ""},
		{"restore of a missing id", "PUT", "/api/v1/tables/restore", map[string]any{"id": "00000000-0000-4000-8000-000000000000"}, nil, 404, ""},

		// Paths.
		{"unknown kind path", "GET", "/api/v1/nonsense", nil, nil, 404, ""},
		{"unknown nested path", "GET", "/api/v1/tables/" + id + "/nonsense", nil, nil, 404, ""},
		{"bad UUID", "GET", "/api/v1/tables/not-a-uuid", nil, nil, 400, "not-a-uuid"},
		{"bad UUID on delete", "DELETE", "/api/v1/tables/not-a-uuid", nil, nil, 400, ""},
		{"bad UUID on patch", "PATCH", "/api/v1/tables/not-a-uuid", ops(patchOp("add", "/description", "x")), nil, 400, ""},
		{"missing entity by name", "GET", "/api/v1/tables/name/" + esc("svc.db.sch.none"), nil, nil, 404, "svc.db.sch.none"},
		{"bad FQN quoting", "GET", "/api/v1/tables/name/" + esc(`svc."db`), nil, nil, 400, ""},
		{"method not allowed", "PATCH", "/api/v1/tables", ops(), nil, 405, ""},

		// Query parameters.
		{"limit not a number", "GET", "/api/v1/tables?limit=abc", nil, nil, 400, "limit"},
		{"negative limit", "GET", "/api/v1/tables?limit=-1", nil, nil, 400, "limit"},
		{"limit too large", "GET", "/api/v1/tables?limit=1000001", nil, nil, 400, "limit"},
		{"bad include", "GET", "/api/v1/tables?include=some", nil, nil, 400, "include"},
		{"bad include on get", "GET", tbl + "?include=some", nil, nil, 400, "include"},
		{"garbage after cursor", "GET", "/api/v1/tables?after=bm90LWEtY3Vyc29y", nil, nil, 400, ""},
		{"bad hardDelete", "DELETE", tbl + "?hardDelete=maybe", nil, nil, 400, "hardDelete"},
		{"bad recursive", "DELETE", tbl + "?recursive=2", nil, nil, 400, "recursive"},
		{"unknown field in fields", "GET", tbl + "?fields=nope", nil, nil, 400, "Invalid field name nope"},

		// JSON Patch.
		{"patch that is not an array", "PATCH", tbl, map[string]any{"op": "add"}, nil, 400, ""},
		{"patch with an unknown op", "PATCH", tbl, ops(map[string]any{"op": "frobnicate", "path": "/description", "value": "x"}), nil, 400, "op"},
		{"patch with a bad path", "PATCH", tbl, ops(patchOp("add", "description", "x")), nil, 400, "path"},
		{"patch on a missing member", "PATCH", tbl, ops(patchOp("replace", "/nope/deeper", "x")), nil, 400, ""},
		{"patch removing a missing member", "PATCH", tbl, ops(patchOp("remove", "/displayName", nil)), nil, 400, ""},
		{"patch test op that fails", "PATCH", tbl, ops(patchOp("test", "/name", "other")), nil, 400, ""},
		{"patch with malformed JSON", "PATCH", tbl, `[{"op":`, nil, 400, ""},
		{"patch setting deleted", "PATCH", tbl, ops(patchOp("replace", "/deleted", true)), nil, 400, "deleted"},
		{"patch with a schema violation", "PATCH", tbl, ops(patchOp("replace", "/columns", "none")), nil, 400, "columns"},
		{"patch with a wrong content type", "PATCH", tbl, ops(patchOp("add", "/description", "x")), map[string]string{"Content-Type": "text/plain"}, 415, ""},
		{"patch with an unknown tag", "PATCH", tbl, ops(patchOp("add", "/tags/-", map[string]any{"tagFQN": "No.Such"})), jsonPatch, 404, ""},

		// Conflicts.
		{"duplicate create", "POST", "/api/v1/tables", map[string]any{"name": "orders", "databaseSchema": schemaFQN, "columns": twoColumns()}, nil, 409, "Entity already exists"},
		{"duplicate service", "POST", "/api/v1/services/databaseServices", map[string]any{"name": "svc", "serviceType": "Mysql"}, nil, 409, "Entity already exists"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.method, tc.path, tc.body, tc.headers)
			if r.status >= 500 {
				t.Errorf("%s: a client mistake answered %d", r, r.status)
			}
			expectError(t, r, tc.status, tc.msg)
		})
	}

	t.Run("the table is unchanged by all of the above", func(t *testing.T) {
		e := c.must(200, "GET", tbl, nil)
		wantVersion(t, e, 0.1)
	})

	t.Run("an oversized body is 413", func(t *testing.T) {
		big := `{"name":"x","description":"` + strings.Repeat("a", 17<<20) + `"}`
		r := c.do("POST", "/api/v1/services/databaseServices", big, nil)
		expectError(t, r, http.StatusRequestEntityTooLarge, "")
	})
}
