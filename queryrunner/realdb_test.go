package queryrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/queryrunner/dbtest"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/store/drivertest"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// target is a real database the configs point at: a throwaway PostgreSQL or MariaDB
// database seeded with items, an admin login, and two limited logins (alice's and
// the team's) that may only read it.
type target struct {
	name        string
	serviceType string
	conn        engine.Conn // the admin login
	aliceUser   string
	alicePass   string
	teamUser    string
	teamPass    string
	// currentUser is the statement that answers the login's name, and login turns a
	// login name into what it answers.
	currentUser string
	// wrongPasswordChecked: the server checks passwords (MariaDB; the local
	// PostgreSQL trusts every login, so a wrong role name stands in for it).
	wrongPasswordChecked bool
}

func pgTarget(t *testing.T) target {
	tg := dbtest.Postgres(t)
	role := func(prefix string) string {
		name := prefix + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
		ctx := context.Background()
		if _, err := tg.PG.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD 'limited-pw'", name)); err != nil {
			t.Fatal(err)
		}
		if _, err := tg.PG.Exec(ctx, fmt.Sprintf("GRANT SELECT ON items TO %s", name)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = tg.PG.Exec(context.Background(), fmt.Sprintf("REVOKE ALL ON items FROM %s", name))
			_, _ = tg.PG.Exec(context.Background(), fmt.Sprintf("DROP ROLE IF EXISTS %s", name))
		})
		return name
	}
	return target{name: "PostgreSQL", serviceType: "Postgres", conn: tg.Conn, aliceUser: role("qr_alice_"), alicePass: "limited-pw",
		teamUser: role("qr_team_"), teamPass: "limited-pw", currentUser: "SELECT current_user"}
}

func mysqlTarget(t *testing.T) target {
	tg := dbtest.MySQL(t)
	return target{name: "MariaDB", serviceType: "Mysql", conn: tg.Conn,
		aliceUser: dbtest.MySQLUser(t, tg.DB, tg.Conn.Database, "alice-db-pw-7"), alicePass: "alice-db-pw-7",
		teamUser: dbtest.MySQLUser(t, tg.DB, tg.Conn.Database, "team-db-pw-9"), teamPass: "team-db-pw-9",
		currentUser: "SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)", wrongPasswordChecked: true}
}

// rows collects a run's result.
type rows struct {
	cols []engine.Column
	data [][]any
}

func (r *rows) Columns(c []engine.Column) error { r.cols = c; return nil }
func (r *rows) Row(v []any) error               { r.data = append(r.data, v); return nil }

// run resolves p's credentials as the trigger does and runs sql with them.
func run(t *testing.T, f *fixture, p *meridian.Principal, teamID string, prefer bool, sql string) (queryrunner.Resolution, string) {
	t.Helper()
	res, err := f.qr.Resolve(f.ctx, p, "realsvc", teamID, prefer)
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	eng, ok := engine.Lookup(res.ConnectionType)
	if !ok {
		t.Fatalf("no engine %s", res.ConnectionType)
	}
	var out rows
	if _, err := eng.Query(f.ctx, res.Conn, sql, engine.Limits{MaxRows: res.MaxResultSize, Timeout: 20 * time.Second}, &out); err != nil {
		t.Fatalf("%s as %s: %v", sql, res.Layer, err)
	}
	if len(out.data) != 1 || len(out.data[0]) != 1 {
		t.Fatalf("%s answered %v", sql, out.data)
	}
	return res, fmt.Sprint(out.data[0][0])
}

// TestRealDatabases runs the configs against real PostgreSQL and MariaDB databases
// the test creates and seeds, on every catalog driver: each resolution path connects
// as the login its layer holds, the admin's database is used where the user may not
// choose, test-connection runs SELECT 1 as a durable workflow and records its
// outcome, a wrong password fails with a clear error holding no secret, and
// introspection answers what the caller's login reaches.
func TestRealDatabases(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, mk := range []func(*testing.T) target{pgTarget, mysqlTarget} {
			tg := mk(t)
			t.Run(tg.name, func(t *testing.T) { testRealDatabase(t, newFixture(t, open), tg) })
		}
	})
}

