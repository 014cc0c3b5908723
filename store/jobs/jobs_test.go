package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/sqlite"
)

// The jobs module's conformance suite: every behaviour on both drivers, each on a
// fresh catalog opened with the module.

func TestSQLite(t *testing.T) {
	run(t, func(t *testing.T) store.Driver {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "catalog.db"), jobs.Module())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestPostgres(t *testing.T) {
	run(t, func(t *testing.T) store.Driver {
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), jobs.Module())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func run(t *testing.T, open func(t *testing.T) store.Driver) {
	tests := []struct {
		name string
		run  func(t *testing.T, db store.Driver)
	}{
		{"AJobRecordsItsProgressAndResult", testResult},
		{"AFailedJobRecordsItsErrorWithoutInternalDetails", testError},
		{"OnlyTheStarterAndAdminsSeeAJob", testVisibility},
		{"TheQueueOfWaitingJobsIsBounded", testQueueBound},
		{"ARestartResumesOrFailsTheJobsItInterrupted", testRestart},
		{"AnotherNodeRecoversAJobOnlyAfterItsLease", testLease},
		{"FinishedJobsArePrunedAfterTheRetention", testPrune},
		{"AsyncDeleteRecordsItsOutcome", testAsyncDelete},
		{"AnInterruptedDeleteSettlesFromWhatCommitted", testSettleDelete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

var (
	admin = &meridian.Principal{ID: "00000000-0000-4000-8000-00000000000a", Name: "admin", Roles: []string{meridian.RoleAdmin}}
	alice = &meridian.Principal{ID: "00000000-0000-4000-8000-0000000000a1", Name: "alice", Roles: []string{meridian.RoleDataConsumer}}
	bob   = &meridian.Principal{ID: "00000000-0000-4000-8000-0000000000b0", Name: "bob", Roles: []string{meridian.RoleDataConsumer}}
)

// serve runs a service until the test ends (or stop is called) and returns it.
func serve(t *testing.T, db store.Driver, c jobs.Config) (s *jobs.Service, stop func()) {
	s = jobs.New(db, c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.Run(ctx)
		close(done)
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return s, stop
}

// wait polls a job until it reaches one of the statuses.
func wait(t *testing.T, s *jobs.Service, id string, statuses ...string) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := s.Get(context.Background(), admin, id)
		if err != nil {
			t.Fatalf("get job %s: %v", id, err)
		}
		for _, st := range statuses {
			if j.Status == st {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s, want one of %v", id, j.Status, statuses)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if meridian.ErrorCode(err) != code {
		t.Fatalf("error = %v (%s), want %s", err, meridian.ErrorCode(err), code)
	}
}

func testResult(t *testing.T, db store.Driver) {
	s, _ := serve(t, db, jobs.Config{})
	ctx := context.Background()
	id, err := s.Start(ctx, alice, "test.sum", map[string]int{"a": 1, "b": 2}, func(ctx context.Context, p store.JobProgress) (any, error) {
		if err := p.Progress(ctx, 50, map[string]int{"done": 1}); err != nil {
			return nil, err
		}
		return map[string]int{"sum": 3}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	j := wait(t, s, id, jobs.StatusCompleted, jobs.StatusFailed)
	if j.Status != jobs.StatusCompleted || string(j.Result) != `{"sum":3}` || j.Progress != 100 || j.Attempts != 1 {
		t.Fatalf("job = %+v", j)
	}
	if j.Type != "test.sum" || j.Principal != (jobs.Principal{ID: alice.ID, Name: "alice"}) || j.CreatedAt == 0 || j.UpdatedAt < j.CreatedAt {
		t.Fatalf("job = %+v", j)
	}
	if string(j.Params) != `{"a":1,"b":2}` || string(j.Checkpoint) != `{"done":1}` {
		t.Fatalf("params %s, checkpoint %s", j.Params, j.Checkpoint)
	}
}

func testError(t *testing.T, db store.Driver) {
	s, _ := serve(t, db, jobs.Config{})
	ctx := context.Background()
	refused, err := s.Start(ctx, alice, "test.fail", nil, func(ctx context.Context, p store.JobProgress) (any, error) {
		_ = p.Progress(ctx, 30, nil)
		return nil, meridian.Errorf(meridian.EInvalid, "glossary is not empty")
	})
	if err != nil {
		t.Fatal(err)
	}
	broken, err := s.Start(ctx, alice, "test.fail", nil, func(context.Context, store.JobProgress) (any, error) {
		return nil, errors.New("disk on fire at /var/lib/secret")
	})
	if err != nil {
		t.Fatal(err)
	}
	panicky, err := s.Start(ctx, alice, "test.fail", nil, func(context.Context, store.JobProgress) (any, error) {
		panic("boom")
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, code, msg string
		progress      int
	}{
		{refused, meridian.EInvalid, "glossary is not empty", 30},
		{broken, meridian.EInternal, "Internal error", 0},
		{panicky, meridian.EInternal, "Internal error", 0},
	} {
		j := wait(t, s, c.id, jobs.StatusCompleted, jobs.StatusFailed)
		if j.Status != jobs.StatusFailed || j.ErrorCode != c.code || j.Error != c.msg || j.Result != nil || j.Progress != c.progress {
			t.Errorf("job = %+v, want failed %s %q at %d%%", j, c.code, c.msg, c.progress)
		}
	}
}

func testVisibility(t *testing.T, db store.Driver) {
	s, _ := serve(t, db, jobs.Config{})
	ctx := context.Background()
	id, err := s.Start(ctx, alice, "test.noop", nil, func(context.Context, store.JobProgress) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	wait(t, s, id, jobs.StatusCompleted)
	renamed := &meridian.Principal{ID: alice.ID, Name: "alice2"}
	for _, p := range []*meridian.Principal{alice, admin, renamed} {
		if _, err := s.Get(ctx, p, id); err != nil {
			t.Errorf("%s cannot see the job: %v", p.Name, err)
		}
	}
	sameName := &meridian.Principal{ID: "00000000-0000-4000-8000-0000000000ff", Name: "alice"}
	for _, p := range []*meridian.Principal{bob, sameName, nil} {
		_, err := s.Get(ctx, p, id)
		wantCode(t, err, meridian.ENotFound)
	}
	_, err = s.Get(ctx, admin, "00000000-0000-4000-8000-000000000000")
	wantCode(t, err, meridian.ENotFound)
	for _, bad := range []string{"", "nope", strings.Repeat("x", 5000), "{" + id + "}"} {
		_, err = s.Get(ctx, admin, bad)
		wantCode(t, err, meridian.EInvalid)
	}
}

func testQueueBound(t *testing.T, db store.Driver) {
	s, _ := serve(t, db, jobs.Config{Workers: 1, Queue: 1})
	ctx := context.Background()
	release := make(chan struct{})
	block := func(ctx context.Context, _ store.JobProgress) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	}
	first, err := s.Start(ctx, alice, "test.block", nil, block)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, s, first, jobs.StatusRunning)
	second, err := s.Start(ctx, alice, "test.block", nil, block)
	if err != nil {
		t.Fatal(err)
	}
	if j := wait(t, s, second, jobs.StatusPending); j.Attempts != 0 {
		t.Fatalf("a waiting job = %+v", j)
	}
	_, err = s.Start(ctx, alice, "test.block", nil, block)
	wantCode(t, err, meridian.ETooManyRequests)
	close(release)
	wait(t, s, first, jobs.StatusCompleted)
	wait(t, s, second, jobs.StatusCompleted)
	third, err := s.Start(ctx, alice, "test.block", nil, block)
	if err != nil {
		t.Fatalf("a slot must free up when a job finishes: %v", err)
	}
	wait(t, s, third, jobs.StatusCompleted)
}

// startBlocked starts a job that reports a checkpoint and then blocks until its service
// stops, and waits until it runs.
func startBlocked(t *testing.T, s *jobs.Service, typ string) string {
	t.Helper()
	id, err := s.Start(context.Background(), alice, typ, map[string]string{"target": typ}, func(ctx context.Context, p store.JobProgress) (any, error) {
		if err := p.Progress(ctx, 40, map[string]int{"step": 2}); err != nil {
			return nil, err
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if j := wait(t, s, id, jobs.StatusRunning); j.Progress == 40 {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never reported progress", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testRestart(t *testing.T, db store.Driver) {
	before, stop := serve(t, db, jobs.Config{Node: "node-1", Workers: 2})
	plain := startBlocked(t, before, "test.plain")
	resumable := startBlocked(t, before, "test.resumable")
	waiting, err := before.Start(context.Background(), alice, "test.plain", nil, func(context.Context, store.JobProgress) (any, error) {
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, before, waiting, jobs.StatusPending)
	stop() // the process goes away; its jobs stay as they were

	after := jobs.New(db, jobs.Config{Node: "node-1"})
	resumed := make(chan jobs.Job, 1)
	after.Register("test.resumable", func(ctx context.Context, j jobs.Job, p store.JobProgress) (any, error) {
		resumed <- j
		return map[string]bool{"resumed": true}, nil
	})
	if err := after.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	j := <-resumed
	if string(j.Params) != `{"target":"test.resumable"}` || string(j.Checkpoint) != `{"step":2}` || j.Attempts != 2 {
		t.Fatalf("the resumer got %+v", j)
	}
	if j := wait(t, after, resumable, jobs.StatusCompleted, jobs.StatusFailed); j.Status != jobs.StatusCompleted ||
		string(j.Result) != `{"resumed":true}` || j.Attempts != 2 {
		t.Fatalf("resumed job = %+v", j)
	}
	for _, id := range []string{plain, waiting} {
		j := wait(t, after, id, jobs.StatusCompleted, jobs.StatusFailed)
		if j.Status != jobs.StatusFailed || j.Error != jobs.ErrInterrupted.Message || !strings.Contains(j.Error, "restart") {
			t.Fatalf("interrupted job = %+v", j)
		}
	}
	if j := wait(t, after, plain, jobs.StatusFailed); j.Progress != 40 {
		t.Fatalf("an interrupted job keeps its last progress: %+v", j)
	}
	// Recovery is done once: a second pass finds nothing.
	if err := after.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case j := <-resumed:
		t.Fatalf("resumed twice: %+v", j)
	default:
	}
}

func testLease(t *testing.T, db store.Driver) {
	gone, stop := serve(t, db, jobs.Config{Node: "node-1"})
	abandoned := startBlocked(t, gone, "test.plain")
	stop()
	alive, _ := serve(t, db, jobs.Config{Node: "node-2"})
	running := startBlocked(t, alive, "test.plain")

	// Another node takes nothing while both heartbeats are recent.
	other := jobs.New(db, jobs.Config{Node: "node-3", Lease: time.Minute})
	if err := other.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{abandoned, running} {
		if j := wait(t, other, id, jobs.StatusRunning, jobs.StatusFailed); j.Status != jobs.StatusRunning {
			t.Fatalf("a job with a fresh heartbeat was taken over: %+v", j)
		}
	}
	// node-1 never beats again; once its heartbeat is older than the lease, its job is
	// recovered, and node-2's, which keeps beating, is not.
	tx, err := db.Begin(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	stale := time.Now().Add(-2 * time.Minute).UnixMilli()
	if _, err := tx.SQL().Exec(context.Background(), "UPDATE jobs SET heartbeat_at = $1 WHERE id = $2", stale, abandoned); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := other.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if j := wait(t, other, abandoned, jobs.StatusFailed); j.Error != jobs.ErrInterrupted.Message || j.Attempts != 2 {
		t.Fatalf("abandoned job = %+v", j)
	}
	if j := wait(t, other, running, jobs.StatusRunning, jobs.StatusFailed); j.Status != jobs.StatusRunning {
		t.Fatalf("a live node's job was taken over: %+v", j)
	}
}

func testPrune(t *testing.T, db store.Driver) {
	s, _ := serve(t, db, jobs.Config{Retention: time.Hour})
	ctx := context.Background()
	id, err := s.Start(ctx, alice, "test.noop", nil, func(context.Context, store.JobProgress) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	wait(t, s, id, jobs.StatusCompleted)
	pruner := jobs.New(db, jobs.Config{Retention: time.Hour, Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { pruner.Run(pctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := s.Get(ctx, admin, id)
		if meridian.ErrorCode(err) == meridian.ENotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a finished job older than the retention is still there: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

// engine returns an entity engine whose asynchronous deletes run on j.
func engine(db store.Driver, j store.Jobs) *store.Entities {
	return store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Jobs: j})
}

func create(t *testing.T, e *store.Entities, kind, body string) meridian.Entity {
	t.Helper()
	var doc meridian.Entity
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	res, err := e.Create(context.Background(), admin, kind, doc)
	if err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	return res.Entity
}

func testAsyncDelete(t *testing.T, db store.Driver) {
	s, _ := serve(t, db, jobs.Config{Workers: 1})
	e := engine(db, s)
	ctx := context.Background()
	g := create(t, e, "glossary", `{"name":"g","description":"d"}`)
	create(t, e, "glossaryTerm", `{"name":"t","description":"d","glossary":"g"}`)

	job, err := e.DeleteAsync(ctx, admin, "glossary", store.ByID(g.ID()), store.DeleteOptions{Hard: true, Recursive: true})
	if err != nil || job.JobID == "" || job.EntityName != "g" || !job.HardDelete || !job.Recursive {
		t.Fatalf("DeleteAsync = %+v, %v", job, err)
	}
	j := wait(t, s, job.JobID, jobs.StatusCompleted, jobs.StatusFailed)
	want := `{"entityType":"glossary","entityId":"` + g.ID() + `","entityName":"g","hardDelete":true,"recursive":true}`
	if j.Status != jobs.StatusCompleted || j.Type != store.JobTypeDelete || string(j.Result) != want {
		t.Fatalf("delete job = %+v, result %s", j, j.Result)
	}
	if _, err := e.Get(ctx, admin, "glossary", store.ByID(g.ID()), store.GetOptions{Include: store.IncludeAll}); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("the glossary is still there: %v", err)
	}

	// A delete that fails once it runs records its error: the glossary gains a term
	// while the job waits behind another one.
	g2 := create(t, e, "glossary", `{"name":"g2","description":"d"}`)
	release := make(chan struct{})
	blocker, err := s.Start(ctx, admin, "test.block", nil, func(context.Context, store.JobProgress) (any, error) {
		<-release
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, s, blocker, jobs.StatusRunning)
	job, err = e.DeleteAsync(ctx, admin, "glossary", store.ByID(g2.ID()), store.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, e, "glossaryTerm", `{"name":"late","description":"d","glossary":"g2"}`)
	close(release)
	j = wait(t, s, job.JobID, jobs.StatusCompleted, jobs.StatusFailed)
	if j.Status != jobs.StatusFailed || j.ErrorCode != meridian.EInvalid || j.Error != "glossary is not empty" {
		t.Fatalf("failed delete job = %+v", j)
	}

	// What the engine refuses up front starts no job.
	_, err = e.DeleteAsync(ctx, admin, "glossary", store.ByID(g2.ID()), store.DeleteOptions{})
	wantCode(t, err, meridian.EInvalid)
	_, err = store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry()}).
		DeleteAsync(ctx, admin, "glossary", store.ByID(g2.ID()), store.DeleteOptions{Recursive: true})
	wantCode(t, err, meridian.EInternal)
}

func testSettleDelete(t *testing.T, db store.Driver) {
	e := engine(db, nil)
	ctx := context.Background()
	kept := create(t, e, "glossary", `{"name":"kept","description":"d"}`)
	soft := create(t, e, "glossary", `{"name":"soft","description":"d"}`)
	if _, err := e.Delete(ctx, admin, "glossary", store.ByID(soft.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	params := func(id string, hard bool) json.RawMessage {
		b, _ := json.Marshal(store.DeleteOutcome{EntityType: "glossary", EntityID: id, EntityName: "x", HardDelete: hard})
		return b
	}
	for _, c := range []struct {
		name     string
		params   json.RawMessage
		complete bool
	}{
		{"a hard delete whose entity is gone committed", params("00000000-0000-4000-8000-000000000001", true), true},
		{"a soft delete whose entity is marked deleted committed", params(soft.ID(), false), true},
		{"a hard delete whose entity is only soft-deleted did not", params(soft.ID(), true), false},
		{"a delete whose entity is intact did not", params(kept.ID(), false), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.SettleDelete(ctx, c.params)
			if c.complete && err != nil {
				t.Fatalf("settle = %v, want completed", err)
			}
			if !c.complete && (err == nil || !strings.Contains(err.Error(), "nothing was deleted")) {
				t.Fatalf("settle = %v, want interrupted with nothing deleted", err)
			}
		})
	}
	_, err := e.SettleDelete(ctx, json.RawMessage(`{`))
	wantCode(t, err, meridian.EInvalid)
}
