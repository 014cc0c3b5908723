// Package jobs keeps asynchronous work as durable jobs: its own table (a store module
// with migrations for both drivers, reached through Tx.SQL), a bounded pool that runs
// them, heartbeats, and recovery of the jobs a stopped server left behind. A job records
// who started it, its status (pending, running, completed, failed), its progress, its
// result or error, and the parameters and checkpoint a resumer needs.
//
// Recovery: every node has an id that survives its restarts (Config.Node). When Run
// starts, the jobs this node left pending or running are recovered at once; the jobs of
// another node are recovered once its heartbeat is older than the lease. A recovered
// job is resumed when its type has a resumer (Register), and otherwise failed with
// "interrupted by a restart".
package jobs

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Statuses of a job.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

//go:embed sqlite/*.sql postgres/*.sql
var migrations embed.FS

// Module is the jobs table; open the catalog with it (sqlite.Open, postgres.Open).
func Module() store.Module { return store.Module{Name: "jobs", Migrations: migrations} }

// Job is one durable job.
type Job struct {
	ID        string
	Type      string
	Principal Principal // who started it
	Status    string
	Progress  int             // 0 to 100
	Result    json.RawMessage // a completed job's result, nil when none
	ErrorCode string          // a failed job's meridian error code
	Error     string          // a failed job's message, safe to show
	Attempts  int             // how many times it was started or recovered
	CreatedAt int64           // epoch ms
	UpdatedAt int64           // epoch ms
	// Params and Checkpoint are what a resumer needs; they are not shown to callers.
	Params     json.RawMessage
	Checkpoint json.RawMessage
}

// Principal is who started a job.
type Principal struct {
	ID   string
	Name string
}

// Resumer continues a job of its type that a stopped server left pending or running,
// from the job's parameters and last checkpoint. Its result and error are recorded as a
// run's are.
type Resumer func(ctx context.Context, j Job, progress store.JobProgress) (any, error)

