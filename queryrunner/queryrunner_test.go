package queryrunner_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// TestModule is the Query Runner config module's conformance suite: its tables, the
// rules of admin, user and team configs, resolution and saved queries, on every
// catalog driver. The cases that reach a database (realdb_test.go) run against real
// PostgreSQL and MariaDB databases they create.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"AdminConfigsAreForAdminsAndValidated", testAdminConfigs},
		{"AdminListShowsEveryServiceWithItsStatus", testAdminList},
		{"SecretsAreSealedAtRestAndMaskedInEveryAnswer", testSecrets},
		{"MaskedSecretsSentBackKeepTheStoredOnes", testMaskedRestore},
		{"UserConfigsFollowTheAdminConfig", testUserConfigs},
		{"UserConfigIDOfAnotherUserIsNotFound", testUserConfigByIDOwnership},
		{"TeamConfigsNeedTheTeamOwnerOrAnAdmin", testTeamConfigs},
		{"ResolutionPicksTeamUserThenAdmin", testResolution},
		{"UserConfigurableFieldsComeFromTheAdminOtherwise", testConfigurableFields},
		{"DisabledServiceIsRefused", testDisabled},
		{"CredentialChangeAsksForRevalidation", testRevalidation},
		{"AdminDeleteCascades", testCascade},
		{"HardDeletesTakeTheRows", testOnRemove},
		{"SavedQueriesAreTheOwnersOnly", testSavedQueries},
		{"ExecuteChecksOwnershipAndReadOnly", testExecute},
		{"RefreshTokenUsesTheTokenEndpoint", testRefreshToken},
		{"OneConnectionTestAtATime", testOneTestAtATime},
		{"OddNamesAreClear4xx", testOddNames},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open)) })
		}
	})
}

// fixture is a catalog with the module: users admin, alice, bob and carol; team
// analysts (member alice, owner carol); database services pgsvc and mysvc.
type fixture struct {
	t                        *testing.T
	ctx                      context.Context
	db                       store.Driver
	ents                     *store.Entities
	jobs                     *jobs.Service
	qr                       *queryrunner.Service
	admin, alice, bob, carol *meridian.Principal
	team                     meridian.Entity
	pgsvc, mysvc             meridian.Entity
}

func newFixture(t *testing.T, open drivertest.Open) *fixture {
	t.Helper()
	db := open(t, queryrunner.Module(), jobs.Module())
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, err := auth.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	ents := store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v, Policy: auth.Policy{}, Sealer: sealer})
	js := jobs.New(db, jobs.Config{})
	f := &fixture{t: t, ctx: context.Background(), db: db, ents: ents, jobs: js,
		qr: queryrunner.New(queryrunner.Config{Entities: ents, Sealer: sealer, Jobs: js})}
	system := meridian.System
	user := func(name, role string) *meridian.Principal {
		e := f.create(system, meridian.KindUser, `{"name":"`+name+`","email":"`+name+`@example.com","roles":["`+role+`"]}`)
		return &meridian.Principal{ID: e.ID(), Name: name, Roles: []string{role}}
	}
	f.admin = user("admin", meridian.RoleAdmin)
	f.alice = user("alice", meridian.RoleDataConsumer)
	f.bob = user("bob", meridian.RoleDataConsumer)
	f.carol = user("carol", meridian.RoleDataConsumer)
	f.team = f.create(system, meridian.KindTeam, `{"name":"analysts","users":[{"type":"user","name":"alice"}],"owners":[{"type":"user","name":"carol"}]}`)
	f.pgsvc = f.create(system, "databaseService", `{"name":"pgsvc","serviceType":"Postgres"}`)
	f.mysvc = f.create(system, "databaseService", `{"name":"mysvc","serviceType":"Mysql"}`)
	return f
}

func (f *fixture) create(p *meridian.Principal, kind, body string) meridian.Entity {
	f.t.Helper()
	res, err := f.ents.Create(f.ctx, p, kind, obj(f.t, body))
	if err != nil {
		f.t.Fatalf("create %s: %v", kind, err)
	}
	return res.Entity
}

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := meridian.ErrorCode(err); got != code {
		t.Fatalf("error %v (code %q), want code %q", err, got, code)
	}
}

func must[T any](t testing.TB) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// adminConfig is an enabled Basic admin config of service on 127.0.0.1:port.
func adminConfig(service, serviceType, extra string) string {
	return `{"serviceName":"` + service + `","serviceType":"` + serviceType + `","enabled":true,"hostPort":"127.0.0.1:5432",
		"authConfig":{"authType":"Basic","username":"root","password":"admin-pw","database":"admindb","schema":"adminschema"}` + extra + `}`
}

func (f *fixture) putAdmin(service, body string) map[string]any {
	f.t.Helper()
	v, _, err := f.qr.PutAdminConfig(f.ctx, f.admin, service, obj(f.t, body))
	if err != nil {
		f.t.Fatalf("put admin config: %v", err)
	}
	return v
}

func (f *fixture) putUser(p *meridian.Principal, body string) map[string]any {
	f.t.Helper()
	v, _, err := f.qr.PutUserConfig(f.ctx, p, "", obj(f.t, body), true)
	if err != nil {
		f.t.Fatalf("put user config: %v", err)
	}
	return v
}

