package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/queryrunner/dbtest"
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/all"
	"github.com/meridian-catalog/meridian/queryrunner/workflow"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/sqlite"
)

// The workflow module's conformance suite: every behaviour on both catalog drivers
// (SQLite and PostgreSQL), against real target databases (PostgreSQL and MariaDB)
// that the tests create and seed.

var (
	admin = &meridian.Principal{ID: "00000000-0000-4000-8000-00000000000a", Name: "admin", Roles: []string{meridian.RoleAdmin}}
	alice = &meridian.Principal{ID: "00000000-0000-4000-8000-0000000000a1", Name: "alice", Roles: []string{meridian.RoleDataConsumer}}
	bob   = &meridian.Principal{ID: "00000000-0000-4000-8000-0000000000b0", Name: "bob", Roles: []string{meridian.RoleDataConsumer}}
)

// resolver is the test's stand-in for the config service: one resolution per service
// name, for every caller.
type resolver map[string]queryrunner.Resolution

func (r resolver) Resolve(_ context.Context, p *meridian.Principal, service, teamID string, preferTeam bool) (queryrunner.Resolution, error) {
	res, ok := r[service]
	if !ok {
		return queryrunner.Resolution{}, meridian.Errorf(meridian.ENotFound, "No Query Runner config for service %s", service)
	}
	res.UserID = p.ID
	return res, nil
}