func testRealDatabase(t *testing.T, f *fixture, tg target) {
	ctx := f.ctx
	f.create(meridian.System, "databaseService", `{"name":"realsvc","serviceType":"`+tg.serviceType+`"}`)
	hostPort := net.JoinHostPort(tg.conn.Host, strconv.Itoa(tg.conn.Port))
	f.putAdmin("realsvc", `{"serviceName":"realsvc","serviceType":"`+tg.serviceType+`","enabled":true,"allowAdminCredentials":true,
		"hostPort":"`+hostPort+`","querySettings":{"maxResultSize":5},
		"authConfig":{"authType":"Basic","username":"`+tg.conn.Username+`","password":"`+tg.conn.Password+`","database":"`+tg.conn.Database+`"}}`)

	// Each resolution path connects as its own login.
	res, who := run(t, f, f.bob, "", false, tg.currentUser)
	if res.Layer != queryrunner.LayerAdmin || who != tg.conn.Username {
		t.Fatalf("admin fallback ran as %s (%s)", who, res.Layer)
	}
	f.putUser(f.alice, `{"serviceName":"realsvc","userAuthConfig":{"username":"`+tg.aliceUser+`","password":"`+tg.alicePass+`"}}`)
	if res, who = run(t, f, f.alice, "", false, tg.currentUser); res.Layer != queryrunner.LayerUser || who != tg.aliceUser {
		t.Fatalf("user config ran as %s (%s)", who, res.Layer)
	}
	if _, _, err := f.qr.PutTeamConfig(ctx, f.carol, "", "", obj(t, `{"serviceName":"realsvc","teamId":"`+f.team.ID()+`",
		"userAuthConfig":{"username":"`+tg.teamUser+`","password":"`+tg.teamPass+`"}}`), true); err != nil {
		t.Fatal(err)
	}
	if res, who = run(t, f, f.alice, f.team.ID(), false, tg.currentUser); res.Layer != queryrunner.LayerTeam || who != tg.teamUser {
		t.Fatalf("teamId ran as %s (%s)", who, res.Layer)
	}
	if res, who = run(t, f, f.alice, "", true, tg.currentUser); res.Layer != queryrunner.LayerTeam || who != tg.teamUser {
		t.Fatalf("preferTeam ran as %s (%s)", who, res.Layer)
	}
	if _, err := f.qr.Resolve(ctx, f.bob, "realsvc", f.team.ID(), false); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("a non-member used the team's credentials: %v", err)
	}
	// database is not user-configurable: alice's login runs in the admin's database,
	// and reads the seeded rows there, capped by maxResultSize.
	dbStmt := "SELECT current_database()"
	if tg.serviceType == "Mysql" {
		dbStmt = "SELECT DATABASE()"
	}
	if _, db := run(t, f, f.alice, "", false, dbStmt); db != tg.conn.Database {
		t.Fatalf("alice ran in %s, want the admin's %s", db, tg.conn.Database)
	}
	res = must[queryrunner.Resolution](t)(f.qr.Resolve(ctx, f.alice, "realsvc", "", false))
	eng, _ := engine.Lookup(res.ConnectionType)
	var out rows
	sum, err := eng.Query(ctx, res.Conn, "SELECT id FROM items ORDER BY id", engine.Limits{MaxRows: res.MaxResultSize, Timeout: 20 * time.Second}, &out)
	if err != nil || len(out.data) != 5 || !sum.Truncated {
		t.Fatalf("maxResultSize 5: %d rows, %+v, %v", len(out.data), sum, err)
	}

	// test-connection: a durable workflow running SELECT 1 with the stored credentials.
	started := must[queryrunner.TestStarted](t)(f.qr.TestConnection(ctx, f.alice, "realsvc", ""))
	if j := f.waitJob(f.alice, started.WorkflowID); j.Status != jobs.StatusCompleted || j.Type != queryrunner.JobTypeTestConnection {
		t.Fatalf("test-connection job %+v", j)
	}
	entry := must[queryrunner.ServiceEntry](t)(f.qr.UserServiceConfig(ctx, f.alice, "realsvc"))
	if entry.Status != queryrunner.StatusSuccessful {
		t.Fatalf("status after a good test: %+v", entry)
	}
	v := must[map[string]any](t)(f.qr.UpdateConnectionStatus(ctx, f.alice, "realsvc", "", started.WorkflowID))
	if v["connectionStatus"].(queryrunner.Status).Status != queryrunner.StatusSuccessful {
		t.Fatalf("update-connection-status %v", v)
	}
	_, err = f.qr.UpdateConnectionStatus(ctx, f.bob, "realsvc", "", started.WorkflowID)
	wantCode(t, err, meridian.ENotFound) // bob did not start it
	// A test a restart interrupted is run again from its parameters.
	resumedID := "5d1c3c9e-0000-4000-8000-000000000001"
	params := []byte(`{"scope":"user","configId":"` + entry.UserConfig["id"].(string) + `"}`)
	if out, err := f.qr.ResumeTestConnection(ctx, jobs.Job{ID: resumedID, Type: queryrunner.JobTypeTestConnection, Params: params}, nil); err != nil {
		t.Fatalf("resume: %v", err)
	} else if b, _ := json.Marshal(out); !strings.Contains(string(b), queryrunner.StatusSuccessful) {
		t.Fatalf("resumed result %s", b)
	}
	entry = must[queryrunner.ServiceEntry](t)(f.qr.UserServiceConfig(ctx, f.alice, "realsvc"))
	if st := entry.UserConfig["connectionStatus"].(queryrunner.Status); st.WorkflowID != resumedID || st.Status != queryrunner.StatusSuccessful {
		t.Fatalf("status after the resumed test: %+v", st)
	}
	teamStarted := must[queryrunner.TestStarted](t)(f.qr.TestConnection(ctx, f.carol, "realsvc", f.team.ID()))
	if j := f.waitJob(f.carol, teamStarted.WorkflowID); j.Status != jobs.StatusCompleted {
		t.Fatalf("team test-connection job %+v", j)
	}
	_, err = f.qr.TestConnection(ctx, f.alice, "realsvc", f.team.ID())
	wantCode(t, err, meridian.EForbidden) // a member is not the team's owner
	_, err = f.qr.UpdateConnectionStatus(ctx, f.alice, "realsvc", "", teamStarted.WorkflowID)
	wantCode(t, err, meridian.ENotFound) // carol's workflow, not alice's

	// A wrong password: the workflow fails with a clear error holding no secret.
	badLogin, badPass := tg.aliceUser, "wrong-pass-123"
	if !tg.wrongPasswordChecked {
		badLogin = "qr_nosuch_role"
	}
	f.putUser(f.alice, `{"serviceName":"realsvc","userAuthConfig":{"username":"`+badLogin+`","password":"`+badPass+`"}}`)
	started = must[queryrunner.TestStarted](t)(f.qr.TestConnection(ctx, f.alice, "realsvc", ""))
	j := f.waitJob(f.alice, started.WorkflowID)
	if j.Status != jobs.StatusFailed || strings.Contains(j.Error, badPass) || !strings.Contains(j.Error, "refused the credentials") {
		t.Fatalf("wrong password job: %s %q (%s)", j.Status, j.Error, j.ErrorCode)
	}
	entry = must[queryrunner.ServiceEntry](t)(f.qr.UserServiceConfig(ctx, f.alice, "realsvc"))
	st := entry.UserConfig["connectionStatus"].(queryrunner.Status)
	if st.Status != queryrunner.StatusFailed || strings.Contains(st.Message, badPass) || st.WorkflowID != started.WorkflowID {
		t.Fatalf("status after a failed test: %+v", st)
	}
	_, err = f.qr.AccessibleDatabases(ctx, f.alice, "realsvc")
	if meridian.ErrorCode(err) != meridian.EInvalid || strings.Contains(err.Error(), badPass) {
		t.Fatalf("introspection with a wrong password: %v", err)
	}

	// Introspection with the caller's credentials.
	f.putUser(f.alice, `{"serviceName":"realsvc","userAuthConfig":{"username":"`+tg.aliceUser+`","password":"`+tg.alicePass+`"}}`)
	dbs := must[[]string](t)(f.qr.AccessibleDatabases(ctx, f.alice, "realsvc"))
	if !contains(dbs, tg.conn.Database) {
		t.Fatalf("databases %v lack %s", dbs, tg.conn.Database)
	}
	schemas := must[[]string](t)(f.qr.AccessibleSchemas(ctx, f.alice, "realsvc", ""))
	want := "public"
	if tg.serviceType == "Mysql" {
		want = tg.conn.Database
	}
	if !contains(schemas, want) {
		t.Fatalf("schemas %v lack %s", schemas, want)
	}
	_, err = f.qr.AccessibleRoles(ctx, f.alice, "realsvc")
	if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "roles") {
		t.Fatalf("roles of %s: %v", tg.serviceType, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
