package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
)

// qrServer is a server with a database service "warehouse" pointing at a throwaway
// PostgreSQL database (the local server, trust authentication), users alice, bob and
// carol, and team analysts (member alice, owner carol).
type qrServer struct {
	s                  *server
	alice, bob, carol  *principal
	teamID, dbName     string
	hostPort, pgUser   string
	adminPassword      string
	qr                 string // /api/v1/queryRunner
	serviceName        string
	adminConfigCreated map[string]any
}

func newQRServer(t *testing.T) *qrServer {
	t.Helper()
	s := startServer(t)
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	q := &qrServer{s: s, qr: "/api/v1/queryRunner", serviceName: "warehouse", dbName: strings.TrimPrefix(u.Path, "/"),
		hostPort: u.Host, pgUser: u.User.Username(), adminPassword: "Adm1n-Secret-Passw0rd"}
	if u.Port() == "" {
		q.hostPort = u.Hostname() + ":5432"
	}
	q.alice = s.user(t, "alice", "DataConsumer")
	q.bob = s.user(t, "bob", "DataConsumer")
	q.carol = s.user(t, "carol", "DataConsumer")
	team := s.admin.must(http.StatusCreated, "POST", "/api/v1/teams", map[string]any{"name": "analysts",
		"users":  []any{map[string]any{"id": q.alice.id, "type": "user"}},
		"owners": []any{map[string]any{"id": q.carol.id, "type": "user"}}})
	q.teamID = str(team["id"])
	s.admin.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices", map[string]any{"name": q.serviceName, "serviceType": "Postgres"})
	return q
}

