package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/tasks"
	"github.com/meridian-catalog/meridian/store"
)

// undocumentedRoutes are the routes the OpenAPI document leaves out on purpose: they sit
// outside /api (operations, not the catalog API).
var undocumentedRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// methods are the operation keys of an OpenAPI path item.
var methods = []string{"get", "put", "post", "patch", "delete", "head", "options", "trace"}

// bareHandler is the REST handler without a database: enough to route and to serve the
// OpenAPI document, which needs no token.
func bareHandler(t *testing.T) http.Handler {
	t.Helper()
	ents := store.New(store.Config{Registry: meridian.DefaultRegistry()})
	return New(Config{Entities: ents, Version: "1.2.3-test", Tasks: tasks.New(ents, nil)})
}

// fetchOpenAPI GETs the document without a token and decodes it.
func fetchOpenAPI(t *testing.T, h http.Handler) ([]byte, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, OpenAPIPath, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s without a token = %d %s, want 200", OpenAPIPath, rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	raw := rec.Body.Bytes()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the document is not valid JSON: %v", err)
	}
	return raw, doc
}

// operations lists every operation of the document as "METHOD /api<path>" -> operation.
func operations(t *testing.T, doc map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("the document has no paths")
	}
	for path, v := range paths {
		item, _ := v.(map[string]any)
		for _, m := range methods {
			if op, ok := item[m].(map[string]any); ok {
				out[strings.ToUpper(m)+" "+apiPrefix+path] = op
			}
		}
	}
	return out
}

func TestOpenAPIDocument(t *testing.T) {
	h := bareHandler(t)
	raw, doc := fetchOpenAPI(t, h)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	if doc["jsonSchemaDialect"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("jsonSchemaDialect = %v", doc["jsonSchemaDialect"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] != "Meridian" || info["version"] != "1.2.3-test" {
		t.Errorf("info = %v, want title Meridian and the server version", info)
	}
	servers, _ := doc["servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["url"] != "/api" {
		t.Errorf("servers = %v, want [/api]", servers)
	}
	comps, _ := doc["components"].(map[string]any)
	bearer, _ := comps["securitySchemes"].(map[string]any)["bearerAuth"].(map[string]any)
	if bearer["type"] != "http" || bearer["scheme"] != "bearer" || bearer["bearerFormat"] != "JWT" {
		t.Errorf("bearerAuth = %v", bearer)
	}
	if sec, _ := doc["security"].([]any); len(sec) != 1 {
		t.Errorf("security = %v, want bearerAuth globally", doc["security"])
	}
	// The same document every time: built once, sorted.
	again, _ := fetchOpenAPI(t, h)
	if !bytes.Equal(raw, again) {
		t.Error("two fetches answered different documents")
	}
	if b, _ := fetchOpenAPI(t, bareHandler(t)); !bytes.Equal(raw, b) {
		t.Error("two builds made different documents: the document is not deterministic")
	}
	t.Logf("document: %d bytes, %d paths, %d operations", len(raw), len(doc["paths"].(map[string]any)), len(operations(t, doc)))
}

func TestOpenAPIIsPublicButOnlyForGet(t *testing.T) {
	h := bareHandler(t)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, OpenAPIPath, http.StatusUnauthorized},
		{http.MethodDelete, OpenAPIPath, http.StatusUnauthorized},
		{http.MethodGet, "/api/v1/openapi%2Ejson", http.StatusUnauthorized},
		{http.MethodGet, OpenAPIPath + "/x", http.StatusUnauthorized},
		{http.MethodGet, "/api/v1/tables", http.StatusUnauthorized},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.want {
			t.Errorf("%s %s without a token = %d, want %d", tc.method, tc.path, rec.Code, tc.want)
		}
	}
}

