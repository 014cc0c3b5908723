package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// fixture is a REST server over a real SQLite catalog, with an admin token.
type fixture struct {
	t     testing.TB
	srv   *httptest.Server
	ents  *store.Entities
	auth  *auth.Authority
	jobs  *jobs.Service
	admin string // admin token
	ready error  // what Ready answers
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	cat, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { cat.Run(ctx); close(stopped) }()
	t.Cleanup(func() { stop(); <-stopped; cat.Close() })
	f := &fixture{t: t, ents: cat.Entities, auth: cat.Auth, jobs: cat.Jobs}
	f.srv = httptest.NewServer(New(Config{Entities: cat.Entities, Auth: cat.Auth, Version: "test",
		Dispatcher: cat.Dispatcher, Jobs: cat.Jobs, Tasks: cat.Tasks, Ready: func(context.Context) error { return f.ready },
		Graph: cat.Graph, GraphRebuild: cat.StartGraphRebuild}))
	for deadline := time.Now().Add(10 * time.Second); !cat.Graph.Sync().Ready() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(f.srv.Close)
	f.admin = f.userToken("admin", []string{meridian.RoleAdmin}, false)
	return f
}

// userToken creates a user and returns a personal access token for it.
func (f *fixture) userToken(name string, roles []string, isBot bool) string {
	f.t.Helper()
	ctx := context.Background()
	sys := &meridian.Principal{Name: "system", Roles: []string{meridian.RoleAdmin}}
	rs := make([]any, len(roles))
	for i, r := range roles {
		rs[i] = r
	}
	res, err := f.ents.Create(ctx, sys, "user", meridian.Entity{"name": name, "email": name + "@example.com",
		"roles": rs, "isBot": isBot})
	if err != nil {
		f.t.Fatal(err)
	}
	raw, _, err := f.auth.Issue(ctx, auth.Subject{ID: res.Entity.ID(), Name: name, Roles: roles, IsBot: isBot},
		meridian.TokenTypePersonal, time.Hour, "test")
	if err != nil {
		f.t.Fatal(err)
	}
	return raw
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do sends a request. Headers are given as "Name: value" strings.
func (f *fixture) do(method, path, token string, body io.Reader, headers ...string) response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// call sends a request with the admin token.
func (f *fixture) call(method, path, body string, headers ...string) response {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	return f.do(method, path, f.admin, r, headers...)
}

// wantError checks an error answer: status, JSON content type, {code, message}.
func wantError(t *testing.T, r response, status int, message string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("error body is not JSON: %s", r.body)
	}
	if len(body) != 2 || body["code"] != float64(status) {
		t.Errorf("error body = %s, want exactly {code: %d, message}", r.body, status)
	}
	if msg, _ := body["message"].(string); message != "" && msg != message {
		t.Errorf("message = %q, want %q", msg, message)
	}
}