func testAdminConfigs(t *testing.T, f *fixture) {
	ctx := f.ctx
	d := must[map[string]any](t)(f.qr.Defaults(f.admin))
	if d["maxResultSize"] != queryrunner.DefaultMaxResultSize {
		t.Fatalf("defaults %v", d)
	}
	_, err := f.qr.Defaults(f.alice)
	wantCode(t, err, meridian.EForbidden)
	_, err = f.qr.TestConfigAPI(ctx, f.alice)
	wantCode(t, err, meridian.EForbidden)
	h := must[map[string]any](t)(f.qr.TestConfigAPI(ctx, f.admin))
	if h["status"] != "healthy" || !strings.Contains(strings.Join(h["engines"].([]string), ","), "Postgres") {
		t.Fatalf("health %v", h)
	}
	_, err = f.qr.CreateAdminConfig(ctx, f.alice, obj(t, adminConfig("pgsvc", "Postgres", "")))
	wantCode(t, err, meridian.EForbidden)

	bad := []struct{ name, body, code, msg string }{
		{"unknown service", adminConfig("nosuch", "Postgres", ""), meridian.ENotFound, "nosuch"},
		{"unknown engine", adminConfig("pgsvc", "Oracle", ""), meridian.EInvalid, "serviceType"},
		{"no auth", `{"serviceName":"pgsvc","serviceType":"Postgres"}`, meridian.EInvalid, "authConfig is required"},
		{"max too big", adminConfig("pgsvc", "Postgres", `,"querySettings":{"maxResultSize":1000001}`), meridian.EInvalid, "maxResultSize"},
		{"max not int", adminConfig("pgsvc", "Postgres", `,"querySettings":{"maxResultSize":1.5}`), meridian.EInvalid, "maxResultSize"},
		{"bad field", adminConfig("pgsvc", "Postgres", `,"userConfigurableFields":["password"]`), meridian.EInvalid, "userConfigurableFields"},
		{"unknown member", adminConfig("pgsvc", "Postgres", `,"shell":"rm"`), meridian.EInvalid, "shell"},
		{"secret option", adminConfig("pgsvc", "Postgres", `,"connectionOptions":{"password":"x"}`), meridian.EInvalid, "connectionOptions"},
		{"bad host", `{"serviceName":"pgsvc","serviceType":"Postgres","hostPort":"h:99999","authConfig":{"username":"u"}}`, meridian.EInvalid, "hostPort"},
		{"basic needs user", `{"serviceName":"pgsvc","serviceType":"Postgres","authConfig":{"password":"p"}}`, meridian.EInvalid, "username"},
		{"oauth needs url", `{"serviceName":"pgsvc","serviceType":"Postgres","authConfig":{"authType":"OAuth","clientId":"c"}}`, meridian.EInvalid, "tokenUrl"},
		{"oauth url scheme", `{"serviceName":"pgsvc","serviceType":"Postgres","authConfig":{"authType":"OAuth","clientId":"c","tokenUrl":"file:///etc/passwd"}}`, meridian.EInvalid, "tokenUrl"},
		{"password for oauth", `{"serviceName":"pgsvc","serviceType":"Postgres","authConfig":{"authType":"OAuth","clientId":"c","tokenUrl":"http://x/t","password":"p"}}`, meridian.EInvalid, "password"},
		{"mask without secret", `{"serviceName":"pgsvc","serviceType":"Postgres","authConfig":{"username":"u","password":"*********"}}`, meridian.EInvalid, "mask"},
	}
	for _, b := range bad {
		_, err := f.qr.CreateAdminConfig(ctx, f.admin, obj(t, b.body))
		if meridian.ErrorCode(err) != b.code || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%s: %v, want %s naming %q", b.name, err, b.code, b.msg)
		}
	}
	created := must[map[string]any](t)(f.qr.CreateAdminConfig(ctx, f.admin, obj(t, `{"serviceName":"pgsvc","serviceType":"Postgres","authConfig":{"username":"root"}}`)))
	if created["enabled"] != false || created["querySettings"].(map[string]any)["maxResultSize"] != queryrunner.DefaultMaxResultSize ||
		len(created["userConfigurableFields"].([]string)) != 0 || created["allowAdminCredentials"] != false {
		t.Fatalf("defaults not applied: %v", created)
	}
	_, err = f.qr.CreateAdminConfig(ctx, f.admin, obj(t, adminConfig("pgsvc", "Postgres", "")))
	wantCode(t, err, meridian.EConflict)
	// PUT keeps what it does not name.
	v, created2, err := f.qr.PutAdminConfig(ctx, f.admin, "pgsvc", obj(t, `{"enabled":true,"querySettings":{"maxResultSize":5}}`))
	if err != nil || created2 || v["enabled"] != true || v["serviceType"] != "Postgres" || v["querySettings"].(map[string]any)["maxResultSize"] != 5 {
		t.Fatalf("put: %v %v %v", v, created2, err)
	}
	_, _, err = f.qr.PutAdminConfig(ctx, f.admin, "pgsvc", obj(t, `{"serviceName":"mysvc"}`))
	wantCode(t, err, meridian.EInvalid)
	got := must[map[string]any](t)(f.qr.AdminConfig(ctx, f.admin, "pgsvc"))
	if got["id"] != created["id"] || got["enabled"] != true {
		t.Fatalf("get %v", got)
	}
	_, err = f.qr.AdminConfig(ctx, f.alice, "pgsvc")
	wantCode(t, err, meridian.EForbidden)
	_, err = f.qr.AdminConfig(ctx, f.admin, "mysvc")
	wantCode(t, err, meridian.ENotFound)
}