func TestOpenAPIHasEveryKind(t *testing.T) {
	_, doc := fetchOpenAPI(t, bareHandler(t))
	ops := operations(t, doc)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	tags := map[string]bool{}
	for _, v := range doc["tags"].([]any) {
		tags[v.(map[string]any)["name"].(string)] = true
	}
	for _, k := range meridian.DefaultRegistry().Kinds() {
		one, many := upperFirst(k.Name), plural(upperFirst(k.Name))
		p := "/api/v1/" + k.Collection
		want := map[string]string{
			"GET " + p:                                 "list" + many,
			"POST " + p:                                "create" + one,
			"PUT " + p:                                 "createOrUpdate" + one,
			"GET " + p + "/{id}":                       "get" + one,
			"GET " + p + "/name/{fqn}":                 "get" + one + "ByName",
			"PATCH " + p + "/{id}":                     "patch" + one,
			"PATCH " + p + "/name/{fqn}":               "patch" + one + "ByName",
			"DELETE " + p + "/{id}":                    "delete" + one,
			"DELETE " + p + "/name/{fqn}":              "delete" + one + "ByName",
			"DELETE " + p + "/async/{id}":              "delete" + one + "Async",
			"PUT " + p + "/restore":                    "restore" + one,
			"GET " + p + "/{id}/versions":              "list" + one + "Versions",
			"GET " + p + "/{id}/versions/{version}":    "get" + one + "Version",
			"PUT " + p + "/{id}/followers":             "add" + one + "Follower",
			"DELETE " + p + "/{id}/followers/{userId}": "delete" + one + "Follower",
		}
		if strings.HasPrefix(k.Collection, "services/") {
			want["PUT "+p+"/{id}/testConnectionResult"] = "add" + one + "TestConnectionResult"
		}
		if k.Name == "contextPlugin" {
			want["POST "+p+"/{id}/testConnection"] = "test" + one + "Connection"
		}
		for route, id := range want {
			op, ok := ops[route]
			if !ok {
				t.Errorf("%s: %s is not in the document", k.Name, route)
				continue
			}
			if op["operationId"] != id {
				t.Errorf("%s: operationId %v, want %s", route, op["operationId"], id)
			}
			if tl, _ := op["tags"].([]any); len(tl) != 1 || tl[0] != k.Name {
				t.Errorf("%s: tags %v, want [%s]", route, op["tags"], k.Name)
			}
		}
		for _, name := range []string{kindSchemaName(k), createSchemaName(k)} {
			if _, ok := schemas[name]; !ok {
				t.Errorf("%s: components.schemas.%s is missing", k.Name, name)
			}
		}
		if !tags[k.Name] {
			t.Errorf("%s: no tag", k.Name)
		}
		// The list takes the kind's filters.
		params := map[string]bool{}
		for _, p := range ops["GET "+p]["parameters"].([]any) {
			if name, ok := p.(map[string]any)["name"].(string); ok {
				params[name] = true
			}
		}
		for _, f := range k.Filters {
			if !params[f.Param] {
				t.Errorf("%s: list has no %s filter parameter", k.Name, f.Param)
			}
		}
		// Hard delete answers 204 exactly for HardDeleteNoContent kinds.
		resp := ops["DELETE "+p+"/{id}"]["responses"].(map[string]any)
		if _, has := resp["204"]; has != k.HardDeleteNoContent {
			t.Errorf("%s: DELETE has 204 = %v, want %v", k.Name, has, k.HardDeleteNoContent)
		}
		if _, ok := ops["DELETE "+p+"/async/{id}"]["responses"].(map[string]any)["202"]; !ok {
			t.Errorf("%s: async delete has no 202", k.Name)
		}
		patch := ops["PATCH "+p+"/{id}"]["requestBody"].(map[string]any)["content"].(map[string]any)
		if _, ok := patch["application/json-patch+json"]; !ok {
			t.Errorf("%s: PATCH does not take application/json-patch+json", k.Name)
		}
	}
}