func TestHealthAndReadinessNeedNoToken(t *testing.T) {
	f := newFixture(t)
	if r := f.do("GET", "/healthz", "", nil); r.status != 200 || r.json(t)["status"] != "ok" {
		t.Fatalf("healthz: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/readyz", "", nil); r.status != 200 {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
	f.ready = errors.New("database is gone")
	if r := f.do("GET", "/readyz", "", nil); r.status != 503 {
		t.Fatalf("readyz when not ready: %d %s", r.status, r.body)
	}
}

func TestEveryKindHasItsRoutes(t *testing.T) {
	f := newFixture(t)
	missing := uuid.NewString()
	for _, k := range f.ents.Registry().Kinds() {
		p := "/api/v1/" + k.Collection
		t.Run(k.Name, func(t *testing.T) {
			r := f.call("GET", p, "")
			if r.status != 200 {
				t.Fatalf("GET %s: %d %s", p, r.status, r.body)
			}
			list := r.json(t)
			if _, ok := list["data"].([]any); !ok {
				t.Errorf("GET %s: data is not an array: %s", p, r.body)
			}
			if paging, _ := list["paging"].(map[string]any); paging == nil || paging["total"] == nil {
				t.Errorf("GET %s: paging.total missing: %s", p, r.body)
			}
			notFound := k.Name + " instance for " + missing + " not found"
			wantError(t, f.call("GET", p+"/"+missing, ""), 404, notFound)
			wantError(t, f.call("GET", p+"/name/no.such.thing", ""), 404, "")
			wantError(t, f.call("PATCH", p+"/"+missing, "[]", "Content-Type: application/json-patch+json"), 404, notFound)
			wantError(t, f.call("DELETE", p+"/"+missing, ""), 404, notFound)
			wantError(t, f.call("DELETE", p+"/name/nothing", ""), 404, "")
			wantError(t, f.call("DELETE", p+"/async/"+missing, ""), 404, "")
			wantError(t, f.call("PUT", p+"/restore", `{"id":"`+missing+`"}`), 404, "")
			wantError(t, f.call("GET", p+"/"+missing+"/versions", ""), 404, "")
			wantError(t, f.call("GET", p+"/"+missing+"/versions/0.1", ""), 404, "")
			if k.HasField("followers") {
				wantError(t, f.call("PUT", p+"/"+missing+"/followers", ""), 404, "")
				wantError(t, f.call("DELETE", p+"/"+missing+"/followers/"+missing, ""), 404, "")
			} else { // the route exists; the engine refuses followers for this kind
				wantError(t, f.call("PUT", p+"/"+missing+"/followers", ""), 400, k.Name+" entities have no followers")
			}
			// The write routes exist: a bad body is refused by the handler, not the router.
			wantError(t, f.call("POST", p, "[]"), 400, "Invalid request format: the body must be a JSON object")
			wantError(t, f.call("PUT", p, "[]"), 400, "Invalid request format: the body must be a JSON object")
			if strings.HasPrefix(k.Collection, "services/") {
				wantError(t, f.call("PUT", p+"/"+missing+"/testConnectionResult", `{"status":"Successful"}`), 404, notFound)
			} else {
				wantError(t, f.call("PUT", p+"/"+missing+"/testConnectionResult", `{}`), 404, "Unknown path "+p+"/"+missing+"/testConnectionResult")
			}
			// A wrong method is 405, in JSON, with Allow.
			r = f.call("PATCH", p, "[]", "Content-Type: application/json-patch+json")
			wantError(t, r, 405, "")
			if !strings.Contains(r.header.Get("Allow"), "GET") {
				t.Errorf("405 Allow = %q", r.header.Get("Allow"))
			}
		})
	}
}

func TestUnknownPathIsJSON404(t *testing.T) {
	f := newFixture(t)
	wantError(t, f.call("GET", "/api/v1/nothingHere", ""), 404, "Unknown path /api/v1/nothingHere")
	wantError(t, f.call("GET", "/api/v1/tables/"+uuid.NewString()+"/nothing", ""), 404, "")
	wantError(t, f.do("GET", "/elsewhere", "", nil), 404, "Unknown path /elsewhere")
	// Under /api, authentication comes first: an unknown path does not leak without a token.
	wantError(t, f.do("GET", "/api/v1/nothingHere", "", nil), 401, "")
}

func TestUnauthorized(t *testing.T) {
	f := newFixture(t)
	forged, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "admin", "iss": "meridian",
		"roles": []string{"Admin"}, "iat": time.Now().Unix()}).SignedString([]byte("not the server's key"))
	if err != nil {
		t.Fatal(err)
	}
	none := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhZG1pbiIsImlzcyI6Im1lcmlkaWFuIn0."
	cases := []struct{ name, header string }{
		{"no header", ""},
		{"basic", "Basic YWRtaW46YWRtaW4="},
		{"bearer without token", "Bearer"},
		{"bearer blank", "Bearer   "},
		{"garbage", "Bearer garbage"},
		{"malformed jwt", "Bearer a.b.c"},
		{"wrong key", "Bearer " + forged},
		{"alg none", "Bearer " + none},
		{"token only", f.admin},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hs []string
			if c.header != "" {
				hs = append(hs, "Authorization: "+c.header)
			}
			r := f.do("GET", "/api/v1/tables", "", nil, hs...)
			wantError(t, r, 401, "")
			if got := r.header.Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("WWW-Authenticate = %q, want Bearer", got)
			}
		})
	}
	if r := f.call("GET", "/api/v1/tables", ""); r.status != 200 {
		t.Fatalf("a good token: %d %s", r.status, r.body)
	}
}