func testAdminList(t *testing.T, f *fixture) {
	f.putAdmin("mysvc", adminConfig("mysvc", "Mysql", ""))
	page := must[queryrunner.AdminPage](t)(f.qr.AdminConfigs(f.ctx, f.admin, store.ListOptions{Limit: 10}))
	if page.Total != 2 || len(page.Data) != 2 {
		t.Fatalf("page %+v", page)
	}
	byName := map[string]queryrunner.ServiceStatus{}
	for _, s := range page.Data {
		byName[s.ServiceName] = s
	}
	if my := byName["mysvc"]; !my.Configured || !my.Enabled || my.ServiceType != "Mysql" || my.Config == nil {
		t.Fatalf("mysvc %+v", my)
	}
	if pg := byName["pgsvc"]; pg.Configured || pg.Config != nil {
		t.Fatalf("pgsvc %+v", pg)
	}
	one := must[queryrunner.AdminPage](t)(f.qr.AdminConfigs(f.ctx, f.admin, store.ListOptions{Limit: 1}))
	if len(one.Data) != 1 || one.After == "" {
		t.Fatalf("paging %+v", one)
	}
	_, err := f.qr.AdminConfigs(f.ctx, f.bob, store.ListOptions{Limit: 10})
	wantCode(t, err, meridian.EForbidden)
}

// rawRows returns every stored column of the module's config tables as text.
func (f *fixture) rawRows() string {
	f.t.Helper()
	var b strings.Builder
	err := f.ents.InTx(f.ctx, false, func(tx store.Tx) error {
		for _, q := range []string{"SELECT doc, secret FROM qr_admin_configs", "SELECT doc, secret FROM qr_user_configs", "SELECT doc, secret FROM qr_team_configs"} {
			rows, err := tx.SQL().Query(f.ctx, q)
			if err != nil {
				return err
			}
			for rows.Next() {
				var d, s string
				if err := rows.Scan(&d, &s); err != nil {
					rows.Close()
					return err
				}
				b.WriteString(d + "\n" + s + "\n")
			}
			rows.Close()
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

func testSecrets(t *testing.T, f *fixture) {
	v := f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", `,"allowAdminCredentials":true`))
	u := f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","password":"alice-secret-pw"}}`)
	for _, answer := range []map[string]any{v, u, must[map[string]any](t)(f.qr.AdminConfig(f.ctx, f.admin, "pgsvc")),
		must[map[string]any](t)(f.qr.UserConfigByID(f.ctx, f.alice, u["id"].(string)))} {
		b, _ := json.Marshal(answer)
		if strings.Contains(string(b), "admin-pw") || strings.Contains(string(b), "alice-secret-pw") || !strings.Contains(string(b), store.Mask) {
			t.Fatalf("answer shows a secret or no mask: %s", b)
		}
	}
	raw := f.rawRows()
	if strings.Contains(raw, "admin-pw") || strings.Contains(raw, "alice-secret-pw") || !strings.Contains(raw, "enc:") {
		t.Fatalf("stored rows hold a secret in clear text or nothing sealed:\n%s", raw)
	}
	res := must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.alice, "pgsvc", "", false))
	if res.Conn.Password != "alice-secret-pw" || res.Conn.Username != "alice" {
		t.Fatalf("resolution does not open the sealed secret: %+v", res.Layer)
	}
}

func testMaskedRestore(t *testing.T, f *fixture) {
	v := f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", `,"allowAdminCredentials":true`))
	// The admin config sent back as answered keeps its password.
	v["enabled"] = true
	back, _ := json.Marshal(v)
	f.putAdmin("pgsvc", string(back))
	res := must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.bob, "pgsvc", "", false))
	if res.Layer != queryrunner.LayerAdmin || res.Conn.Password != "admin-pw" {
		t.Fatalf("admin password not kept: layer %s", res.Layer)
	}
	u := f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","password":"pw1"}}`)
	u["userAuthConfig"].(map[string]any)["username"] = "alice2"
	back, _ = json.Marshal(map[string]any{"serviceName": "pgsvc", "userAuthConfig": u["userAuthConfig"]})
	if _, _, err := f.qr.PutUserConfig(f.ctx, f.alice, "pgsvc", obj(t, string(back)), false); err != nil {
		t.Fatal(err)
	}
	res = must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.alice, "pgsvc", "", false))
	if res.Conn.Username != "alice2" || res.Conn.Password != "pw1" {
		t.Fatalf("masked user password not restored: %s", res.Conn.Username)
	}
}

