package jobs

import (
	"context"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// ErrInterrupted is the error of a recovered job whose type has no resumer.
var ErrInterrupted = meridian.Errorf(meridian.EInternal,
	"Interrupted by a restart: the server running the job stopped before it finished")

// Run recovers the jobs this node left pending or running, then, until ctx ends,
// heartbeats this node's jobs, recovers the jobs of nodes whose heartbeat is older than
// the lease, and removes finished jobs older than the retention. When ctx ends it stops
// the jobs it runs, leaving them for recovery, and returns once they have stopped.
func (s *Service) Run(ctx context.Context) {
	defer s.stop()
	s.recoverLogged(ctx)
	s.prune(ctx)
	beat := time.NewTicker(s.c.Lease / 6)
	defer beat.Stop()
	sweep := time.NewTicker(s.c.Lease / 2)
	defer sweep.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			if !s.busy() {
				continue
			}
			if _, err := s.exec(ctx, `UPDATE jobs SET heartbeat_at = $1 WHERE owner = $2 AND status IN ($3, $4)`,
				s.now(), s.c.Node, StatusPending, StatusRunning); err != nil && ctx.Err() == nil {
				s.log.Warn("job heartbeat failed", "err", err)
			}
		case <-sweep.C:
			s.recoverLogged(ctx)
		case <-prune.C:
			s.prune(ctx)
		}
	}
}

// recoverBatch bounds the jobs one recovery pass looks at.
const recoverBatch = 1000

func (s *Service) recoverLogged(ctx context.Context) {
	if err := s.Recover(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("job recovery failed; will retry", "err", err)
	}
}

// Recover takes over the pending and running jobs nobody runs: this node's that this
// process does not know (a previous run of the node left them), and other nodes' whose
// heartbeat is older than the lease. Each is resumed in the background when its type has
// a resumer, and otherwise failed with ErrInterrupted. Run calls it at start and every
// half lease.
func (s *Service) Recover(ctx context.Context) error {
	var found []held
	err := s.inTx(ctx, false, func(q store.SQL) error {
		rows, err := q.Query(ctx, "SELECT "+jobColumns+` FROM jobs
WHERE status IN ($1, $2) AND (owner = $3 OR heartbeat_at < $4) ORDER BY created_at LIMIT $5`,
			StatusPending, StatusRunning, s.c.Node, s.now()-s.c.Lease.Milliseconds(), recoverBatch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, l, err := scanJob(rows)
			if err != nil {
				return err
			}
			if !s.isActive(j.ID) {
				found = append(found, held{j, l})
			}
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	for _, f := range found {
		if err := s.recoverJob(ctx, f.Job, f.lease); err != nil {
			return err
		}
	}
	return nil
}

// held is a job and who held it when it was read.
type held struct {
	Job
	lease
}

// recoverJob claims an abandoned job, unless someone else did first, then resumes it or
// fails it as interrupted.
func (s *Service) recoverJob(ctx context.Context, j Job, was lease) error {
	n, err := s.exec(ctx, `UPDATE jobs SET owner = $1, heartbeat_at = $2, status = $3, attempts = attempts + 1, updated_at = $2
WHERE id = $4 AND owner = $5 AND heartbeat_at = $6 AND status IN ($7, $3)`,
		s.c.Node, s.now(), StatusRunning, j.ID, was.owner, was.heartbeat, StatusPending)
	if err != nil || n == 0 {
		return err
	}
	j.Attempts++
	resume, ok := s.resumers[j.Type]
	if !ok {
		_, err := s.fail(ctx, j.ID, ErrInterrupted)
		return err
	}
	if !s.begin(j.ID) {
		return nil // stopping: the job stays running, for the next recovery
	}
	s.log.Info("resuming an interrupted job", "job", j.ID, "type", j.Type, "attempt", j.Attempts)
	go s.execute(j.ID, false, func(ctx context.Context, p store.JobProgress) (any, error) {
		return resume(ctx, j, p)
	})
	return nil
}

// prune removes finished jobs last changed before the retention, a bounded batch at a
// time.
func (s *Service) prune(ctx context.Context) {
	before := s.now() - s.c.Retention.Milliseconds()
	for {
		n, err := s.exec(ctx, `DELETE FROM jobs WHERE id IN (
    SELECT id FROM jobs WHERE status IN ($1, $2) AND updated_at < $3 LIMIT $4)`,
			StatusCompleted, StatusFailed, before, recoverBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("pruning old jobs failed; will retry", "err", err)
			}
			return
		}
		if n < recoverBatch {
			return
		}
	}
}