// TestOpenAPIMatchesRoutes walks the router: every route it serves is documented, and
// every documented operation is served, except undocumentedRoutes. Both come from the
// one route table; this checks that New and buildOpenAPI read it alike.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	h := bareHandler(t)
	_, doc := fetchOpenAPI(t, h)
	ops := operations(t, doc)
	served := map[string]bool{}
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if undocumentedRoutes[route] {
			return nil
		}
		served[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(served) < 100 {
		t.Fatalf("chi.Walk found only %d routes", len(served))
	}
	var missing, extra []string
	for r := range served {
		if _, ok := ops[r]; !ok {
			missing = append(missing, r)
		}
	}
	for r := range ops {
		if !served[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, r := range missing {
		t.Errorf("served but not documented: %s", r)
	}
	for _, r := range extra {
		t.Errorf("documented but not served: %s", r)
	}
	for _, r := range []string{"GET /api/v1/users/me", "PUT /api/v1/users/security/token",
		"PUT /api/v1/users/generateToken/{userId}", "GET /api/v1/events", "GET /api/v1/events/consumers",
		"GET /api/v1/search/query", "PUT /api/v1/lineage", "GET /api/v1/lineage/{entity}/{id}",
		"POST /api/v1/dataQuality/testCases/testCaseResults/{fqn}", "GET " + OpenAPIPath} {
		if _, ok := ops[r]; !ok {
			t.Errorf("%s is not documented", r)
		}
	}
}

func TestOpenAPIOperations(t *testing.T) {
	_, doc := fetchOpenAPI(t, bareHandler(t))
	seen := map[string]string{}
	for route, op := range operations(t, doc) {
		id, _ := op["operationId"].(string)
		if id == "" {
			t.Errorf("%s has no operationId", route)
		} else if prev, dup := seen[id]; dup {
			t.Errorf("operationId %s is used by %s and %s", id, prev, route)
		}
		seen[id] = route
		if s, _ := op["summary"].(string); s == "" {
			t.Errorf("%s has no summary", route)
		}
		if tl, _ := op["tags"].([]any); len(tl) == 0 {
			t.Errorf("%s has no tag", route)
		}
		// Every {param} of the path is declared, ids are UUIDs.
		path := strings.TrimPrefix(route[strings.Index(route, " ")+1:], apiPrefix)
		declared := map[string]map[string]any{}
		for _, p := range paramList(t, doc, op) {
			declared[p["name"].(string)] = p
		}
		for _, seg := range strings.Split(path, "/") {
			if !strings.HasPrefix(seg, "{") {
				continue
			}
			name := strings.Trim(seg, "{}")
			p, ok := declared[name]
			if !ok || p["in"] != "path" || p["required"] != true {
				t.Errorf("%s: path parameter %s is not declared as a required path parameter", route, name)
				continue
			}
			isLegacyFQN := strings.HasSuffix(path, "/{id}/testCaseResult")
			if (name == "id" || name == "userId" || name == "toId") && !isLegacyFQN {
				sch, _ := p["schema"].(map[string]any)
				if sch["$ref"] != "#/components/schemas/uuid" {
					t.Errorf("%s: %s is not a UUID: %v", route, name, sch)
				}
			}
		}
	}
}

// paramList resolves an operation's parameters.
func paramList(t *testing.T, doc map[string]any, op map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	list, _ := op["parameters"].([]any)
	for _, v := range list {
		p := v.(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			r, err := resolvePointer(doc, ref)
			if err != nil {
				t.Fatal(err)
			}
			p = r.(map[string]any)
		}
		out = append(out, p)
	}
	return out
}

// TestOpenAPIErrorResponses checks that every operation but the public ones (this
// document and the server version) answers 401, documents its 4xx with the Error body, and that 400/403/404 appear where they can.
func TestOpenAPIErrorResponses(t *testing.T) {
	_, doc := fetchOpenAPI(t, bareHandler(t))
	for route, op := range operations(t, doc) {
		resps := op["responses"].(map[string]any)
		if id := op["operationId"]; id == "getOpenAPI" || id == "getSystemVersion" {
			if sec, ok := op["security"].([]any); !ok || len(sec) != 0 {
				t.Errorf("%s: security = %v, want [] (public)", route, op["security"])
			}
			continue
		}
		if _, ok := op["security"]; ok {
			t.Errorf("%s overrides the global security", route)
		}
		var ok2xx bool
		for code, v := range resps {
			if strings.HasPrefix(code, "2") {
				ok2xx = true
			}
			if !strings.HasPrefix(code, "4") {
				continue
			}
			r := v.(map[string]any)
			if ref, ok := r["$ref"].(string); ok {
				rr, err := resolvePointer(doc, ref)
				if err != nil {
					t.Fatal(err)
				}
				r = rr.(map[string]any)
			}
			sch := r["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			if sch["$ref"] != "#/components/schemas/Error" {
				t.Errorf("%s %s: body %v, want Error", route, code, sch)
			}
		}
		if !ok2xx {
			t.Errorf("%s has no 2xx answer", route)
		}
		want := []string{"401", "403"}
		if strings.Contains(route, "{") {
			want = append(want, "400", "404")
		}
		for _, code := range want {
			if _, ok := resps[code]; !ok {
				t.Errorf("%s does not document %s", route, code)
			}
		}
	}
	errSchema := doc["components"].(map[string]any)["schemas"].(map[string]any)["Error"].(map[string]any)
	props := errSchema["properties"].(map[string]any)
	if props["code"].(map[string]any)["type"] != "integer" || props["message"].(map[string]any)["type"] != "string" {
		t.Errorf("Error = %v, want {code integer, message string}", errSchema)
	}
}

// resolvePointer resolves a local reference "#/a/b" in the document.
func resolvePointer(doc map[string]any, ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q is not local to the document", ref)
	}
	var cur any = doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil, fmt.Errorf("$ref %q: %v", ref, err)
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: %q is not inside an object", ref, tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve: no %q", ref, tok)
		}
	}
	return cur, nil
}