func testUserConfigs(t *testing.T, f *fixture) {
	ctx := f.ctx
	_, _, err := f.qr.PutUserConfig(ctx, f.alice, "", obj(t, `{"serviceName":"pgsvc","userAuthConfig":{"username":"a","password":"p"}}`), true)
	wantCode(t, err, meridian.ENotFound) // no admin config
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", ""))
	f.putAdmin("mysvc", adminConfig("mysvc", "Mysql", `,"enabled":false`))
	bad := []struct{ name, body, msg string }{
		{"no auth", `{"serviceName":"pgsvc"}`, "userAuthConfig is required"},
		{"other auth type", `{"serviceName":"pgsvc","userAuthConfig":{"authType":"OAuth","refreshToken":"r"}}`, "authType"},
		{"admin-only member", `{"serviceName":"pgsvc","userAuthConfig":{"username":"a","tokenUrl":"http://evil"}}`, "tokenUrl"},
		{"unknown member", `{"serviceName":"pgsvc","userAuthConfig":{"username":"a","host":"x"}}`, "host"},
		{"long name", `{"serviceName":"pgsvc","userAuthConfig":{"username":"` + strings.Repeat("a", 300) + `"}}`, "longer"},
		{"not an object", `{"serviceName":"pgsvc","userAuthConfig":"root:pw"}`, "object"},
		{"extra body member", `{"serviceName":"pgsvc","owner":"bob","userAuthConfig":{"username":"a"}}`, "owner"},
	}
	for _, b := range bad {
		_, _, err := f.qr.PutUserConfig(ctx, f.alice, "", obj(t, b.body), true)
		if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%s: %v, want invalid naming %q", b.name, err, b.msg)
		}
	}
	u, created, err := f.qr.PutUserConfig(ctx, f.alice, "", obj(t, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","password":"pw"}}`), true)
	if err != nil || !created || u["userId"] != f.alice.ID || u["connectionStatus"].(queryrunner.Status).Status != queryrunner.StatusUntested {
		t.Fatalf("create: %v %v %v", u, created, err)
	}
	_, created, err = f.qr.PutUserConfig(ctx, f.alice, "", obj(t, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","password":"pw2"}}`), true)
	if err != nil || created {
		t.Fatalf("second POST updates: %v %v", created, err)
	}
	_, _, err = f.qr.PutUserConfig(ctx, f.bob, "pgsvc", obj(t, `{"userAuthConfig":{"username":"bob"}}`), false)
	wantCode(t, err, meridian.ENotFound) // PUT does not create
	entry := must[queryrunner.ServiceEntry](t)(f.qr.UserServiceConfig(ctx, f.alice, "pgsvc"))
	if entry.UserConfig == nil || entry.Status != queryrunner.StatusUntested || entry.ServiceType != "Postgres" {
		t.Fatalf("entry %+v", entry)
	}
	none := must[queryrunner.ServiceEntry](t)(f.qr.UserServiceConfig(ctx, f.bob, "pgsvc"))
	if none.UserConfig != nil || none.Status != queryrunner.StatusNotConfigured {
		t.Fatalf("bob's entry %+v", none)
	}
	list := must[[]queryrunner.ServiceEntry](t)(f.qr.UserServices(ctx, f.bob))
	if len(list) != 1 || list[0].ServiceName != "pgsvc" || list[0].UserConfig != nil {
		t.Fatalf("bob's services (disabled mysvc omitted): %+v", list)
	}
	_, err = f.qr.UserServiceConfig(ctx, f.bob, "mysvc")
	wantCode(t, err, meridian.EInvalid) // disabled
	wantCode(t, f.qr.DeleteUserConfig(ctx, f.bob, "pgsvc"), meridian.ENotFound)
	if err := f.qr.DeleteUserConfig(ctx, f.alice, "pgsvc"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.qr.DeleteUserConfig(ctx, f.alice, "pgsvc"), meridian.ENotFound)
	_, _, err = f.qr.PutUserConfig(ctx, &meridian.Principal{Name: "ghost"}, "", obj(t, `{"serviceName":"pgsvc"}`), true)
	wantCode(t, err, meridian.EForbidden)
	_, _, err = f.qr.PutUserConfig(ctx, nil, "", obj(t, `{"serviceName":"pgsvc"}`), true)
	wantCode(t, err, meridian.EUnauthorized)
}

func testUserConfigByIDOwnership(t *testing.T, f *fixture) {
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", ""))
	u := f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","password":"pw"}}`)
	id := u["id"].(string)
	if got := must[map[string]any](t)(f.qr.UserConfigByID(f.ctx, f.alice, id)); got["id"] != id {
		t.Fatalf("own config %v", got)
	}
	// Release 2.0.2 answers another user's config metadata here; Meridian does not,
	// not even to an admin: a user config is its user's own.
	for _, p := range []*meridian.Principal{f.bob, f.admin} {
		_, err := f.qr.UserConfigByID(f.ctx, p, id)
		wantCode(t, err, meridian.ENotFound)
	}
	_, err := f.qr.UserConfigByID(f.ctx, f.alice, "not-a-uuid")
	wantCode(t, err, meridian.EInvalid)
}

func teamBody(service, teamID, user string) string {
	return `{"serviceName":"` + service + `","teamId":"` + teamID + `","userAuthConfig":{"username":"` + user + `","password":"team-pw"}}`
}

func testTeamConfigs(t *testing.T, f *fixture) {
	ctx := f.ctx
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", ""))
	f.putAdmin("mysvc", adminConfig("mysvc", "Mysql", ""))
	tid := f.team.ID()
	// alice is a member but not an owner; bob neither.
	for _, p := range []*meridian.Principal{f.alice, f.bob} {
		_, _, err := f.qr.PutTeamConfig(ctx, p, "", "", obj(t, teamBody("pgsvc", tid, "t")), true)
		wantCode(t, err, meridian.EForbidden)
	}
	_, _, err := f.qr.PutTeamConfig(ctx, f.carol, "", "", obj(t, `{"serviceName":"pgsvc","userAuthConfig":{"username":"t"}}`), true)
	wantCode(t, err, meridian.EInvalid) // teamId required
	c, created, err := f.qr.PutTeamConfig(ctx, f.carol, "", "", obj(t, teamBody("pgsvc", tid, "team_pg")), true)
	if err != nil || !created || c["teamId"] != tid {
		t.Fatalf("owner create: %v %v %v", c, created, err)
	}
	if _, _, err := f.qr.PutTeamConfig(ctx, f.admin, "mysvc", tid, obj(t, `{"userAuthConfig":{"username":"team_my","password":"x"}}`), true); err != nil {
		t.Fatalf("admin create: %v", err)
	}
	_, _, err = f.qr.PutTeamConfig(ctx, f.carol, "pgsvc", tid, obj(t, `{"teamId":"`+f.alice.ID+`","userAuthConfig":{"username":"x"}}`), false)
	wantCode(t, err, meridian.EInvalid) // body teamId must match
	id := c["id"].(string)
	lookups := []struct {
		name  string
		p     *meridian.Principal
		q     queryrunner.TeamConfigQuery
		one   bool
		count int
		code  string
	}{
		{"by id, owner", f.carol, queryrunner.TeamConfigQuery{TeamConfigID: id}, true, 0, ""},
		{"by id, member", f.alice, queryrunner.TeamConfigQuery{TeamConfigID: id}, false, 0, meridian.ENotFound},
		{"by id, stranger", f.bob, queryrunner.TeamConfigQuery{TeamConfigID: id}, false, 0, meridian.ENotFound},
		{"service and team, admin", f.admin, queryrunner.TeamConfigQuery{Service: "pgsvc", Team: tid}, true, 0, ""},
		{"service and team, stranger", f.bob, queryrunner.TeamConfigQuery{Service: "pgsvc", Team: tid}, false, 0, meridian.EForbidden},
		{"service alone, owner", f.carol, queryrunner.TeamConfigQuery{Service: "pgsvc"}, false, 1, ""},
		{"service alone, stranger sees none", f.bob, queryrunner.TeamConfigQuery{Service: "pgsvc"}, false, 0, ""},
		{"team alone, owner", f.carol, queryrunner.TeamConfigQuery{Team: tid}, false, 2, ""},
		{"team alone, member", f.alice, queryrunner.TeamConfigQuery{Team: tid}, false, 0, meridian.EForbidden},
		{"nothing, admin", f.admin, queryrunner.TeamConfigQuery{}, false, 2, ""},
	}
	for _, l := range lookups {
		one, list, err := f.qr.TeamConfigs(ctx, l.p, l.q)
		switch {
		case meridian.ErrorCode(err) != l.code:
			t.Errorf("%s: %v, want code %q", l.name, err, l.code)
		case l.code != "":
		case l.one && (one == nil || one["teamId"] != tid):
			t.Errorf("%s: one = %v", l.name, one)
		case !l.one && len(list) != l.count:
			t.Errorf("%s: %d configs, want %d", l.name, len(list), l.count)
		}
	}
	wantCode(t, f.qr.DeleteTeamConfig(ctx, f.alice, "pgsvc", tid), meridian.EForbidden)
	if err := f.qr.DeleteTeamConfig(ctx, f.carol, "pgsvc", tid); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.qr.DeleteTeamConfig(ctx, f.carol, "pgsvc", tid), meridian.ENotFound)
}

func testResolution(t *testing.T, f *fixture) {
	ctx := f.ctx
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", `,"querySettings":{"maxResultSize":77}`))
	tid := f.team.ID()
	// No config and the admin's credentials not allowed.
	_, err := f.qr.Resolve(ctx, f.alice, "pgsvc", "", false)
	wantCode(t, err, meridian.EInvalid)
	f.putAdmin("pgsvc", `{"allowAdminCredentials":true}`)
	cases := []struct {
		name   string
		setup  func()
		p      *meridian.Principal
		team   string
		prefer bool
		layer  string
		user   string
		code   string
	}{
		{"admin fallback", nil, f.alice, "", false, queryrunner.LayerAdmin, "root", ""},
		{"user config", func() {
			f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice_pg","password":"a"}}`)
		}, f.alice, "", false, queryrunner.LayerUser, "alice_pg", ""},
		{"preferTeam without a team config falls to the admin", nil, f.alice, "", true, queryrunner.LayerAdmin, "root", ""},
		{"teamId without a team config", nil, f.alice, tid, false, "", "", meridian.ENotFound},
		{"teamId", func() {
			if _, _, err := f.qr.PutTeamConfig(ctx, f.carol, "", "", obj(t, teamBody("pgsvc", tid, "team_pg")), true); err != nil {
				t.Fatal(err)
			}
		}, f.alice, tid, false, queryrunner.LayerTeam, "team_pg", ""},
		{"preferTeam", nil, f.alice, "", true, queryrunner.LayerTeam, "team_pg", ""},
		{"user config still wins without preferTeam", nil, f.alice, "", false, queryrunner.LayerUser, "alice_pg", ""},
		{"teamId of a team the caller is not in", nil, f.bob, tid, false, "", "", meridian.EForbidden},
		{"teamId of an owner", nil, f.carol, tid, false, queryrunner.LayerTeam, "team_pg", ""},
		{"teamId not a uuid", nil, f.alice, "analysts", false, "", "", meridian.EInvalid},
		{"unknown team", nil, f.alice, f.bob.ID, false, "", "", meridian.ENotFound},
		{"bob falls to the admin", nil, f.bob, "", false, queryrunner.LayerAdmin, "root", ""},
	}
	for _, c := range cases {
		if c.setup != nil {
			c.setup()
		}
		res, err := f.qr.Resolve(ctx, c.p, "pgsvc", c.team, c.prefer)
		if meridian.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want code %q", c.name, err, c.code)
			continue
		}
		if c.code != "" {
			continue
		}
		if res.Layer != c.layer || res.Conn.Username != c.user || res.UserID != c.p.ID || res.MaxResultSize != 77 ||
			res.ConnectionType != "Postgres" || res.AuthType != "basic" || res.ConfigID == "" || res.Conn.Host != "127.0.0.1" || res.Conn.Port != 5432 {
			t.Errorf("%s: layer %s user %s (want %s %s), %+v", c.name, res.Layer, res.Conn.Username, c.layer, c.user,
				queryrunner.Resolution{Layer: res.Layer, ConfigID: res.ConfigID, UserID: res.UserID, MaxResultSize: res.MaxResultSize})
		}
	}
	_, err = f.qr.Resolve(ctx, f.alice, "nosuch", "", false)
	wantCode(t, err, meridian.ENotFound)
}

func testConfigurableFields(t *testing.T, f *fixture) {
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", `,"userConfigurableFields":["database","database"]`))
	a := must[map[string]any](t)(f.qr.AdminConfig(f.ctx, f.admin, "pgsvc"))
	if fs := a["userConfigurableFields"].([]string); len(fs) != 1 || fs[0] != "database" {
		t.Fatalf("fields %v", fs)
	}
	_, _, err := f.qr.PutUserConfig(f.ctx, f.alice, "", obj(t, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","schema":"mine"}}`), true)
	if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "schema is not user-configurable") {
		t.Fatalf("schema refused: %v", err)
	}
	f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","database":"alicedb"}}`)
	res := must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.alice, "pgsvc", "", false))
	if res.Conn.Database != "alicedb" || res.Conn.Schema != "adminschema" {
		t.Fatalf("database %q schema %q", res.Conn.Database, res.Conn.Schema)
	}
	// The admin takes database back: the stored user value no longer counts.
	f.putAdmin("pgsvc", `{"userConfigurableFields":[]}`)
	res = must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.alice, "pgsvc", "", false))
	if res.Conn.Database != "admindb" {
		t.Fatalf("database %q, want the admin's", res.Conn.Database)
	}
}