// Config tunes a Service. Zero values take the defaults.
type Config struct {
	// Node identifies this server across its restarts; cmd keeps it in the data
	// directory. Empty means a random id, so that only the lease recovers its jobs.
	Node string
	// Logger receives failures that have no caller to answer; nil discards them.
	Logger *slog.Logger
	// Workers is how many jobs run at once (default 2).
	Workers int
	// Queue is how many started jobs may wait for a worker (default 100, negative for
	// none); beyond it Start is ETooManyRequests.
	Queue int
	// Lease is how long another node's pending or running job may go without a
	// heartbeat before it is recovered (default 30 s, at least 1 s). Heartbeats come
	// every sixth of it.
	Lease time.Duration
	// Retention is how long a finished job is kept (default 30 days).
	Retention time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Service runs and keeps durable jobs. It is safe for concurrent use.
type Service struct {
	db       store.Driver
	c        Config
	log      *slog.Logger
	resumers map[string]Resumer

	slots   chan struct{} // a job started and not finished holds one: Workers + Queue
	workers chan struct{} // a running job holds one: Workers

	ctx    context.Context // jobs run under it; Run cancels it when it stops
	cancel context.CancelFunc
	wg     sync.WaitGroup // running and waiting jobs

	mu     sync.Mutex      // guards active, and orders wg.Add before Run's wg.Wait
	active map[string]bool // jobs this process runs or queues
}

// New returns a service over a catalog opened with Module. Register resumers, then
// call Run.
func New(db store.Driver, c Config) *Service {
	if c.Node == "" {
		c.Node = uuid.NewString()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.Queue < 0 {
		c.Queue = 0
	} else if c.Queue == 0 {
		c.Queue = 100
	}
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	c.Lease = max(c.Lease, time.Second)
	if c.Retention <= 0 {
		c.Retention = 30 * 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{db: db, c: c, log: c.Logger, resumers: map[string]Resumer{},
		slots: make(chan struct{}, c.Workers+c.Queue), workers: make(chan struct{}, c.Workers),
		ctx: ctx, cancel: cancel, active: map[string]bool{}}
}

// Register makes jobs of type typ resumable after a restart. Call it before Run.
func (s *Service) Register(typ string, r Resumer) { s.resumers[typ] = r }

var _ store.Jobs = (*Service)(nil)

// Start records a pending job and runs it in the background as soon as a worker is
// free. Errors: ETooManyRequests (the queue is full), EInternal (stopped, or params
// that do not encode as JSON).
func (s *Service) Start(ctx context.Context, p *meridian.Principal, typ string, params any, run store.JobFunc) (string, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	select {
	case s.slots <- struct{}{}:
	default:
		return "", meridian.Errorf(meridian.ETooManyRequests, "Too many jobs are waiting; try again later")
	}
	id := uuid.NewString()
	if !s.begin(id) {
		<-s.slots
		return "", meridian.Errorf(meridian.EInternal, "the job service has stopped")
	}
	var pid, pname string
	if p != nil {
		pid, pname = p.ID, p.Name
	}
	_, err = s.exec(ctx, `INSERT INTO jobs (id, type, principal_id, principal_name, status, params, owner, heartbeat_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $8)`, id, typ, pid, pname, StatusPending, string(b), s.c.Node, s.now())
	if err != nil {
		s.end(id)
		<-s.slots
		return "", err
	}
	go func() {
		defer func() { <-s.slots }()
		s.execute(id, true, run)
	}()
	return id, nil
}

// begin counts a job this process is about to run or queue, unless Run has stopped.
func (s *Service) begin(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return false
	}
	s.wg.Add(1)
	s.active[id] = true
	return true
}

// end undoes begin once the job has stopped.
func (s *Service) end(id string) {
	s.mu.Lock()
	delete(s.active, id)
	s.mu.Unlock()
	s.wg.Done()
}

// stop cancels the running jobs and waits until they have stopped.
func (s *Service) stop() {
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}

// execute waits for a worker, marks a started job running (a recovered one already
// is), runs it and records its outcome. When the service stops meanwhile, the job is
// left for recovery.
func (s *Service) execute(id string, started bool, run store.JobFunc) {
	defer s.end(id)
	select {
	case s.workers <- struct{}{}:
	case <-s.ctx.Done():
		return
	}
	defer func() { <-s.workers }()
	if started {
		n, err := s.exec(s.ctx, `UPDATE jobs SET status = $1, attempts = attempts + 1, updated_at = $2
WHERE id = $3 AND owner = $4 AND status = $5`, StatusRunning, s.now(), id, s.c.Node, StatusPending)
		if err != nil || n == 0 {
			if s.ctx.Err() == nil {
				s.log.Warn("job not started", "job", id, "err", err)
			}
			return
		}
	}
	s.finish(id, s.call(id, run))
}

// outcome is what a run returned.
type outcome struct {
	result any
	err    error
}

// call runs a job's function, turning a panic into an internal error.
func (s *Service) call(id string, run store.JobFunc) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("job panicked", "job", id, "panic", r)
			o = outcome{err: meridian.Errorf(meridian.EInternal, "Internal error")}
		}
	}()
	res, err := run(s.ctx, progress{s, id})
	return outcome{res, err}
}

// finish records a run's outcome, unless the service stopped (the job is then left
// running, for recovery) or another node took the job over.
func (s *Service) finish(id string, o outcome) {
	if s.ctx.Err() != nil {
		return
	}
	var result any
	if o.err == nil && o.result != nil {
		if b, err := json.Marshal(o.result); err != nil {
			o.err = err
		} else {
			result = string(b)
		}
	}
	var (
		n   int64
		err error
	)
	if o.err == nil {
		n, err = s.exec(s.ctx, `UPDATE jobs SET status = $1, progress = 100, result = $2, updated_at = $3
WHERE id = $4 AND owner = $5 AND status = $6`, StatusCompleted, result, s.now(), id, s.c.Node, StatusRunning)
	} else {
		n, err = s.fail(s.ctx, id, o.err)
	}
	switch {
	case err != nil:
		s.log.Error("job outcome not recorded", "job", id, "err", err)
	case n == 0:
		s.log.Warn("job outcome not recorded: another node took the job over", "job", id)
	}
}

// fail records a running job's error: its code and its caller-safe message. An
// internal error's details are logged.
func (s *Service) fail(ctx context.Context, id string, cause error) (int64, error) {
	code := meridian.ErrorCode(cause)
	if code == meridian.EInternal {
		s.log.Error("job failed", "job", id, "err", cause)
	}
	return s.exec(ctx, `UPDATE jobs SET status = $1, error_code = $2, error_message = $3, updated_at = $4
WHERE id = $5 AND owner = $6 AND status = $7`, StatusFailed, code, meridian.ErrorMessage(cause), s.now(), id, s.c.Node, StatusRunning)
}