func TestSQLite(t *testing.T) {
	run(t, func(t *testing.T) store.Driver {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "catalog.db"), jobs.Module(), workflow.Module())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestPostgres(t *testing.T) {
	run(t, func(t *testing.T) store.Driver {
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), jobs.Module(), workflow.Module())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

// env is a running service over a catalog with a PostgreSQL and a MariaDB target.
type env struct {
	svc *workflow.Service
	pg  dbtest.Target
	my  dbtest.Target
	res resolver
}

func newEnv(t *testing.T, db store.Driver, c workflow.Config) *env {
	e := &env{pg: dbtest.Postgres(t), my: dbtest.MySQL(t)}
	e.res = resolver{
		"pg":    {Conn: e.pg.Conn, Layer: queryrunner.LayerUser, ConfigID: "cfg-pg", ServiceName: "pg", ConnectionType: "Postgres", AuthType: "basic", MaxResultSize: 1000},
		"maria": {Conn: e.my.Conn, Layer: queryrunner.LayerAdmin, ConfigID: "cfg-maria", ServiceName: "maria", ConnectionType: "Mysql", AuthType: "basic", MaxResultSize: 1000},
	}
	js := jobs.New(db, jobs.Config{Workers: 4})
	c.DB, c.Jobs, c.Resolver = db, js, e.res
	e.svc = workflow.New(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { js.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

func run(t *testing.T, open func(t *testing.T) store.Driver) {
	tests := []struct {
		name string
		run  func(t *testing.T, db store.Driver)
	}{
		{"ATriggeredQueryIsPagedForItsOwner", testTriggerAndPage},
		{"OnlyTheOwnerAndAdminsReadResults", testOwnerOnly},
		{"StopEndsTheStatementOnTheServer", testStop},
		{"MaxResultSizeCapsTheRun", testMaxResultSize},
		{"WritesAreRefusedWhateverTheirDisguise", testWritesRefused},
		{"AWrongPasswordFailsTheRunWithoutTheSecret", testWrongPassword},
		{"TranspileIsAcceptedOnlyWithoutTranslation", testTranspile},
		{"BadInputIsRefused", testBadInput},
		{"AMillionRowsArePagedFromStorage", testMillionRows},
		{"FinishedRunsArePrunedAfterTheRetention", testPrune},
		{"AShutdownFailsTheRunAndEndsItsStatement", testShutdown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

// wait polls a run until it is no longer RUNNING.
func wait(t *testing.T, svc *workflow.Service, p *meridian.Principal, id string) workflow.Page {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pg, err := svc.Results(context.Background(), p, id, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if pg.Status != workflow.StatusRunning {
			return pg
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still running", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func trigger(t *testing.T, svc *workflow.Service, p *meridian.Principal, service, q string) workflow.Triggered {
	t.Helper()
	tr, err := svc.Trigger(context.Background(), p, workflow.TriggerRequest{Query: q, ServiceName: service, WorkflowName: "wf-" + t.Name()})
	if err != nil {
		t.Fatalf("trigger %q: %v", q, err)
	}
	return tr
}

func testTriggerAndPage(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{ChunkRows: 7})
	for _, service := range []string{"pg", "maria"} {
		tr := trigger(t, e.svc, alice, service, "SELECT id, name, price FROM items ORDER BY id")
		if tr.WorkflowID == "" || tr.CredentialFrom != e.res[service].Layer || tr.ConfigID != e.res[service].ConfigID ||
			tr.UserID != alice.ID || tr.MaxResultSize != 1000 || tr.ConnectionType != e.res[service].ConnectionType {
			t.Fatalf("%s: triggered %+v", service, tr)
		}
		b, _ := json.Marshal(tr)
		if strings.Contains(string(b), "password") {
			t.Fatalf("answer %s", b)
		}
		wait(t, e.svc, alice, tr.WorkflowID)
		pg, err := e.svc.Results(context.Background(), alice, tr.WorkflowID, 3, 10)
		if err != nil {
			t.Fatal(err)
		}
		if pg.Status != workflow.StatusSuccess || pg.Total != 100 || len(pg.Rows) != 10 || len(pg.Columns) != 3 || pg.Truncated {
			t.Fatalf("%s: page %+v", service, pg)
		}
		if fmt.Sprint(pg.Rows[0][0]) != "31" || fmt.Sprint(pg.Rows[9][1]) != "item 40" {
			t.Fatalf("%s: rows %v", service, pg.Rows)
		}
		def, err := e.svc.Results(context.Background(), alice, tr.WorkflowID, 0, 0)
		if err != nil || def.Size != workflow.DefaultPageSize || len(def.Rows) != 50 {
			t.Fatalf("%s: default page size %d rows %d err %v", service, def.Size, len(def.Rows), err)
		}
		past, err := e.svc.Results(context.Background(), alice, tr.WorkflowID, 10, 50)
		if err != nil || len(past.Rows) != 0 || past.Total != 100 {
			t.Fatalf("%s: page past the end %+v %v", service, past, err)
		}
	}
}

func testOwnerOnly(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{})
	tr := trigger(t, e.svc, alice, "pg", "SELECT 1 AS one")
	wait(t, e.svc, alice, tr.WorkflowID)
	if _, err := e.svc.Results(context.Background(), bob, tr.WorkflowID, 0, 10); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("bob reads alice's results: %v", err)
	}
	if pg, err := e.svc.Results(context.Background(), admin, tr.WorkflowID, 0, 10); err != nil || len(pg.Rows) != 1 {
		t.Fatalf("admin: %+v %v", pg, err)
	}
	if _, err := e.svc.Stop(context.Background(), bob, tr.WorkflowName); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("bob stops alice's workflow: %v", err)
	}
	if _, err := e.svc.Results(context.Background(), nil, tr.WorkflowID, 0, 10); meridian.ErrorCode(err) != meridian.EUnauthorized {
		t.Fatalf("anonymous: %v", err)
	}
}

func testStop(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{})
	cases := []struct {
		service, sleep string
		running        func() int
	}{
		{"pg", "SELECT pg_sleep(60)", func() int {
			var n int
			if err := e.pg.PG.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active' AND datname = current_database()").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}},
		{"maria", "SELECT SLEEP(60)", func() int {
			var n int
			if err := e.my.DB.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(60)' AND DB = DATABASE()").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}},
	}
	for _, tc := range cases {
		tr := trigger(t, e.svc, alice, tc.service, tc.sleep)
		deadline := time.Now().Add(20 * time.Second)
		for tc.running() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the statement never ran on the server", tc.service)
			}
			time.Sleep(50 * time.Millisecond)
		}
		st, err := e.svc.Stop(context.Background(), alice, tr.WorkflowName)
		if err != nil || st.Status != workflow.StatusFailed || len(st.WorkflowIDs) != 1 {
			t.Fatalf("%s: stop %+v %v", tc.service, st, err)
		}
		pg := wait(t, e.svc, alice, tr.WorkflowID)
		if pg.Status != workflow.StatusFailed || pg.Error == nil || !strings.Contains(pg.Error.Message, "Stopped") {
			t.Fatalf("%s: after stop %+v", tc.service, pg)
		}
		deadline = time.Now().Add(10 * time.Second)
		for tc.running() > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the statement still runs on the server after stop", tc.service)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := e.svc.Stop(context.Background(), alice, tr.WorkflowName); meridian.ErrorCode(err) != meridian.ENotFound {
			t.Fatalf("%s: second stop %v", tc.service, err)
		}
	}
}

func testMaxResultSize(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{ChunkRows: 10})
	r := e.res["pg"]
	r.MaxResultSize = 25
	e.res["pg"] = r
	r = e.res["maria"]
	r.MaxResultSize = 25
	e.res["maria"] = r
	for _, service := range []string{"pg", "maria"} {
		tr := trigger(t, e.svc, alice, service, "SELECT id FROM items ORDER BY id")
		if tr.MaxResultSize != 25 {
			t.Fatalf("max %d", tr.MaxResultSize)
		}
		pg := wait(t, e.svc, alice, tr.WorkflowID)
		all, _ := e.svc.Results(context.Background(), alice, tr.WorkflowID, 0, 100)
		if pg.Status != workflow.StatusSuccess || pg.Total != 25 || !pg.Truncated || len(all.Rows) != 25 {
			t.Fatalf("%s: %+v rows %d", service, pg, len(all.Rows))
		}
	}
}

func testWritesRefused(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{})
	pgBefore := dbtest.ChecksumPG(t, e.pg.PG)
	myBefore := dbtest.ChecksumMySQL(t, e.my.DB)
	pgWrites := []string{
		"INSERT INTO items VALUES (1000, 'x', 1)", "UPDATE items SET price = 0", "DELETE FROM items",
		"MERGE INTO items USING items s ON true WHEN MATCHED THEN DELETE", "DROP TABLE items", "TRUNCATE items",
		"CREATE TABLE xx AS SELECT * FROM items", "ALTER TABLE items ADD COLUMN z int",
		"SELECT 1; DELETE FROM items", "SELECT 1 /* ; */; DELETE FROM items", "SELECT 1 -- x\n; DELETE FROM items",
		"WITH d AS (DELETE FROM items RETURNING *) SELECT count(*) FROM d",
		"SELECT * INTO xcopy FROM items", "COPY items TO STDOUT", "COPY (SELECT 1) TO '/tmp/qr_copy'",
		"LOCK TABLE items", "SET statement_timeout = 0", "CALL p()", "DO $$ BEGIN DELETE FROM items; END $$",
		"SELECT nextval('items_seq')", "SELECT setval('items_seq', 99)", "SELECT pg_advisory_lock(1)",
		"SELECT * FROM items FOR UPDATE", "EXPLAIN ANALYZE DELETE FROM items", "BEGIN",
	}
	myWrites := []string{
		"INSERT INTO items VALUES (1000, 'x', 1)", "REPLACE INTO items VALUES (1, 'x', 1)", "UPDATE items SET price = 0",
		"DELETE FROM items", "DROP TABLE items", "TRUNCATE items", "CREATE TABLE xx (a int)", "CREATE TABLE xx AS SELECT * FROM items",
		"SELECT 1; DELETE FROM items", "SELECT 1 /*!50000 ; DELETE FROM items */", "SELECT * FROM items /*!INTO OUTFILE '/tmp/qr_x' */",
		"SELECT * FROM items INTO OUTFILE '/tmp/qr_out'", "SELECT id INTO @v FROM items LIMIT 1", "LOCK TABLES items WRITE",
		"SET SESSION max_statement_time = 0", "CALL p()", "SELECT GET_LOCK('x', 1)", "SELECT * FROM items FOR UPDATE",
		"EXPLAIN ANALYZE DELETE FROM items", "START TRANSACTION", "LOAD DATA INFILE '/tmp/x' INTO TABLE items",
	}
	for service, qs := range map[string][]string{"pg": pgWrites, "maria": myWrites} {
		for _, q := range qs {
			_, err := e.svc.Trigger(context.Background(), alice, workflow.TriggerRequest{Query: q, ServiceName: service})
			if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "Query refused") {
				t.Errorf("%s %q: %v", service, q, err)
			}
		}
	}
	if after := dbtest.ChecksumPG(t, e.pg.PG); after != pgBefore {
		t.Fatalf("PostgreSQL target changed: %s -> %s", pgBefore, after)
	}
	if after := dbtest.ChecksumMySQL(t, e.my.DB); after != myBefore {
		t.Fatalf("MariaDB target changed: %s -> %s", myBefore, after)
	}
}

func testWrongPassword(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{})
	user := dbtest.MySQLUser(t, e.my.DB, e.my.Conn.Database, "Right-Pa55word")
	r := e.res["maria"]
	r.Conn.Username = user
	r.Conn.Password = "Wrong-Pa55word-Secret"
	e.res["maria"] = r
	tr := trigger(t, e.svc, alice, "maria", "SELECT 1")
	pg := wait(t, e.svc, alice, tr.WorkflowID)
	if pg.Status != workflow.StatusFailed || pg.Error == nil || pg.Error.Code != meridian.EUnauthorized ||
		!strings.Contains(pg.Error.Message, "refused the credentials") {
		t.Fatalf("%+v", pg)
	}
	b, _ := json.Marshal(pg)
	if strings.Contains(string(b), "Pa55word") {
		t.Fatalf("the answer holds the password: %s", b)
	}
}

func testTranspile(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{})
	ok := []string{`true`, `false`, `null`, `"postgres"`, `{"from":"postgresql","to":"postgres"}`}
	for _, tp := range ok {
		if _, err := e.svc.Trigger(context.Background(), alice, workflow.TriggerRequest{Query: "SELECT 1", ServiceName: "pg", Transpile: json.RawMessage(tp)}); err != nil {
			t.Errorf("transpile %s: %v", tp, err)
		}
	}
	bad := []string{`"snowflake"`, `{"from":"tsql"}`, `{"from":"mysql","to":"postgres"}`, `{"to":"mysql"}`, `12`}
	for _, tp := range bad {
		_, err := e.svc.Trigger(context.Background(), alice, workflow.TriggerRequest{Query: "SELECT 1", ServiceName: "pg", Transpile: json.RawMessage(tp)})
		if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "transpile") {
			t.Errorf("transpile %s: %v", tp, err)
		}
	}
	_, err := e.svc.Trigger(context.Background(), alice, workflow.TriggerRequest{Query: "SELECT TOP 5 * FROM items", ServiceName: "pg", Transpile: json.RawMessage(`true`)})
	if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("a T-SQL statement with transpile true: %v", err)
	}
}

