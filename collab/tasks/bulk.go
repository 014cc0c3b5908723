package tasks

import (
	"context"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Bulk operations.
const (
	BulkApprove  = "Approve"
	BulkReject   = "Reject"
	BulkClose    = "Close"
	BulkReassign = "Reassign"
)

// MaxBulkTasks bounds the tasks one bulk request acts on.
const MaxBulkTasks = 1000

// BulkRequest is the body of POST /tasks/bulk: an operation on the listed tasks, or,
// without TaskIDs, on every open task of Type (Suggestion when empty) about the entity
// About (an entity link or FQN): OpenMetadata's accept-all (Approve) and reject-all
// (Reject) of an entity's suggestions.
type BulkRequest struct {
	Operation string   `json:"operation"`
	TaskIDs   []string `json:"taskIds,omitempty"`
	About     string   `json:"about,omitempty"`
	Type      string   `json:"type,omitempty"`
	Comment   string   `json:"comment,omitempty"`
	Assignees []any    `json:"assignees,omitempty"`
}

// BulkResult is OpenMetadata's BulkOperationResult for tasks: every task's outcome, one
// failing task failing no other.
type BulkResult struct {
	Status    string        `json:"status"`
	Processed int           `json:"numberOfRowsProcessed"`
	Passed    int           `json:"numberOfRowsPassed"`
	Failed    int           `json:"numberOfRowsFailed"`
	Success   []BulkOutcome `json:"successRequest"`
	Failures  []BulkOutcome `json:"failedRequest"`
}

// BulkOutcome is one task's outcome.
type BulkOutcome struct {
	TaskID  string          `json:"taskId"`
	Task    meridian.Entity `json:"task,omitempty"`
	Code    string          `json:"code,omitempty"`
	Message string          `json:"message,omitempty"`
}

// Bulk runs one operation on many tasks, each as its single operation would (Approve
// applies a suggestion then resolves it; Reject resolves it as rejected), each in its
// own writes. Errors: EInvalid for a bad request (unknown operation, no tasks, more
// than MaxBulkTasks); the tasks' own errors are in the result.
func (s *Service) Bulk(ctx context.Context, p *meridian.Principal, r BulkRequest) (BulkResult, error) {
	switch r.Operation {
	case BulkApprove, BulkReject, BulkClose, BulkReassign:
	default:
		return BulkResult{}, meridian.Errorf(meridian.EInvalid, "operation must be one of Approve, Reject, Close, Reassign")
	}
	ids := r.TaskIDs
	if len(ids) > MaxBulkTasks {
		return BulkResult{}, meridian.Errorf(meridian.EInvalid, "taskIds: at most %d tasks per request", MaxBulkTasks)
	}
	if len(ids) == 0 {
		if r.About == "" {
			return BulkResult{}, meridian.Errorf(meridian.EInvalid, "taskIds or about is required")
		}
		typ := r.Type
		if typ == "" {
			typ = meridian.TaskTypeSuggestion
		}
		page, err := s.List(ctx, p, Query{About: r.About, Filters: map[string]string{"type": typ, "status": meridian.TaskStatusOpen},
			Options: store.ListOptions{Limit: MaxBulkTasks}})
		if err != nil {
			return BulkResult{}, err
		}
		for _, t := range page.Data {
			ids = append(ids, t.ID())
		}
	}
	res := BulkResult{Success: []BulkOutcome{}, Failures: []BulkOutcome{}}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var task meridian.Entity
		var err error
		switch r.Operation {
		case BulkApprove:
			task, err = s.Resolve(ctx, p, id, Resolution{Type: meridian.ResolutionApproved, Comment: r.Comment})
		case BulkReject:
			task, err = s.Resolve(ctx, p, id, Resolution{Type: meridian.ResolutionRejected, Comment: r.Comment})
		case BulkClose:
			task, err = s.Close(ctx, p, id, r.Comment)
		case BulkReassign:
			task, err = s.Reassign(ctx, p, id, r.Assignees)
		}
		res.Processed++
		if err != nil {
			res.Failed++
			res.Failures = append(res.Failures, BulkOutcome{TaskID: id, Code: meridian.ErrorCode(err), Message: meridian.ErrorMessage(err)})
			continue
		}
		res.Passed++
		res.Success = append(res.Success, BulkOutcome{TaskID: id, Task: task})
	}
	switch {
	case res.Failed == 0:
		res.Status = "success"
	case res.Passed == 0:
		res.Status = "failure"
	default:
		res.Status = "partialSuccess"
	}
	return res, nil
}