func testDisabled(t *testing.T, f *fixture) {
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", `,"allowAdminCredentials":true`))
	f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice"}}`)
	f.putAdmin("pgsvc", `{"enabled":false}`)
	_, err := f.qr.Resolve(f.ctx, f.alice, "pgsvc", "", false)
	if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("resolve on a disabled service: %v", err)
	}
	_, _, err = f.qr.PutUserConfig(f.ctx, f.bob, "", obj(t, `{"serviceName":"pgsvc","userAuthConfig":{"username":"bob"}}`), true)
	wantCode(t, err, meridian.EInvalid)
}

func testRevalidation(t *testing.T, f *fixture) {
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", ""))
	f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice"}}`)
	if _, _, err := f.qr.PutTeamConfig(f.ctx, f.carol, "", "", obj(t, teamBody("pgsvc", f.team.ID(), "t")), true); err != nil {
		t.Fatal(err)
	}
	status := func() (string, string) {
		e := must[queryrunner.ServiceEntry](t)(f.qr.UserServiceConfig(f.ctx, f.alice, "pgsvc"))
		one, _, err := f.qr.TeamConfigs(f.ctx, f.carol, queryrunner.TeamConfigQuery{Service: "pgsvc", Team: f.team.ID()})
		if err != nil {
			t.Fatal(err)
		}
		return e.Status, one["connectionStatus"].(queryrunner.Status).Status
	}
	f.putAdmin("pgsvc", `{"querySettings":{"maxResultSize":10}}`) // not a credential
	if u, tm := status(); u != queryrunner.StatusUntested || tm != queryrunner.StatusUntested {
		t.Fatalf("after a settings change: %s %s", u, tm)
	}
	f.putAdmin("pgsvc", `{"authConfig":{"username":"root","password":"new-admin-pw"}}`)
	if u, tm := status(); u != queryrunner.StatusRevalidationRequired || tm != queryrunner.StatusRevalidationRequired {
		t.Fatalf("after a credential change: %s %s", u, tm)
	}
}