func testBadInput(t *testing.T, db store.Driver) {
	e := newEnv(t, db, workflow.Config{})
	cases := []struct {
		req  workflow.TriggerRequest
		p    *meridian.Principal
		code string
	}{
		{workflow.TriggerRequest{Query: "", ServiceName: "pg"}, alice, meridian.EInvalid},
		{workflow.TriggerRequest{Query: "SELECT 1", ServiceName: ""}, alice, meridian.EInvalid},
		{workflow.TriggerRequest{Query: "SELECT 1", ServiceName: "nope"}, alice, meridian.ENotFound},
		{workflow.TriggerRequest{Query: "SELECT 1", ServiceName: "pg", WorkflowName: strings.Repeat("w", 300)}, alice, meridian.EInvalid},
		{workflow.TriggerRequest{Query: "SELECT 1", ServiceName: "pg", TeamID: "not-a-uuid"}, alice, meridian.EInvalid},
		{workflow.TriggerRequest{Query: strings.Repeat("x", workflow.MaxQueryBytes+1), ServiceName: "pg"}, alice, meridian.EInvalid},
		{workflow.TriggerRequest{Query: "SELECT 1", ServiceName: "pg"}, nil, meridian.EUnauthorized},
	}
	for i, tc := range cases {
		if _, err := e.svc.Trigger(context.Background(), tc.p, tc.req); meridian.ErrorCode(err) != tc.code {
			t.Errorf("case %d: %v, want %s", i, err, tc.code)
		}
	}
	for _, size := range []int{-1, workflow.MaxPageSize + 1} {
		if _, err := e.svc.Results(context.Background(), alice, "00000000-0000-4000-8000-000000000001", 0, size); meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("size %d: %v", size, err)
		}
	}
	if _, err := e.svc.Results(context.Background(), alice, "00000000-0000-4000-8000-000000000001", -1, 10); meridian.ErrorCode(err) != meridian.EInvalid {
		t.Errorf("page -1: %v", err)
	}
	if _, err := e.svc.Results(context.Background(), alice, "x'; DROP TABLE qr_runs; --", 0, 10); meridian.ErrorCode(err) != meridian.EInvalid {
		t.Errorf("bad id: %v", err)
	}
	if err := e.svc.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func testMillionRows(t *testing.T, db store.Driver) {
	if testing.Short() {
		t.Skip("-short: the million-row run is skipped")
	}
	e := newEnv(t, db, workflow.Config{})
	r := e.res["pg"]
	r.MaxResultSize = 1_000_000
	e.res["pg"] = r
	start := time.Now()
	tr := trigger(t, e.svc, alice, "pg", "SELECT g AS n, 'row ' || g AS label FROM generate_series(1, 1000000) g")
	pg := wait(t, e.svc, alice, tr.WorkflowID)
	if pg.Status != workflow.StatusSuccess || pg.Total != 1_000_000 || pg.Truncated {
		t.Fatalf("%+v", pg)
	}
	t.Logf("1,000,000 rows stored in %v", time.Since(start))
	for _, page := range []int64{0, 57, 99} {
		p, err := e.svc.Results(context.Background(), alice, tr.WorkflowID, page, workflow.MaxPageSize)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Rows) != workflow.MaxPageSize {
			t.Fatalf("page %d: %d rows", page, len(p.Rows))
		}
		first := page*workflow.MaxPageSize + 1
		if fmt.Sprint(p.Rows[0][0]) != fmt.Sprint(first) || fmt.Sprint(p.Rows[9999][1]) != fmt.Sprintf("row %d", first+9999) {
			t.Fatalf("page %d: first %v last %v", page, p.Rows[0], p.Rows[9999])
		}
	}
}

