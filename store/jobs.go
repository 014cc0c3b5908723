package store

import (
	"context"
	"encoding/json"

	"github.com/meridian-catalog/meridian"
)

// Jobs runs asynchronous work as durable jobs that record their progress and their
// result or error, and survive a restart. Package store/jobs implements it over its own
// table; the engine runs asynchronous deletes through it (Config.Jobs).
type Jobs interface {
	// Start records a pending job of type typ started by p, with params (stored as JSON:
	// what a resumer needs after a restart), and runs run in the background, recording
	// its result or its error. It returns the job's id. Errors: ETooManyRequests (too
	// many jobs wait), EInternal.
	Start(ctx context.Context, p *meridian.Principal, typ string, params any, run JobFunc) (string, error)
}

// JobFunc does a job's work and returns its result, recorded as JSON. An error is
// recorded as the job's error: its code and, for an application error, its message.
type JobFunc func(ctx context.Context, progress JobProgress) (any, error)

// JobProgress records how far a running job has gone: a percentage from 0 to 100 and a
// checkpoint, the JSON a resumer continues from after a restart (nil keeps the last).
type JobProgress interface {
	Progress(ctx context.Context, percent int, checkpoint any) error
}

// JobTypeDelete is the type of the jobs DeleteAsync starts.
const JobTypeDelete = "entity.delete"

// DeleteOutcome is the parameters, and when it completes the result, of an asynchronous
// delete job.
type DeleteOutcome struct {
	EntityType string `json:"entityType"`
	EntityID   string `json:"entityId"`
	EntityName string `json:"entityName"`
	HardDelete bool   `json:"hardDelete"`
	Recursive  bool   `json:"recursive"`
}

// SettleDelete is the resumer of an asynchronous delete whose server stopped while it
// ran. The delete is one transaction, so it either committed or left nothing behind:
// when the entity is gone (or, for a soft delete, marked deleted) the job completed;
// otherwise it failed and nothing was deleted. It deletes nothing itself, since the
// caller's rights are not known after a restart. Errors: EInvalid (bad parameters),
// EInternal (the delete did not commit).
func (s *Entities) SettleDelete(ctx context.Context, params json.RawMessage) (DeleteOutcome, error) {
	var o DeleteOutcome
	if err := json.Unmarshal(params, &o); err != nil || o.EntityID == "" {
		return DeleteOutcome{}, meridian.Errorf(meridian.EInvalid, "Invalid delete job parameters")
	}
	var done bool
	err := s.inReadTx(ctx, func(tx Tx) error {
		row, err := tx.Get(ctx, o.EntityType, o.EntityID)
		switch {
		case meridian.ErrorCode(err) == meridian.ENotFound:
			done = true
		case err != nil:
			return err
		default:
			done = row.Deleted && !o.HardDelete
		}
		return nil
	})
	if err != nil {
		return DeleteOutcome{}, err
	}
	if !done {
		return DeleteOutcome{}, meridian.Errorf(meridian.EInternal,
			"Interrupted by a restart before the delete of %s %s committed; nothing was deleted", o.EntityType, o.EntityName)
	}
	return o, nil
}