func TestBadParametersAre400(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ method, path, message string }{
		{"GET", "/api/v1/tables/not-a-uuid", "Invalid id not-a-uuid: must be a UUID"},
		{"GET", "/api/v1/tables/123/versions", "Invalid id 123: must be a UUID"},
		{"DELETE", "/api/v1/tables/xyz", "Invalid id xyz: must be a UUID"},
		{"DELETE", "/api/v1/tables/async/xyz", "Invalid id xyz: must be a UUID"},
		{"DELETE", "/api/v1/tables/" + uuid.NewString() + "/followers/bob", "Invalid id bob: must be a UUID"},
		{"GET", "/api/v1/tables?limit=abc", "[query param limit must be an integer]"},
		{"GET", "/api/v1/tables?limit=1.5", "[query param limit must be an integer]"},
		{"GET", "/api/v1/tables?limit=-1", "[query param limit must be greater than or equal to 0]"},
		{"GET", "/api/v1/tables?limit=1000001", "[query param limit must be less than or equal to 1000000]"},
		{"GET", "/api/v1/tables?limit=99999999999999999999", "[query param limit must be less than or equal to 1000000]"},
		{"GET", "/api/v1/tables?include=everything", "[query param include must be one of [all, deleted, non-deleted]]"},
		{"GET", "/api/v1/tables/" + uuid.NewString() + "?include=x", "[query param include must be one of [all, deleted, non-deleted]]"},
		{"GET", "/api/v1/tables?before=a&after=b", "Only one of before or after query parameter allowed"},
		{"DELETE", "/api/v1/tables/" + uuid.NewString() + "?hardDelete=yes", "[query param hardDelete must be true or false]"},
		{"DELETE", "/api/v1/tables/name/a.b?recursive=2", "[query param recursive must be true or false]"},
		{"GET", "/api/v1/tables?fields=nonsense", "Invalid field name nonsense"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			wantError(t, f.call(c.method, c.path, ""), 400, c.message)
		})
	}
	// Boundaries are accepted.
	for _, q := range []string{"limit=0", "limit=1000000", "include=all", "include=deleted", "include=non-deleted"} {
		if r := f.call("GET", "/api/v1/tables?"+q, ""); r.status != 200 {
			t.Errorf("?%s: %d %s", q, r.status, r.body)
		}
	}
}

func TestBadBodies(t *testing.T) {
	f := newFixture(t)
	id := uuid.NewString()
	patch := "Content-Type: application/json-patch+json"
	cases := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		message                  string
	}{
		{"malformed", "POST", "/api/v1/tables", "{bad", nil, 400, ""},
		{"trailing garbage", "POST", "/api/v1/tables", `{"name":"x"} x`, nil, 400, ""},
		{"array", "POST", "/api/v1/tables", `[1]`, nil, 400, "Invalid request format: the body must be a JSON object"},
		{"string", "PUT", "/api/v1/tables", `"x"`, nil, 400, "Invalid request format: the body must be a JSON object"},
		{"empty", "POST", "/api/v1/tables", ``, nil, 400, "Invalid request format: the body is empty"},
		{"restore without id", "PUT", "/api/v1/tables/restore", `{}`, nil, 400, ""},
		{"restore bad id", "PUT", "/api/v1/tables/restore", `{"id":"nope"}`, nil, 400, "Invalid id nope: must be a UUID"},
		{"patch object", "PATCH", "/api/v1/tables/" + id, `{}`, []string{patch}, 400, ""},
		{"patch malformed", "PATCH", "/api/v1/tables/" + id, `[{`, []string{patch}, 400, ""},
		{"patch content type", "PATCH", "/api/v1/tables/" + id, `[]`, []string{"Content-Type: text/plain"}, 415, ""},
		{"follower object", "PUT", "/api/v1/tables/" + id + "/followers", `{"id":"x"}`, nil, 400, ""},
		{"follower bad id", "PUT", "/api/v1/tables/" + id + "/followers", `"bob"`, nil, 400, "Invalid id bob: must be a UUID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.call(c.method, c.path, c.body, c.headers...), c.status, c.message)
		})
	}
	// "Invalid request format: …" for malformed JSON, as OpenMetadata.
	r := f.call("POST", "/api/v1/tables", "{bad")
	if msg, _ := r.json(t)["message"].(string); !strings.HasPrefix(msg, "Invalid request format: ") {
		t.Errorf("malformed JSON message = %q", msg)
	}
}

func TestOversizedBodyIs413(t *testing.T) {
	f := newFixture(t)
	big := bytes.Repeat([]byte("a"), MaxBodyBytes+1)
	body := append(append([]byte(`{"name":"`), big...), '"', '}')
	// With a Content-Length the body is refused before it is read.
	wantError(t, f.do("POST", "/api/v1/tables", f.admin, bytes.NewReader(body)), 413, "")
	// Chunked, the limit trips while reading.
	wantError(t, f.do("POST", "/api/v1/tables", f.admin, io.MultiReader(bytes.NewReader(body))), 413, "")
}