// progress is the JobProgress of one job.
type progress struct {
	s  *Service
	id string
}

// Progress records the percentage (clamped to 0..100) and, when not nil, the
// checkpoint.
func (p progress) Progress(ctx context.Context, percent int, checkpoint any) error {
	percent = max(0, min(100, percent))
	var cp any
	if checkpoint != nil {
		b, err := json.Marshal(checkpoint)
		if err != nil {
			return err
		}
		cp = string(b)
	}
	_, err := p.s.exec(ctx, `UPDATE jobs SET progress = $1, checkpoint = COALESCE($2, checkpoint), updated_at = $3
WHERE id = $4 AND owner = $5 AND status = $6`, percent, cp, p.s.now(), p.id, p.s.c.Node, StatusRunning)
	return err
}

// Get returns a job to the principal that started it and to admins. Anyone else is
// told it does not exist, so that job ids leak nothing. Errors: EInvalid (not a job
// id), ENotFound.
func (s *Service) Get(ctx context.Context, p *meridian.Principal, id string) (Job, error) {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return Job{}, meridian.Errorf(meridian.EInvalid, "Invalid job id %q", truncate(id, 64))
	}
	notFound := meridian.Errorf(meridian.ENotFound, "Job %s not found", id)
	j, err := s.read(ctx, id)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return Job{}, notFound
	}
	if err != nil {
		return Job{}, err
	}
	if !p.IsAdmin() && !startedBy(j, p) {
		return Job{}, notFound
	}
	return j, nil
}

// startedBy matches by id when the job recorded one, otherwise by name.
func startedBy(j Job, p *meridian.Principal) bool {
	if p == nil {
		return false
	}
	if j.Principal.ID != "" {
		return j.Principal.ID == p.ID
	}
	return j.Principal.Name != "" && j.Principal.Name == p.Name
}

const jobColumns = `id, type, principal_id, principal_name, status, progress, params, checkpoint, result,
    error_code, error_message, attempts, created_at, updated_at, owner, heartbeat_at`

// read loads a job. Errors: ENotFound.
func (s *Service) read(ctx context.Context, id string) (Job, error) {
	var j Job
	err := s.inTx(ctx, false, func(q store.SQL) error {
		var err error
		j, _, err = scanJob(q.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = $1", id))
		return err
	})
	return j, err
}

// lease is who holds a job: its owner and last heartbeat.
type lease struct {
	owner     string
	heartbeat int64
}

func scanJob(r store.Scanner) (Job, lease, error) {
	var (
		j                  Job
		l                  lease
		params             string
		checkpoint, result sql.NullString
	)
	err := r.Scan(&j.ID, &j.Type, &j.Principal.ID, &j.Principal.Name, &j.Status, &j.Progress, &params, &checkpoint,
		&result, &j.ErrorCode, &j.Error, &j.Attempts, &j.CreatedAt, &j.UpdatedAt, &l.owner, &l.heartbeat)
	if err != nil {
		return Job{}, lease{}, err
	}
	j.Params = json.RawMessage(params)
	if checkpoint.Valid {
		j.Checkpoint = json.RawMessage(checkpoint.String)
	}
	if result.Valid {
		j.Result = json.RawMessage(result.String)
	}
	return j, l, nil
}

func (s *Service) isActive(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[id]
}

// busy reports whether this process runs or queues any job.
func (s *Service) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.active) > 0
}

func (s *Service) now() int64 { return s.c.Now().UnixMilli() }

// inTx runs f in one transaction through the module seam, and commits a writable one.
func (s *Service) inTx(ctx context.Context, writable bool, f func(store.SQL) error) error {
	tx, err := s.db.Begin(ctx, writable)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx.SQL()); err != nil {
		return err
	}
	if !writable {
		return nil
	}
	return tx.Commit()
}

// exec runs one statement in its own transaction and returns the rows it changed.
func (s *Service) exec(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := s.inTx(ctx, true, func(q store.SQL) error {
		var err error
		n, err = q.Exec(ctx, query, args...)
		return err
	})
	return n, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