func TestOpenAPIRefsResolve(t *testing.T) {
	_, doc := fetchOpenAPI(t, bareHandler(t))
	n := 0
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if k == "$ref" {
					if s, ok := val.(string); ok {
						n++
						if _, err := resolvePointer(doc, s); err != nil {
							t.Errorf("%s: %v", at, err)
						}
						continue
					}
				}
				if k == "$id" || k == "$schema" {
					t.Errorf("%s: %s left in the document", at, k)
				}
				walk(val, at+"/"+k)
			}
		case []any:
			for i, val := range x {
				walk(val, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
	if n < 1000 {
		t.Errorf("only %d references found", n)
	}
}

// TestOpenAPISchemasValidate compiles the component schemas as JSON Schema 2020-12 and
// checks them against real bodies: a create body, a created entity, an error.
func TestOpenAPISchemasValidate(t *testing.T) {
	raw, _ := fetchOpenAPI(t, bareHandler(t))
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const base = "https://meridian.test/openapi.json"
	if err := c.AddResource(base, doc); err != nil {
		t.Fatal(err)
	}
	compile := func(name string) *jsonschema.Schema {
		t.Helper()
		s, err := c.Compile(base + "#/components/schemas/" + name)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		return s
	}
	check := func(name, body string, valid bool) {
		t.Helper()
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		err = compile(name).Validate(v)
		if valid && err != nil {
			t.Errorf("%s rejects %s: %v", name, body, err)
		}
		if !valid && err == nil {
			t.Errorf("%s accepts %s", name, body)
		}
	}
	check("CreateTable", `{"name":"orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"BIGINT"}]}`, true)
	check("CreateTable", `{"name":"orders","databaseSchema":{"id":"8a0e6c4e-6b7a-4f53-9d5f-1b0b7e0f4a11"},"columns":[]}`, true)
	check("CreateTable", `{"name":"orders","columns":[]}`, false) // no parent
	check("CreateTable", `{"name":"orders","databaseSchema":"s","bogus":1,"columns":[]}`, false)
	check("CreateGlossaryTerm", `{"name":"t","description":"d","glossary":"g"}`, true)
	check("CreateGlossaryTerm", `{"name":"t","description":"d"}`, false) // parent or glossary
	check("Error", `{"code":404,"message":"table instance for x not found"}`, true)
	check("Error", `{"code":"404","message":"x"}`, false)
	check("JsonPatch", `[{"op":"add","path":"/description","value":"x"}]`, true)
	check("JsonPatch", `[{"op":"frobnicate","path":"/description"}]`, false)
	check("RestoreEntity", `{"id":"8a0e6c4e-6b7a-4f53-9d5f-1b0b7e0f4a11"}`, true)
	check("RestoreEntity", `{"id":"nope"}`, false)

	// A real entity, as the API answers it, is valid against its kind's schema.
	f := newFixture(t)
	for _, step := range []struct{ path, body string }{
		{"/api/v1/services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
		{"/api/v1/databases", `{"name":"db","service":"svc"}`},
		{"/api/v1/databaseSchemas", `{"name":"sch","database":"svc.db"}`},
	} {
		if r := f.call(http.MethodPost, step.path, step.body); r.status != http.StatusCreated {
			t.Fatalf("POST %s = %d %s", step.path, r.status, r.body)
		}
	}
	body := `{"name":"orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"BIGINT"}]}`
	check("CreateTable", body, true)
	r := f.call(http.MethodPost, "/api/v1/tables", body)
	if r.status != http.StatusCreated {
		t.Fatalf("POST table = %d %s", r.status, r.body)
	}
	check("Table", string(r.body), true)
	r = f.call(http.MethodGet, "/api/v1/tables/name/svc.db.sch.orders?fields=*", "")
	check("Table", string(r.body), true)
	r = f.call(http.MethodGet, "/api/v1/tables?limit=1", "")
	list, err := c.Compile(base + "#/paths/~1v1~1tables/get/responses/200/content/application~1json/schema")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err := list.Validate(v); err != nil {
		t.Errorf("the table list answer does not match its schema: %v", err)
	}
	r = f.call(http.MethodGet, "/api/v1/tables/name/nope", "")
	check("Error", string(r.body), true)
	// Other answers, against their schemas.
	id := f.call(http.MethodGet, "/api/v1/tables/name/svc.db.sch.orders", "").json(t)["id"]
	for _, a := range []struct{ schema, method, path, body string }{
		{"EntityHistory", http.MethodGet, fmt.Sprintf("/api/v1/tables/%s/versions", id), ""},
		{"ChangeEvent", http.MethodPut, fmt.Sprintf("/api/v1/tables/%s/followers", id), ""},
		{"SearchResponse", http.MethodGet, "/api/v1/search/query?q=orders&index=table_search_index", ""},
		{"EntityLineage", http.MethodGet, fmt.Sprintf("/api/v1/lineage/table/%s", id), ""},
		{"User", http.MethodGet, "/api/v1/users/me?fields=*", ""},
		{"DeleteJob", http.MethodDelete, fmt.Sprintf("/api/v1/tables/async/%s", id), ""},
	} {
		r := f.call(a.method, a.path, a.body)
		if r.status >= 300 {
			t.Errorf("%s %s = %d %s", a.method, a.path, r.status, r.body)
			continue
		}
		check(a.schema, string(r.body), true)
	}
}

// TestOpenAPITokenDefaultsMatchTheHandlers: schema/api.json states the defaults the token
// handlers apply when the body leaves them out.
func TestOpenAPITokenDefaultsMatchTheHandlers(t *testing.T) {
	_, doc := fetchOpenAPI(t, bareHandler(t))
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	def := func(shape, prop string) any {
		return schemas[shape].(map[string]any)["properties"].(map[string]any)[prop].(map[string]any)["default"]
	}
	for _, c := range []struct {
		shape, prop string
		want        string
	}{
		{"CreatePersonalAccessToken", "tokenName", defaultTokenName},
		{"CreatePersonalAccessToken", "JWTTokenExpiry", defaultTokenExpiry},
		{"GenerateBotToken", "JWTTokenExpiry", defaultTokenExpiry},
	} {
		if got := def(c.shape, c.prop); got != c.want {
			t.Errorf("%s.%s default = %v, want %q", c.shape, c.prop, got, c.want)
		}
	}
}

// TestOpenAPIRefusesABadRouteTable: the document is not built from a table that names an
// operation twice, leaves a route under /api undescribed, or describes one outside it.
func TestOpenAPIRefusesABadRouteTable(t *testing.T) {
	reg := meridian.DefaultRegistry()
	ok := func(id, path string) route {
		return route{method: http.MethodGet, path: path, id: id, tag: "meta", summary: "s",
			responses: obj{"200": resp("ok", nil)}}
	}
	for _, c := range []struct {
		name   string
		routes []route
		want   string
	}{
		{"operation id twice", []route{ok("a", "/api/v1/a"), ok("a", "/api/v1/b")}, "operationId a"},
		{"route twice", []route{ok("a", "/api/v1/a"), ok("b", "/api/v1/a")}, "described twice"},
		{"route under /api without id", []route{ok("", "/api/v1/a")}, "no operation id"},
		{"described route outside /api", []route{ok("a", "/v1/a")}, "not one operation under /api"},
		{"public route with a parameter", []route{func() route { r := ok("a", "/api/v1/{x}"); r.public = true; return r }()}, "public route"},
		{"tag without description", []route{func() route { r := ok("a", "/api/v1/a"); r.tag = "nope"; return r }()}, "tag nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := buildOpenAPI(reg, "test", c.routes)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("buildOpenAPI = %v, want an error with %q", err, c.want)
			}
		})
	}
	if _, err := buildOpenAPI(reg, "test", []route{ok("a", "/api/v1/a"), {path: "/metrics"}}); err != nil {
		t.Errorf("a good table: %v", err)
	}
}
