package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// errStopped is the cause of a run's cancellation by Stop.
var errStopped = errors.New("stopped")

// execution is one run: the engine, the connection (with its secret, in memory only)
// and the statement.
type execution struct {
	s     *Service
	id    string
	eng   engine.Engine
	conn  engine.Conn
	query string
	lim   engine.Limits
}

// outcome is the job result of a run.
type outcome struct {
	WorkflowID string `json:"workflowId"`
	Rows       int64  `json:"rows"`
	Truncated  bool   `json:"truncated"`
}

// do is the run's job: it streams the result into chunks and records how it ended.
func (e *execution) do(ctx context.Context, _ store.JobProgress) (any, error) {
	s := e.s
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	s.running[e.id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, e.id)
		s.mu.Unlock()
	}()
	// A stop that came before this process started the run already marked it.
	if st, err := s.status(ctx, e.id); err != nil || st != StatusRunning {
		return nil, meridian.Errorf(meridian.EInvalid, "workflow %s was stopped before it started", e.id)
	}
	go s.watch(ctx, e.id, cancel)
	w := &chunkWriter{s: s, ctx: ctx, id: e.id, cancel: cancel}
	sum, err := e.eng.Query(ctx, e.conn, e.query, e.lim, w)
	if err == nil {
		err = w.flush()
	}
	bg := context.WithoutCancel(ctx)
	if err != nil {
		if errors.Is(context.Cause(ctx), errStopped) || errors.Is(err, errStopped) {
			return nil, meridian.Errorf(meridian.EInvalid, "workflow %s was stopped", e.id)
		}
		if ctx.Err() != nil && meridian.ErrorCode(err) == meridian.EInternal {
			err = meridian.Errorf(meridian.EUnavailable, "the run was interrupted")
		}
		s.finishFailed(bg, e.id, err)
		return nil, err
	}
	truncated := sum.Truncated || w.overBudget
	n, ferr := s.exec(bg, `UPDATE qr_runs SET status = $1, total = $2, truncated = $3, finished_at = $4
WHERE id = $5 AND status = $6`, StatusSuccess, w.total, boolInt(truncated), s.now(), e.id, StatusRunning)
	if ferr != nil {
		return nil, ferr
	}
	if n == 0 {
		return nil, meridian.Errorf(meridian.EInvalid, "workflow %s was stopped", e.id)
	}
	return outcome{WorkflowID: e.id, Rows: w.total, Truncated: truncated}, nil
}

// watchEvery is how often a running run checks that no other node stopped it.
const watchEvery = 2 * time.Second

// watch cancels a run that was stopped elsewhere (Stop on another node marks it
// FAILED), so its statement ends on the database server too.
func (s *Service) watch(ctx context.Context, id string, cancel context.CancelCauseFunc) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if st, err := s.status(ctx, id); err == nil && st != StatusRunning {
			cancel(errStopped)
			return
		}
	}
}

// finishFailed marks a running run FAILED with err's caller-safe code and message.
func (s *Service) finishFailed(ctx context.Context, id string, err error) {
	code := meridian.ErrorCode(err)
	if code == meridian.EInternal {
		s.log.Error("queryrunner: run failed", "run", id, "err", err)
	}
	if _, uerr := s.exec(ctx, `UPDATE qr_runs SET status = $1, error_code = $2, error_message = $3, finished_at = $4
WHERE id = $5 AND status = $6`, StatusFailed, code, meridian.ErrorMessage(err), s.now(), id, StatusRunning); uerr != nil {
		s.log.Error("queryrunner: failure not recorded", "run", id, "err", uerr)
	}
}

// resume fails a run a restart interrupted: its credentials were never stored, so it
// cannot continue.
func (s *Service) resume(ctx context.Context, j jobs.Job, _ store.JobProgress) (any, error) {
	var params struct {
		RunID string `json:"runId"`
	}
	_ = json.Unmarshal(j.Params, &params)
	err := meridian.Errorf(meridian.EUnavailable, "the workflow was interrupted by a restart; trigger the query again")
	if params.RunID != "" {
		s.finishFailed(ctx, params.RunID, err)
	}
	return nil, err
}

func (s *Service) status(ctx context.Context, id string) (string, error) {
	var st string
	err := s.inTx(ctx, false, func(db store.SQL) error {
		return db.QueryRow(ctx, `SELECT status FROM qr_runs WHERE id = $1`, id).Scan(&st)
	})
	return st, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// chunkWriter is the engine.Sink of a run: it encodes rows as they come and writes
// them in chunks of at most ChunkRows rows or ChunkBytes bytes, each chunk in its own
// transaction with the run's total, so memory stays bounded by one chunk. A chunk
// write finds the run no longer RUNNING when it was stopped (on any node), and then
// ends the statement.
type chunkWriter struct {
	s      *Service
	ctx    context.Context
	id     string
	cancel context.CancelCauseFunc

	buf        bytes.Buffer
	rows       int   // rows in buf
	total      int64 // rows written and buffered
	first      int64 // index of buf's first row
	bytes      int64 // bytes stored so far
	overBudget bool
}

// Columns records the result's columns.
func (w *chunkWriter) Columns(cols []engine.Column) error {
	if cols == nil {
		cols = []engine.Column{}
	}
	b, err := json.Marshal(cols)
	if err != nil {
		return err
	}
	n, err := w.s.exec(w.ctx, `UPDATE qr_runs SET columns = $1 WHERE id = $2 AND status = $3`, string(b), w.id, StatusRunning)
	if err != nil {
		return err
	}
	if n == 0 {
		return errStopped
	}
	return nil
}

// Row buffers one row and writes a chunk when the buffer is full.
func (w *chunkWriter) Row(values []any) error {
	b, err := json.Marshal(values)
	if err != nil {
		return err
	}
	if w.bytes+int64(w.buf.Len()+len(b)) > w.s.c.MaxResultBytes {
		w.overBudget = true
		return engine.ErrCapReached
	}
	if w.rows == 0 {
		w.buf.WriteByte('[')
	} else {
		w.buf.WriteByte(',')
	}
	w.buf.Write(b)
	w.rows++
	w.total++
	if w.rows >= w.s.c.ChunkRows || w.buf.Len() >= w.s.c.ChunkBytes {
		return w.flush()
	}
	return nil
}

// flush writes the buffered rows as one chunk.
func (w *chunkWriter) flush() error {
	if w.rows == 0 {
		return nil
	}
	w.buf.WriteByte(']')
	var stopped bool
	err := w.s.inTx(w.ctx, true, func(db store.SQL) error {
		n, err := db.Exec(w.ctx, `UPDATE qr_runs SET total = $1 WHERE id = $2 AND status = $3`, w.total, w.id, StatusRunning)
		if err != nil {
			return err
		}
		if n == 0 {
			stopped = true
			return nil
		}
		_, err = db.Exec(w.ctx, `INSERT INTO qr_run_chunks (run_id, first_row, row_count, rows) VALUES ($1, $2, $3, $4)`,
			w.id, w.first, w.rows, w.buf.String())
		return err
	})
	if err != nil {
		return err
	}
	if stopped {
		w.cancel(errStopped)
		return errStopped
	}
	w.bytes += int64(w.buf.Len())
	w.first += int64(w.rows)
	w.rows = 0
	w.buf.Reset()
	return nil
}