func testPrune(t *testing.T, db store.Driver) {
	now := time.Now()
	clock := func() time.Time { return now }
	e := newEnv(t, db, workflow.Config{Retention: time.Hour, Now: clock})
	tr := trigger(t, e.svc, alice, "pg", "SELECT id FROM items")
	wait(t, e.svc, alice, tr.WorkflowID)
	if n, err := e.svc.Prune(context.Background()); err != nil || n != 0 {
		t.Fatalf("pruned %d %v before the retention", n, err)
	}
	now = now.Add(2 * time.Hour)
	if n, err := e.svc.Prune(context.Background()); err != nil || n != 1 {
		t.Fatalf("pruned %d %v after the retention", n, err)
	}
	if _, err := e.svc.Results(context.Background(), alice, tr.WorkflowID, 0, 10); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("pruned run still read: %v", err)
	}
}

func testShutdown(t *testing.T, db store.Driver) {
	e := &env{pg: dbtest.Postgres(t)}
	e.res = resolver{"pg": {Conn: e.pg.Conn, Layer: queryrunner.LayerUser, ConfigID: "cfg-pg", ServiceName: "pg", ConnectionType: "Postgres", AuthType: "basic", MaxResultSize: 10}}
	js := jobs.New(db, jobs.Config{Node: "node-a"})
	e.svc = workflow.New(workflow.Config{DB: db, Jobs: js, Resolver: e.res})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { js.Run(ctx); close(done) }()
	tr := trigger(t, e.svc, alice, "pg", "SELECT pg_sleep(60)")
	running := func() int {
		var n int
		if err := e.pg.PG.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND datname = current_database()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(20 * time.Second)
	for running() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the statement never ran")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	pg := wait(t, e.svc, alice, tr.WorkflowID)
	if pg.Status != workflow.StatusFailed || pg.Error == nil || !strings.Contains(pg.Error.Message, "interrupted") {
		t.Fatalf("%+v", pg)
	}
	deadline = time.Now().Add(10 * time.Second)
	for running() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the statement still runs after the shutdown")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The restarted node recovers the job and fails it: the credentials were never stored.
	js2 := jobs.New(db, jobs.Config{Node: "node-a"})
	workflow.New(workflow.Config{DB: db, Jobs: js2, Resolver: e.res})
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan struct{})
	go func() { js2.Run(ctx2); close(done2) }()
	defer func() { cancel2(); <-done2 }()
	var jobID string
	deadline = time.Now().Add(20 * time.Second)
	for {
		j, err := js2.Get(context.Background(), alice, jobOf(t, db, tr.WorkflowID))
		if err == nil && j.Status == jobs.StatusFailed {
			jobID = j.ID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job not failed after the restart: %+v %v", j, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if jobID == "" {
		t.Fatal("no job")
	}
}

// jobOf reads the job id of a run.
func jobOf(t *testing.T, db store.Driver, runID string) string {
	t.Helper()
	tx, err := db.Begin(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var id string
	if err := tx.SQL().QueryRow(context.Background(), "SELECT job_id FROM qr_runs WHERE id = $1", runID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
