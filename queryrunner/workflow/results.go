package workflow

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/store"
)

// ErrorBody is a failed run's error.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Page is one page of a run's results.
type Page struct {
	WorkflowID     string          `json:"workflowId"`
	WorkflowName   string          `json:"workflowName"`
	ServiceName    string          `json:"serviceName"`
	ConnectionType string          `json:"connectionType"`
	Status         string          `json:"status"`
	Columns        []engine.Column `json:"columns"`
	Rows           [][]any         `json:"rows"`
	Total          int64           `json:"total"`
	Page           int64           `json:"page"`
	Size           int             `json:"size"`
	Truncated      bool            `json:"truncated"`
	MaxResultSize  int64           `json:"maxResultSize"`
	Error          *ErrorBody      `json:"error"`
	CreatedAt      int64           `json:"createdAt"`
	FinishedAt     int64           `json:"finishedAt,omitempty"`
}

// run is a stored run's header.
type run struct {
	id, name, owner, service, connType, status, columns, errCode, errMsg string
	maxRows, total, created, finished                                    int64
	truncated                                                            int
}

func (s *Service) load(ctx context.Context, db store.SQL, id string) (run, error) {
	var r run
	err := db.QueryRow(ctx, `SELECT id, workflow_name, owner_id, service_name, connection_type, status, columns,
error_code, error_message, max_result_size, total, created_at, finished_at, truncated FROM qr_runs WHERE id = $1`, id).
		Scan(&r.id, &r.name, &r.owner, &r.service, &r.connType, &r.status, &r.columns, &r.errCode, &r.errMsg,
			&r.maxRows, &r.total, &r.created, &r.finished, &r.truncated)
	return r, err
}

// Results returns page page (from 0) of size rows (1 to MaxPageSize; 0 means
// DefaultPageSize) of a run's stored results, to the run's owner and admins; anyone
// else is told it does not exist. Errors: EUnauthorized, EInvalid (bad id, page or
// size), ENotFound.
func (s *Service) Results(ctx context.Context, p *meridian.Principal, id string, page int64, size int) (Page, error) {
	if p == nil {
		return Page{}, meridian.Errorf(meridian.EUnauthorized, "Not authenticated")
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return Page{}, meridian.Errorf(meridian.EInvalid, "Invalid workflow id %q", truncate(id, 64))
	}
	if size == 0 {
		size = DefaultPageSize
	}
	if size < 1 || size > MaxPageSize {
		return Page{}, meridian.Errorf(meridian.EInvalid, "size must be between 1 and %d", MaxPageSize)
	}
	if page < 0 || page > int64(1<<62)/int64(size) {
		return Page{}, meridian.Errorf(meridian.EInvalid, "page must be 0 or more")
	}
	notFound := meridian.Errorf(meridian.ENotFound, "Workflow %s not found", id)
	var out Page
	err := s.inTx(ctx, false, func(db store.SQL) error {
		r, err := s.load(ctx, db, id)
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return notFound
		}
		if err != nil {
			return err
		}
		if !p.IsAdmin() && r.owner != ownerID(p) {
			return notFound
		}
		out = Page{WorkflowID: r.id, WorkflowName: r.name, ServiceName: r.service, ConnectionType: r.connType,
			Status: r.status, Total: r.total, Page: page, Size: size, Truncated: r.truncated != 0,
			MaxResultSize: r.maxRows, CreatedAt: r.created, FinishedAt: r.finished, Rows: [][]any{}}
		if err := json.Unmarshal([]byte(r.columns), &out.Columns); err != nil || out.Columns == nil {
			out.Columns = []engine.Column{}
		}
		if r.status == StatusFailed {
			out.Error = &ErrorBody{Code: r.errCode, Message: r.errMsg}
		}
		start := page * int64(size)
		end := min(start+int64(size), r.total)
		if start >= end {
			return nil
		}
		rows, err := db.Query(ctx, `SELECT first_row, rows FROM qr_run_chunks
WHERE run_id = $1 AND first_row < $2 AND first_row + row_count > $3 ORDER BY first_row`, id, end, start)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var first int64
			var text string
			if err := rows.Scan(&first, &text); err != nil {
				return err
			}
			var chunk [][]any
			d := json.NewDecoder(strings.NewReader(text))
			d.UseNumber()
			if err := d.Decode(&chunk); err != nil {
				return err
			}
			lo := max(start-first, 0)
			hi := min(end-first, int64(len(chunk)))
			if lo < hi {
				out.Rows = append(out.Rows, chunk[lo:hi]...)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return Page{}, err
	}
	return out, nil
}

// Stopped is the answer of Stop.
type Stopped struct {
	WorkflowName string   `json:"workflowName"`
	WorkflowIDs  []string `json:"workflowIds"`
	Status       string   `json:"status"`
}

// Stop cancels the caller's running workflows named name (an admin's stop reaches
// every owner's; a workflow id is accepted as the name too): each is marked FAILED,
// and its statement is cancelled on the database server. Errors: EUnauthorized,
// EInvalid (no name), ENotFound (no such running workflow of the caller's).
func (s *Service) Stop(ctx context.Context, p *meridian.Principal, name string) (Stopped, error) {
	if p == nil {
		return Stopped{}, meridian.Errorf(meridian.EUnauthorized, "Not authenticated")
	}
	if strings.TrimSpace(name) == "" {
		return Stopped{}, meridian.Errorf(meridian.EInvalid, "workflowName is required")
	}
	if err := checkName("workflowName", name); err != nil {
		return Stopped{}, err
	}
	var ids []string
	msg := "Stopped by " + p.Name
	err := s.inTx(ctx, true, func(db store.SQL) error {
		q := `SELECT id FROM qr_runs WHERE (workflow_name = $1 OR id = $1) AND status = $2 AND owner_id = $3`
		args := []any{name, StatusRunning, ownerID(p)}
		if p.IsAdmin() {
			q = `SELECT id FROM qr_runs WHERE (workflow_name = $1 OR id = $1) AND status = $2`
			args = args[:2]
		}
		rows, err := db.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := db.Exec(ctx, `UPDATE qr_runs SET status = $1, error_code = $2, error_message = $3, finished_at = $4
WHERE id = $5 AND status = $6`, StatusFailed, meridian.EInvalid, msg, s.now(), id, StatusRunning); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Stopped{}, err
	}
	if len(ids) == 0 {
		return Stopped{}, meridian.Errorf(meridian.ENotFound, "No running workflow named %q", truncate(name, 64))
	}
	s.mu.Lock()
	for _, id := range ids {
		if cancel, ok := s.running[id]; ok {
			cancel(errStopped)
		}
	}
	s.mu.Unlock()
	return Stopped{WorkflowName: name, WorkflowIDs: ids, Status: StatusFailed}, nil
}

// Health checks that result storage answers. Errors: EUnavailable.
func (s *Service) Health(ctx context.Context) error {
	err := s.inTx(ctx, false, func(db store.SQL) error {
		var n int64
		return db.QueryRow(ctx, `SELECT COUNT(*) FROM qr_runs WHERE id = $1`, "").Scan(&n)
	})
	if err != nil {
		s.log.Warn("queryrunner: result storage unreachable", "err", err)
		return meridian.Errorf(meridian.EUnavailable, "result storage is not reachable")
	}
	return nil
}