func (q *qrServer) adminConfig(extra map[string]any) map[string]any {
	body := map[string]any{"serviceName": q.serviceName, "serviceType": "Postgres", "enabled": true, "hostPort": q.hostPort,
		"authConfig": map[string]any{"authType": "Basic", "username": q.pgUser, "password": q.adminPassword, "database": q.dbName}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// waitJob polls GET /v1/jobs/{id} until the job ends.
func waitJob(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := c.must(http.StatusOK, "GET", "/api/v1/jobs/"+id, nil)
		if st := str(j["status"]); st == "completed" || st == "failed" {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %v", id, j["status"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestQueryRunnerConfigs drives the config API black-box: admin configs for admins
// only, user configs with masked secrets and a test-connection workflow against a
// real PostgreSQL database, team configs for the team's owner, the 2.0.2 ownership
// bugs refused, saved queries, and the admin delete cascade.
func TestQueryRunnerConfigs(t *testing.T) {
	t.Parallel()
	q := newQRServer(t)
	s, admin, alice, bob, carol := q.s, q.s.admin, q.alice.c, q.bob.c, q.carol.c
	svc := "?service=" + q.serviceName

	// Admin only.
	expectError(t, alice.do("GET", q.qr+"/configs/test", nil, nil), http.StatusForbidden, "")
	expectError(t, alice.do("POST", q.qr+"/configs", q.adminConfig(nil), nil), http.StatusForbidden, "")
	expectError(t, s.client(t, "").do("GET", q.qr+"/configs", nil, nil), http.StatusUnauthorized, "")
	health := admin.must(http.StatusOK, "GET", q.qr+"/configs/test", nil)
	if health["status"] != "healthy" {
		t.Fatalf("health %v", health)
	}
	if d := admin.must(http.StatusOK, "GET", q.qr+"/configs/defaults", nil); d["maxResultSize"] != float64(1000) {
		t.Fatalf("defaults %v", d)
	}
	expectError(t, admin.do("POST", q.qr+"/configs", map[string]any{"serviceName": q.serviceName, "serviceType": "Oracle",
		"authConfig": map[string]any{"username": "u"}}, nil), http.StatusBadRequest, "serviceType")
	created := admin.must(http.StatusCreated, "POST", q.qr+"/configs", q.adminConfig(nil))
	expectError(t, admin.do("POST", q.qr+"/configs", q.adminConfig(nil), nil), http.StatusConflict, "")
	list := admin.must(http.StatusOK, "GET", q.qr+"/configs", nil)
	data, _ := list["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["configured"] != true {
		t.Fatalf("list %v", list)
	}
	one := admin.must(http.StatusOK, "GET", q.qr+"/configs"+svc, nil)
	if one["id"] != created["id"] || one["authConfig"].(map[string]any)["password"] != "*********" {
		t.Fatalf("one %v", one)
	}

	// alice's user config: masked in every answer; test-connection is a workflow.
	alicePassword := "Al1ce-Db-Passw0rd"
	uc := alice.must(http.StatusCreated, "POST", q.qr+"/user-configs", map[string]any{"serviceName": q.serviceName,
		"userAuthConfig": map[string]any{"username": q.pgUser, "password": alicePassword}})
	ucID := str(uc["id"])
	started := alice.must(http.StatusAccepted, "POST", q.qr+"/user-configs/test-connection"+svc, nil)
	if j := waitJob(t, alice, str(started["workflowId"])); j["status"] != "completed" {
		t.Fatalf("test-connection job %v", j)
	}
	entry := alice.must(http.StatusOK, "GET", q.qr+"/user-configs"+svc, nil)
	if entry["status"] != "Successful" {
		t.Fatalf("status %v", entry)
	}
	st := alice.must(http.StatusOK, "POST", q.qr+"/user-configs/update-connection-status"+svc, map[string]any{"workflowId": started["workflowId"]})
	if st["connectionStatus"].(map[string]any)["status"] != "Successful" {
		t.Fatalf("update-connection-status %v", st)
	}
	dbs := alice.must(http.StatusOK, "GET", q.qr+"/user-configs/accessible-databases"+svc, nil)
	if !strings.Contains(strings.Join(strs(dbs["data"]), ","), q.dbName) {
		t.Fatalf("databases %v", dbs)
	}
	sch := alice.must(http.StatusOK, "GET", q.qr+"/user-configs/accessible-schemas"+svc+"&database="+q.dbName, nil)
	if !strings.Contains(strings.Join(strs(sch["data"]), ","), "public") {
		t.Fatalf("schemas %v", sch)
	}
	expectError(t, alice.do("GET", q.qr+"/user-configs/accessible-roles"+svc, nil, nil), http.StatusBadRequest, "roles")
	expectError(t, alice.do("POST", q.qr+"/user-configs/refresh-token"+svc, nil, nil), http.StatusBadRequest, "Basic")
	// A masked password sent back keeps the stored one.
	back := alice.must(http.StatusOK, "PUT", q.qr+"/user-configs"+svc, map[string]any{"userAuthConfig": uc["userAuthConfig"]})
	if back["userAuthConfig"].(map[string]any)["password"] != "*********" {
		t.Fatalf("put %v", back)
	}

	// 2.0.2: another user's config by id is not answered.
	if got := alice.must(http.StatusOK, "GET", q.qr+"/user-configs?userConfigId="+ucID, nil); got["id"] != ucID {
		t.Fatalf("own by id %v", got)
	}
	expectError(t, bob.do("GET", q.qr+"/user-configs?userConfigId="+ucID, nil, nil), http.StatusNotFound, "")
	expectError(t, admin.do("GET", q.qr+"/user-configs?userConfigId="+ucID, nil, nil), http.StatusNotFound, "")
	expectError(t, bob.do("POST", q.qr+"/user-configs/update-connection-status"+svc, map[string]any{"workflowId": started["workflowId"]}, nil), http.StatusNotFound, "")

	// Team configs: the owner, not a member.
	teamBody := map[string]any{"serviceName": q.serviceName, "teamId": q.teamID, "userAuthConfig": map[string]any{"username": q.pgUser, "password": "Team-Pw-1"}}
	expectError(t, alice.do("POST", q.qr+"/team-configs", teamBody, nil), http.StatusForbidden, "")
	carol.must(http.StatusCreated, "POST", q.qr+"/team-configs", teamBody)
	tc := carol.must(http.StatusOK, "GET", q.qr+"/team-configs"+svc+"&team="+q.teamID, nil)
	expectError(t, bob.do("GET", q.qr+"/team-configs?teamConfigId="+str(tc["id"]), nil, nil), http.StatusNotFound, "")
	tstarted := carol.must(http.StatusAccepted, "POST", q.qr+"/team-configs/test-connection", map[string]any{"serviceName": q.serviceName, "teamId": q.teamID})
	if j := waitJob(t, carol, str(tstarted["workflowId"])); j["status"] != "completed" {
		t.Fatalf("team test-connection %v", j)
	}

	// Saved queries: owner only (404 for anyone else), execute checks read-only.
	sq := alice.must(http.StatusCreated, "POST", q.qr+"/savedQueries", map[string]any{"serviceName": q.serviceName, "name": "top", "queryText": "SELECT 1 AS one"})
	sqPath := q.qr + "/savedQueries/" + str(sq["id"])
	x := alice.must(http.StatusOK, "POST", sqPath+"/execute", nil)
	if x["queryText"] != "SELECT 1 AS one" || x["readOnly"] != true || x["executed"] != false {
		t.Fatalf("execute %v", x)
	}
	for _, c := range []*client{bob, admin} {
		expectError(t, c.do("GET", sqPath, nil, nil), http.StatusNotFound, "")
		expectError(t, c.do("PUT", sqPath, map[string]any{"queryText": "DROP TABLE x"}, nil), http.StatusNotFound, "")
		expectError(t, c.do("POST", sqPath+"/execute", nil, nil), http.StatusNotFound, "")
		expectError(t, c.do("DELETE", sqPath, nil, nil), http.StatusNotFound, "")
	}
	if l := bob.must(http.StatusOK, "GET", q.qr+"/savedQueries", nil); len(l["data"].([]any)) != 0 {
		t.Fatalf("bob lists alice's queries: %v", l)
	}
	bad := alice.must(http.StatusCreated, "POST", q.qr+"/savedQueries", map[string]any{"serviceName": q.serviceName, "name": "w", "queryText": "SELECT 1; DROP TABLE items"})
	expectError(t, alice.do("POST", q.qr+"/savedQueries/"+str(bad["id"])+"/execute", nil, nil), http.StatusBadRequest, "refused")
	alice.must(http.StatusOK, "PUT", sqPath, map[string]any{"name": "renamed"})
	alice.must(http.StatusOK, "DELETE", sqPath, nil)
	expectError(t, alice.do("GET", sqPath, nil, nil), http.StatusNotFound, "")

	// Changing the admin's credentials asks for a new test; deleting the admin config
	// takes every user and team config with it.
	admin.must(http.StatusOK, "PUT", q.qr+"/configs"+svc, map[string]any{"authConfig": map[string]any{"username": q.pgUser, "password": "Rotated-Pw-2"}})
	if e := alice.must(http.StatusOK, "GET", q.qr+"/user-configs"+svc, nil); e["status"] != "RevalidationRequired" {
		t.Fatalf("after rotation %v", e)
	}
	del := admin.must(http.StatusOK, "DELETE", q.qr+"/configs"+svc, nil)
	if del["deletedUserConfigs"] != float64(1) || del["deletedTeamConfigs"] != float64(1) {
		t.Fatalf("delete %v", del)
	}
	expectError(t, alice.do("GET", q.qr+"/user-configs?userConfigId="+ucID, nil, nil), http.StatusNotFound, "")
	expectError(t, carol.do("GET", q.qr+"/team-configs"+svc+"&team="+q.teamID, nil, nil), http.StatusNotFound, "")

	// No secret reached an answer above (checked per answer) or the server's logs.
	for _, secret := range []string{q.adminPassword, alicePassword, "Team-Pw-1", "Rotated-Pw-2"} {
		if strings.Contains(s.stderr.String(), secret) {
			t.Fatalf("the server logged a secret")
		}
	}
}

// TestQueryRunnerAnswersMaskSecrets checks every config answer for the passwords sent.
func TestQueryRunnerAnswersMaskSecrets(t *testing.T) {
	t.Parallel()
	q := newQRServer(t)
	admin, alice := q.s.admin, q.alice.c
	svc := "?service=" + q.serviceName
	answers := []*response{
		admin.do("POST", q.qr+"/configs", q.adminConfig(map[string]any{"allowAdminCredentials": true}), nil),
		admin.do("GET", q.qr+"/configs", nil, nil),
		admin.do("GET", q.qr+"/configs"+svc, nil, nil),
		alice.do("POST", q.qr+"/user-configs", map[string]any{"serviceName": q.serviceName,
			"userAuthConfig": map[string]any{"username": "x", "password": "Only-Alice-Knows"}}, nil),
		alice.do("GET", q.qr+"/user-configs", nil, nil),
		alice.do("GET", q.qr+"/user-configs"+svc, nil, nil),
		admin.do("GET", "/api/v1/openapi.json", nil, nil),
	}
	for _, r := range answers {
		if r.status >= 300 {
			t.Fatalf("%s", r)
		}
		if strings.Contains(string(r.raw), q.adminPassword) || strings.Contains(string(r.raw), "Only-Alice-Knows") {
			t.Fatalf("%s %s answers a secret", r.method, r.path)
		}
	}
	for _, p := range []string{"/queryRunner/configs", "/queryRunner/user-configs/test-connection", "/queryRunner/team-configs",
		"/queryRunner/savedQueries/{id}/execute", "/queryRunner/user-configs/accessible-schemas"} {
		if !strings.Contains(string(answers[len(answers)-1].raw), `"/v1`+p+`"`) {
			t.Errorf("the OpenAPI document has no %s", p)
		}
	}
	// A wrong password: the test-connection workflow fails clearly and without it.
	alice.must(http.StatusOK, "PUT", q.qr+"/user-configs"+svc, map[string]any{"userAuthConfig": map[string]any{"username": "qr_no_such_role", "password": "Wr0ng-Pass"}})
	started := alice.must(http.StatusAccepted, "POST", q.qr+"/user-configs/test-connection", map[string]any{"serviceName": q.serviceName})
	j := waitJob(t, alice, str(started["workflowId"]))
	msg := str(j["error"].(map[string]any)["message"])
	if j["status"] != "failed" || strings.Contains(msg, "Wr0ng-Pass") || !strings.Contains(msg, "refused the credentials") {
		t.Fatalf("wrong credentials job %v", j)
	}
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, str(x))
	}
	return out
}

// TestQueryRunnerRefreshToken refreshes an OAuth user config through the binary against
// a fake token endpoint (the outside world, an httptest server in this process).
func TestQueryRunnerRefreshToken(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var grants []string
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		grants = append(grants, r.PostForm.Get("grant_type")+":"+r.PostForm.Get("refresh_token"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("refresh_token") != "Rt-Alice-1" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"At-Alice-2","token_type":"Bearer","expires_in":600,"refresh_token":"Rt-Alice-1"}`))
	}))
	defer idp.Close()
	q := newQRServer(t)
	admin, alice := q.s.admin, q.alice.c
	svc := "?service=" + q.serviceName
	admin.must(http.StatusCreated, "POST", q.qr+"/configs", map[string]any{"serviceName": q.serviceName, "serviceType": "Postgres",
		"enabled": true, "hostPort": q.hostPort, "authConfig": map[string]any{"authType": "OAuth", "clientId": "meridian",
			"clientSecret": "Client-Secret-3", "tokenUrl": idp.URL + "/token", "scopes": []any{"session:role-any"}}})
	expectError(t, alice.do("POST", q.qr+"/user-configs", map[string]any{"serviceName": q.serviceName,
		"userAuthConfig": map[string]any{"authType": "OAuth", "refreshToken": "x", "tokenUrl": "http://169.254.169.254/"}}, nil), http.StatusBadRequest, "tokenUrl")
	alice.must(http.StatusCreated, "POST", q.qr+"/user-configs", map[string]any{"serviceName": q.serviceName,
		"userAuthConfig": map[string]any{"authType": "OAuth", "username": "alice", "refreshToken": "Rt-Alice-1"}})
	r := alice.do("POST", q.qr+"/user-configs/refresh-token"+svc, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("%s", r)
	}
	ac := r.obj(t)["userAuthConfig"].(map[string]any)
	if ac["accessToken"] != "*********" || ac["tokenExpiresAt"] == nil || strings.Contains(string(r.raw), "At-Alice-2") {
		t.Fatalf("refreshed %s", r.raw)
	}
	alice.must(http.StatusOK, "PUT", q.qr+"/user-configs"+svc, map[string]any{"userAuthConfig": map[string]any{"refreshToken": "Revoked-4"}})
	expectError(t, alice.do("POST", q.qr+"/user-configs/refresh-token"+svc, nil, nil), http.StatusBadRequest, "invalid_grant")
	mu.Lock()
	defer mu.Unlock()
	if len(grants) < 2 || grants[0] != "refresh_token:Rt-Alice-1" {
		t.Fatalf("the token endpoint saw %v", grants)
	}
}