func TestRequestID(t *testing.T) {
	f := newFixture(t)
	r := f.do("GET", "/healthz", "", nil, "X-Request-ID: abc-123")
	if got := r.header.Get("X-Request-ID"); got != "abc-123" {
		t.Errorf("echoed id = %q", got)
	}
	r = f.do("GET", "/healthz", "", nil, "X-Request-ID: <script>")
	if got := r.header.Get("X-Request-ID"); got == "" || got == "<script>" {
		t.Errorf("insane id answered as %q", got)
	}
	if got := f.do("GET", "/api/v1/nothing", "", nil).header.Get("X-Request-ID"); got == "" {
		t.Error("an error answer has no X-Request-ID")
	}
}

func TestPanicIsLogged500(t *testing.T) {
	s := &server{log: discardLogger()}
	h := s.requestID(s.recoverer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"message":"Internal error"`) {
		t.Fatalf("panic answer: %d %s", rec.Code, rec.Body)
	}
}

func TestNamesInPathsAreUnescapedOnce(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"prod.mysql", "a/b", "50%off", "sp ace"} {
		if r := f.call("POST", "/api/v1/services/databaseServices", `{"name":`+quote(name)+`,"serviceType":"Mysql"}`); r.status != 201 {
			t.Fatalf("create service %q: %d %s", name, r.status, r.body)
		}
	}
	r := f.call("POST", "/api/v1/databases", `{"name":"sales","service":"\"prod.mysql\""}`)
	if r.status != 201 {
		t.Fatalf("create database: %d %s", r.status, r.body)
	}
	if loc := r.header.Get("Location"); !strings.Contains(loc, r.json(t)["id"].(string)) {
		t.Errorf("Location = %q", loc)
	}
	if got := r.header.Get(ChangeHeader); got != meridian.EventEntityCreated {
		t.Errorf("%s = %q", ChangeHeader, got)
	}
	cases := map[string]string{
		"/api/v1/databases/name/%22prod.mysql%22.sales":           `"prod.mysql".sales`,
		`/api/v1/databases/name/"prod.mysql".sales`:               `"prod.mysql".sales`,
		"/api/v1/services/databaseServices/name/a%2Fb":            "a/b",
		"/api/v1/services/databaseServices/name/50%25off":         "50%off",
		"/api/v1/services/databaseServices/name/sp%20ace":         "sp ace",
		"/api/v1/services/databaseServices/name/%22prod.mysql%22": `"prod.mysql"`,
	}
	for path, fqn := range cases {
		r := f.call("GET", path, "")
		if r.status != 200 {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
			continue
		}
		if got := r.json(t)["fullyQualifiedName"]; got != fqn {
			t.Errorf("GET %s: fullyQualifiedName = %v, want %s", path, got, fqn)
		}
	}
}

func TestTokensAndBots(t *testing.T) {
	f := newFixture(t)
	alice := f.userToken("alice", []string{meridian.RoleDataConsumer}, false)

	// A personal access token for the caller, shown once; listed without its secret.
	r := f.do("PUT", "/api/v1/users/security/token", alice, strings.NewReader(`{"tokenName":"ci","JWTTokenExpiry":"7"}`))
	if r.status != 201 {
		t.Fatalf("create token: %d %s", r.status, r.body)
	}
	tok := r.json(t)
	pat, _ := tok["token"].(string)
	if pat == "" || tok["tokenType"] != meridian.TokenTypePersonal || tok["expiresAt"] == nil {
		t.Fatalf("token answer: %s", r.body)
	}
	if r := f.do("GET", "/api/v1/users/me", pat, nil); r.status != 200 || r.json(t)["name"] != "alice" {
		t.Fatalf("me with the new token: %d %s", r.status, r.body)
	}
	r = f.do("GET", "/api/v1/users/security/token", alice, nil)
	if r.status != 200 || bytes.Contains(r.body, []byte(pat)) || !bytes.Contains(r.body, []byte(`"tokenName":"ci"`)) {
		t.Fatalf("list tokens: %d %s", r.status, r.body)
	}
	// Another user cannot revoke it; its owner can, and it stops working at once.
	bob := f.userToken("bob", []string{meridian.RoleDataConsumer}, false)
	wantError(t, f.do("DELETE", "/api/v1/users/security/token/"+tok["id"].(string), bob, nil), 404, "")
	if r := f.do("DELETE", "/api/v1/users/security/token/"+tok["id"].(string), alice, nil); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	wantError(t, f.do("GET", "/api/v1/users/me", pat, nil), 401, "Token has been revoked")

	// Bot tokens: admins only, bots only.
	r = f.call("POST", "/api/v1/users", `{"name":"etl","email":"etl@example.com","isBot":true,"roles":["DataSteward"]}`)
	if r.status != 201 {
		t.Fatalf("create bot user: %d %s", r.status, r.body)
	}
	botID := r.json(t)["id"].(string)
	aliceID := f.do("GET", "/api/v1/users/me", alice, nil).json(t)["id"].(string)
	wantError(t, f.do("PUT", "/api/v1/users/generateToken/"+botID, alice, strings.NewReader(`{}`)), 403, "")
	wantError(t, f.call("PUT", "/api/v1/users/generateToken/"+aliceID, `{"JWTTokenExpiry":"30"}`), 400, "User alice is not a bot")
	wantError(t, f.call("PUT", "/api/v1/users/generateToken/"+botID, `{"JWTTokenExpiry":"soon"}`), 400, "")
	r = f.call("PUT", "/api/v1/users/generateToken/"+botID, `{"JWTTokenExpiry":"Unlimited"}`)
	if r.status != 200 {
		t.Fatalf("generate bot token: %d %s", r.status, r.body)
	}
	gen := r.json(t)
	if gen["JWTTokenExpiresAt"] != nil || gen["JWTTokenExpiry"] != "Unlimited" {
		t.Errorf("bot token answer: %s", r.body)
	}
	p, err := f.auth.Verify(context.Background(), gen["JWTToken"].(string))
	if err != nil || !p.IsBot || p.TokenType != meridian.TokenTypeBot || !p.HasRole(meridian.RoleDataSteward) {
		t.Fatalf("bot token verifies as %+v, %v", p, err)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestReadScopedTokenCannotWrite(t *testing.T) {
	f := newFixture(t)
	admin, err := f.auth.Verify(context.Background(), f.admin)
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := f.auth.Issue(context.Background(), auth.Subject{ID: admin.ID, Name: "admin", Roles: []string{meridian.RoleAdmin},
		Scopes: []string{meridian.ScopeRead}}, meridian.TokenTypePersonal, time.Hour, "read-only")
	if err != nil {
		t.Fatal(err)
	}
	if r := f.do("GET", "/api/v1/tables", raw, nil); r.status != 200 {
		t.Fatalf("read with a read-scoped token: %d %s", r.status, r.body)
	}
	wantError(t, f.do("POST", "/api/v1/services/databaseServices", raw,
		strings.NewReader(`{"name":"x","serviceType":"Mysql"}`)), 403, "")
}

func TestWriteStatusesAndHeaders(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ path, body string }{
		{"/api/v1/services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
		{"/api/v1/databases", `{"name":"db","service":"svc"}`},
		{"/api/v1/databaseSchemas", `{"name":"sch","database":"svc.db"}`},
	} {
		if r := f.call("POST", c.path, c.body); r.status != 201 {
			t.Fatalf("POST %s: %d %s", c.path, r.status, r.body)
		}
	}
	table := `{"name":"t1","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"INT"}]}`
	r := f.call("PUT", "/api/v1/tables", table)
	if r.status != 201 || r.header.Get(ChangeHeader) != meridian.EventEntityCreated {
		t.Fatalf("PUT new: %d %s %s", r.status, r.header.Get(ChangeHeader), r.body)
	}
	id := r.json(t)["id"].(string)
	if r := f.call("PUT", "/api/v1/tables", table); r.status != 200 || r.header.Get(ChangeHeader) != meridian.EventEntityNoChange {
		t.Fatalf("PUT same: %d %s %s", r.status, r.header.Get(ChangeHeader), r.body)
	}
	r = f.call("PATCH", "/api/v1/tables/"+id, `[{"op":"add","path":"/description","value":"d"}]`,
		"Content-Type: application/json-patch+json")
	if r.status != 200 || r.header.Get("ETag") == "" || r.header.Get(ChangeHeader) != meridian.EventEntityUpdated {
		t.Fatalf("PATCH: %d %v %s", r.status, r.header, r.body)
	}
	wantError(t, f.call("PATCH", "/api/v1/tables/"+id, `[{"op":"add","path":"/description","value":"e"}]`,
		"Content-Type: application/json-patch+json", `If-Match: "stale"`), 412, "")
	if r := f.call("GET", "/api/v1/tables/"+id+"/versions", ""); r.status != 200 || r.json(t)["entityType"] != "table" {
		t.Fatalf("versions: %d %s", r.status, r.body)
	}
	r = f.call("DELETE", "/api/v1/tables/name/svc.db.sch.t1?hardDelete=true", "")
	if r.status != 204 || len(r.body) != 0 {
		t.Fatalf("hard delete of a table: %d %s", r.status, r.body)
	}
	r = f.call("DELETE", "/api/v1/databaseSchemas/name/svc.db.sch?hardDelete=true", "")
	if r.status != 200 || r.json(t)["name"] != "sch" {
		t.Fatalf("hard delete of a schema: %d %s", r.status, r.body)
	}
}