// countRows counts the rows of the module's tables about a service id (and every
// saved query).
func (f *fixture) countRows(serviceID string) int {
	f.t.Helper()
	total := 0
	err := f.ents.InTx(f.ctx, false, func(tx store.Tx) error {
		for _, table := range []string{"qr_admin_configs", "qr_user_configs", "qr_team_configs"} {
			var n int
			if err := tx.SQL().QueryRow(f.ctx, "SELECT COUNT(*) FROM "+table+" WHERE service_id = $1", serviceID).Scan(&n); err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return total
}

func testCascade(t *testing.T, f *fixture) {
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", ""))
	f.putAdmin("mysvc", adminConfig("mysvc", "Mysql", ""))
	for _, svc := range []string{"pgsvc", "mysvc"} {
		f.putUser(f.alice, `{"serviceName":"`+svc+`","userAuthConfig":{"username":"alice","password":"alice-pw"}}`)
		f.putUser(f.bob, `{"serviceName":"`+svc+`","userAuthConfig":{"username":"bob","password":"bob-pw"}}`)
		if _, _, err := f.qr.PutTeamConfig(f.ctx, f.admin, "", "", obj(t, teamBody(svc, f.team.ID(), "t")), true); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.countRows(f.pgsvc.ID()); n != 4 {
		t.Fatalf("%d rows before", n)
	}
	_, err := f.qr.DeleteAdminConfig(f.ctx, f.alice, "pgsvc")
	wantCode(t, err, meridian.EForbidden)
	res := must[queryrunner.DeleteResult](t)(f.qr.DeleteAdminConfig(f.ctx, f.admin, "pgsvc"))
	if res.DeletedUserConfigs != 2 || res.DeletedTeamConfigs != 1 {
		t.Fatalf("deleted %+v", res)
	}
	if n := f.countRows(f.pgsvc.ID()); n != 0 {
		t.Fatalf("%d rows (and their sealed secrets) left after the cascade", n)
	}
	if n := f.countRows(f.mysvc.ID()); n != 4 {
		t.Fatalf("the other service lost rows: %d", n)
	}
	_, err = f.qr.UserServiceConfig(f.ctx, f.alice, "pgsvc")
	wantCode(t, err, meridian.ENotFound)
	_, err = f.qr.DeleteAdminConfig(f.ctx, f.admin, "pgsvc")
	wantCode(t, err, meridian.ENotFound)
}

func testOnRemove(t *testing.T, f *fixture) {
	f.putAdmin("mysvc", adminConfig("mysvc", "Mysql", ""))
	f.putUser(f.alice, `{"serviceName":"mysvc","userAuthConfig":{"username":"alice"}}`)
	if _, err := f.qr.CreateSavedQuery(f.ctx, f.bob, obj(t, `{"serviceName":"mysvc","name":"q","queryText":"SELECT 1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ents.Delete(f.ctx, f.admin, "databaseService", store.ByID(f.mysvc.ID()), store.DeleteOptions{Hard: true, Recursive: true}); err != nil {
		t.Fatal(err)
	}
	if n := f.countRows(f.mysvc.ID()); n != 0 {
		t.Fatalf("%d config rows left after the service's hard delete", n)
	}
	if _, err := f.ents.Delete(f.ctx, f.admin, meridian.KindUser, store.ByID(f.bob.ID), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	page := must[queryrunner.SavedPage](t)(f.qr.SavedQueries(f.ctx, f.bob, "", 0, ""))
	if page.Total != 0 {
		t.Fatalf("bob's saved queries outlived him: %d", page.Total)
	}
}

func testSavedQueries(t *testing.T, f *fixture) {
	ctx := f.ctx
	bad := []struct{ body, msg string }{
		{`{"serviceName":"pgsvc","name":"n"}`, "queryText is required"},
		{`{"serviceName":"pgsvc","queryText":"SELECT 1"}`, "name is required"},
		{`{"serviceName":"pgsvc","name":"n","queryText":"` + strings.Repeat("x", queryrunner.MaxQueryText+1) + `"}`, "queryText"},
		{`{"serviceName":"pgsvc","name":"n","queryText":"SELECT 1","ownerId":"bob"}`, "ownerId"},
	}
	for _, b := range bad {
		_, err := f.qr.CreateSavedQuery(ctx, f.alice, obj(t, b.body))
		if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%.60s: %v, want invalid naming %q", b.body, err, b.msg)
		}
	}
	_, err := f.qr.CreateSavedQuery(ctx, f.alice, obj(t, `{"serviceName":"nosuch","name":"n","queryText":"SELECT 1"}`))
	wantCode(t, err, meridian.ENotFound)
	var ids []string
	for i, svc := range []string{"pgsvc", "pgsvc", "mysvc"} {
		q := must[queryrunner.SavedQuery](t)(f.qr.CreateSavedQuery(ctx, f.alice, obj(t, `{"serviceName":"`+svc+`","name":"q`+string(rune('0'+i))+`","queryText":"SELECT 1"}`)))
		if q.Owner["id"] != f.alice.ID {
			t.Fatalf("owner %v", q.Owner)
		}
		ids = append(ids, q.ID)
	}
	must[queryrunner.SavedQuery](t)(f.qr.CreateSavedQuery(ctx, f.bob, obj(t, `{"serviceName":"pgsvc","name":"bobs","queryText":"SELECT 2"}`)))
	page := must[queryrunner.SavedPage](t)(f.qr.SavedQueries(ctx, f.alice, "", 2, ""))
	if page.Total != 3 || len(page.Data) != 2 || page.After == "" {
		t.Fatalf("page 1 %+v", page)
	}
	page2 := must[queryrunner.SavedPage](t)(f.qr.SavedQueries(ctx, f.alice, "", 2, page.After))
	if len(page2.Data) != 1 || page2.After != "" {
		t.Fatalf("page 2 %+v", page2)
	}
	seen := map[string]bool{}
	for _, q := range append(page.Data, page2.Data...) {
		seen[q.ID] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Fatalf("the pages miss %s", id)
		}
	}
	if pg := must[queryrunner.SavedPage](t)(f.qr.SavedQueries(ctx, f.alice, "pgsvc", 0, "")); pg.Total != 2 {
		t.Fatalf("pgsvc filter %+v", pg)
	}
	_, err = f.qr.SavedQueries(ctx, f.alice, "", 0, "garbage!")
	wantCode(t, err, meridian.EInvalid)
	_, err = f.qr.SavedQueries(ctx, f.alice, "", 101, "")
	wantCode(t, err, meridian.EInvalid)

	up := must[queryrunner.SavedQuery](t)(f.qr.UpdateSavedQuery(ctx, f.alice, ids[0], obj(t, `{"name":"renamed"}`)))
	if up.Name != "renamed" || up.QueryText != "SELECT 1" {
		t.Fatalf("update %+v", up)
	}
	_, err = f.qr.UpdateSavedQuery(ctx, f.alice, ids[0], obj(t, `{}`))
	wantCode(t, err, meridian.EInvalid)
	_, err = f.qr.UpdateSavedQuery(ctx, f.alice, ids[0], obj(t, `{"serviceName":"mysvc","name":"x"}`))
	wantCode(t, err, meridian.EInvalid)
	// Another user, admins included, gets 404 for every owner-only operation.
	for _, p := range []*meridian.Principal{f.bob, f.admin} {
		_, err = f.qr.SavedQuery(ctx, p, ids[0])
		wantCode(t, err, meridian.ENotFound)
		_, err = f.qr.UpdateSavedQuery(ctx, p, ids[0], obj(t, `{"queryText":"DELETE FROM items"}`))
		wantCode(t, err, meridian.ENotFound)
		wantCode(t, f.qr.DeleteSavedQuery(ctx, p, ids[0]), meridian.ENotFound)
	}
	if got := must[queryrunner.SavedQuery](t)(f.qr.SavedQuery(ctx, f.alice, ids[0])); got.QueryText != "SELECT 1" {
		t.Fatalf("another user changed it: %+v", got)
	}
	if err := f.qr.DeleteSavedQuery(ctx, f.alice, ids[0]); err != nil {
		t.Fatal(err)
	}
	_, err = f.qr.SavedQuery(ctx, f.alice, ids[0])
	wantCode(t, err, meridian.ENotFound)
	_, err = f.qr.SavedQuery(ctx, f.alice, "../etc")
	wantCode(t, err, meridian.EInvalid)
	// owner is the server's: a body naming another owner still saves the caller's.
	q := must[queryrunner.SavedQuery](t)(f.qr.CreateSavedQuery(ctx, f.alice, obj(t, `{"serviceName":"pgsvc","name":"n","queryText":"SELECT 1","owner":{"id":"`+f.bob.ID+`"}}`)))
	if q.Owner["id"] != f.alice.ID {
		t.Fatalf("owner %v", q.Owner)
	}
	if _, err := f.qr.SavedQuery(ctx, f.bob, q.ID); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("bob reads it: %v", err)
	}
}

func testExecute(t *testing.T, f *fixture) {
	ctx := f.ctx
	f.putAdmin("mysvc", adminConfig("mysvc", "Mysql", ""))
	sel := must[queryrunner.SavedQuery](t)(f.qr.CreateSavedQuery(ctx, f.alice, obj(t, `{"serviceName":"mysvc","name":"ok","queryText":"SELECT id FROM items WHERE id < 3"}`)))
	x := must[queryrunner.Execution](t)(f.qr.ExecuteSavedQuery(ctx, f.alice, sel.ID))
	body, _ := x.Trigger["body"].(map[string]any)
	if !x.ReadOnly || x.Executed || x.QueryText != sel.QueryText || x.Dialect != "mysql" || x.StatementType != "SELECT" ||
		body["query"] != sel.QueryText || body["serviceName"] != "mysvc" || x.Trigger["path"] != "/api/v1/platform/apps/queryRunner/trigger" {
		t.Fatalf("execution %+v", x)
	}
	// Release 2.0.2 lets anyone execute a saved query by id; Meridian does not.
	for _, p := range []*meridian.Principal{f.bob, f.admin} {
		_, err := f.qr.ExecuteSavedQuery(ctx, p, sel.ID)
		wantCode(t, err, meridian.ENotFound)
	}
	for _, text := range []string{"DELETE FROM items", "SELECT 1; DROP TABLE items", "WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d"} {
		svc := "mysvc"
		if strings.HasPrefix(text, "WITH") {
			svc = "pgsvc" // a data-modifying CTE is PostgreSQL's
		}
		q := must[queryrunner.SavedQuery](t)(f.qr.CreateSavedQuery(ctx, f.alice, obj(t, `{"serviceName":"`+svc+`","name":"w","queryText":`+quote(text)+`}`)))
		_, err := f.qr.ExecuteSavedQuery(ctx, f.alice, q.ID)
		if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%q: %v, want a refusal", text, err)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitJob waits until a job ends and returns it.
func (f *fixture) waitJob(p *meridian.Principal, id string) jobs.Job {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := f.jobs.Get(f.ctx, p, id)
		if err != nil {
			f.t.Fatal(err)
		}
		if j.Status == jobs.StatusCompleted || j.Status == jobs.StatusFailed {
			return j
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("job %s still %s", id, j.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testOneTestAtATime points a service at a listener that accepts connections and never
// answers: the connection test hangs until the engine's connect timeout, a second test
// of the same config meanwhile is refused, and the hung test fails as unavailable.
func testOneTestAtATime(t *testing.T, f *fixture) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	f.putAdmin("pgsvc", `{"serviceName":"pgsvc","serviceType":"Postgres","enabled":true,"hostPort":"`+ln.Addr().String()+`","authConfig":{"username":"root"}}`)
	f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","password":"pw"}}`)
	first := must[queryrunner.TestStarted](t)(f.qr.TestConnection(f.ctx, f.alice, "pgsvc", ""))
	_, err = f.qr.TestConnection(f.ctx, f.alice, "pgsvc", "")
	wantCode(t, err, meridian.EConflict)
	j := f.waitJob(f.alice, first.WorkflowID)
	if j.Status != jobs.StatusFailed || j.ErrorCode != meridian.EUnavailable {
		t.Fatalf("hung test: %s %s %q", j.Status, j.ErrorCode, j.Error)
	}
	// Once it ended, the config can be tested again (the listener gone, it fails fast).
	ln.Close()
	again := must[queryrunner.TestStarted](t)(f.qr.TestConnection(f.ctx, f.alice, "pgsvc", ""))
	f.waitJob(f.alice, again.WorkflowID)
}

func testOddNames(t *testing.T, f *fixture) {
	f.putAdmin("pgsvc", adminConfig("pgsvc", "Postgres", ""))
	for _, name := range []string{"", " ", "a\x00b", strings.Repeat("s", 300), `"pgsvc"`, "pgsvc.db.sch", "../pgsvc", "%", "' OR 1=1 --"} {
		calls := map[string]error{}
		_, calls["admin get"] = f.qr.AdminConfig(f.ctx, f.admin, name)
		_, _, calls["admin put"] = f.qr.PutAdminConfig(f.ctx, f.admin, name, obj(t, `{"enabled":true}`))
		_, calls["admin delete"] = f.qr.DeleteAdminConfig(f.ctx, f.admin, name)
		_, calls["user entry"] = f.qr.UserServiceConfig(f.ctx, f.alice, name)
		_, calls["resolve"] = f.qr.Resolve(f.ctx, f.alice, name, "", false)
		calls["user delete"] = f.qr.DeleteUserConfig(f.ctx, f.alice, name)
		_, calls["saved"] = f.qr.SavedQueries(f.ctx, f.alice, name, 0, "")
		_, _, calls["team"] = f.qr.TeamConfigs(f.ctx, f.carol, queryrunner.TeamConfigQuery{Service: name, Team: name})
		for call, err := range calls {
			code := meridian.ErrorCode(err)
			if code == "" && (call == "saved" || (call == "team" && strings.TrimSpace(name) == "")) {
				continue // a filter that matches nothing; no filter at all lists
			}
			if code != meridian.EInvalid && code != meridian.ENotFound {
				t.Errorf("%s of %q: %v (code %q), want 400 or 404", call, name, err, code)
			}
		}
	}
	// The config of pgsvc is untouched.
	if c := must[map[string]any](t)(f.qr.AdminConfig(f.ctx, f.admin, "pgsvc")); c["enabled"] != true {
		t.Fatalf("pgsvc changed: %v", c)
	}
}
