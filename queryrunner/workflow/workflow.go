// Package workflow runs Query Runner queries as durable workflows: Trigger resolves
// the caller's credentials (a Resolver), classifies the statement for the engine's
// dialect (sqlcheck), records a run and starts a durable job (store/jobs) that
// streams the result into bounded chunks of this module's tables; Stop cancels a run
// on the database server and marks it FAILED; Results pages a run's stored rows for
// its owner and admins. The module owns its tables (Module) on both drivers.
//
// The credentials live only in memory for the run's duration: a run's job params hold
// its id alone, so a run a restart interrupted is failed ("interrupted by a restart"),
// never resumed with a secret read back from storage.
package workflow

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
)

//go:embed migrations
var migrationFiles embed.FS

var migrations = func() fs.FS {
	f, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err)
	}
	return f
}()

// Module is the store module that owns qr_runs and qr_run_chunks.
func Module() store.Module { return store.Module{Name: "queryrunner_runs", Migrations: migrations} }

// Resolver resolves the credentials a query runs with (package queryrunner's config
// service). Errors: those of the resolution (EInvalid, ENotFound, EForbidden, …).
type Resolver interface {
	Resolve(ctx context.Context, p *meridian.Principal, serviceName, teamID string, preferTeam bool) (queryrunner.Resolution, error)
}

// Run statuses.
const (
	StatusRunning = "RUNNING"
	StatusSuccess = "SUCCESS"
	StatusFailed  = "FAILED"
)

// JobType is the type of the durable jobs runs execute in.
const JobType = "queryrunner.run"

// Limits of the results endpoint and of stored results.
const (
	DefaultPageSize   = 50
	MaxPageSize       = 10000
	DefaultMaxResults = 1000
	MaxQueryBytes     = 1 << 20
	MaxNameLength     = 256
)

// Config tunes a Service. Zero values take the defaults.
type Config struct {
	// DB is the catalog, opened with Module and jobs.Module.
	DB store.Driver
	// Jobs runs the workflows durably.
	Jobs *jobs.Service
	// Resolver resolves credentials.
	Resolver Resolver
	// StatementTimeout bounds every statement on the database server (default 5 min).
	StatementTimeout time.Duration
	// MaxRows is the ceiling on any run's row cap, whatever maxResultSize says
	// (default 1,000,000).
	MaxRows int
	// MaxResultBytes bounds the stored JSON of one run (default 512 MiB); a run past
	// it stops and is marked truncated.
	MaxResultBytes int64
	// ChunkRows and ChunkBytes bound one stored chunk (defaults 1,000 rows, 1 MiB).
	ChunkRows  int
	ChunkBytes int
	// Retention is how long finished runs and their results are kept (default 7 days).
	Retention time.Duration
	// Logger receives failures with no caller to answer; nil discards them.
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Service runs and keeps Query Runner workflows. It is safe for concurrent use.
type Service struct {
	c   Config
	log *slog.Logger

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // run id -> cancel, for runs this process executes
}

// New returns a service. It registers the jobs resumer for its job type, so call it
// before the jobs service's Run.
func New(c Config) *Service {
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = 5 * time.Minute
	}
	if c.MaxRows <= 0 {
		c.MaxRows = 1_000_000
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = 512 << 20
	}
	if c.ChunkRows <= 0 {
		c.ChunkRows = 1000
	}
	if c.ChunkBytes <= 0 {
		c.ChunkBytes = 1 << 20
	}
	if c.Retention <= 0 {
		c.Retention = 7 * 24 * time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	s := &Service{c: c, log: c.Logger, running: map[string]context.CancelCauseFunc{}}
	if c.Jobs != nil {
		c.Jobs.Register(JobType, s.resume)
	}
	return s
}

func (s *Service) now() int64 { return s.c.Now().UnixMilli() }

// inTx runs f in one transaction through the module seam, and commits a writable one.
func (s *Service) inTx(ctx context.Context, writable bool, f func(store.SQL) error) error {
	tx, err := s.c.DB.Begin(ctx, writable)
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

func (s *Service) exec(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := s.inTx(ctx, true, func(db store.SQL) error {
		var err error
		n, err = db.Exec(ctx, q, args...)
		return err
	})
	return n, err
}

// Run prunes finished runs past the retention every hour until ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if _, err := s.Prune(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("queryrunner: prune failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Prune deletes the finished runs older than the retention and their results, and
// returns how many runs it deleted.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	cutoff := s.now() - s.c.Retention.Milliseconds()
	var n int64
	err := s.inTx(ctx, true, func(db store.SQL) error {
		if _, err := db.Exec(ctx, `DELETE FROM qr_run_chunks WHERE run_id IN
(SELECT id FROM qr_runs WHERE status <> $1 AND created_at < $2)`, StatusRunning, cutoff); err != nil {
			return err
		}
		var err error
		n, err = db.Exec(ctx, `DELETE FROM qr_runs WHERE status <> $1 AND created_at < $2`, StatusRunning, cutoff)
		return err
	})
	return n, err
}
