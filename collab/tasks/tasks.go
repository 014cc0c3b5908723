package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Service runs the task and feed flows over the entity engine. It is safe for
// concurrent use.
type Service struct {
	ents   *store.Entities
	policy store.Policy
	now    func() time.Time
}

// New returns a service over the engine. policy decides the task operations that are
// not a generic write (ResolveTask, CloseTask, ReassignTask) before the write is tried;
// nil allows them (tests), the kind's Validate hook still deciding on the write.
func New(ents *store.Entities, policy store.Policy) *Service {
	return &Service{ents: ents, policy: policy, now: time.Now}
}

// MaxNameAttempts bounds how many task numbers a create tries when a number is taken
// by a task named by hand.
const maxNameAttempts = 5

// Create creates a task from a create body. A body without a name is named
// TASK-<number> from the module's sequence. The creator is the caller. Errors: those of
// store.Entities.Create: EInvalid (schema, payload, lifecycle), ENotFound (about,
// assignee, column), EConflict (name taken), EForbidden (no CreateTask).
func (s *Service) Create(ctx context.Context, p *meridian.Principal, body meridian.Entity) (store.Result, error) {
	if body.String("name") != "" {
		return s.ents.Create(ctx, p, meridian.KindTask, body)
	}
	for i := 0; ; i++ {
		name, err := s.nextName(ctx)
		if err != nil {
			return store.Result{}, err
		}
		b := body.Clone()
		b["name"] = name
		res, err := s.ents.Create(ctx, p, meridian.KindTask, b)
		if meridian.ErrorCode(err) == meridian.EConflict && i < maxNameAttempts {
			continue // a task was named so by hand
		}
		return res, err
	}
}

// CreateOrUpdate creates the task named by the body, or updates it (PUT). A body
// without a name creates a new task as Create does. Errors: those of Create, plus
// EPreconditionFailed.
func (s *Service) CreateOrUpdate(ctx context.Context, p *meridian.Principal, body meridian.Entity) (store.Result, error) {
	if body.String("name") == "" {
		return s.Create(ctx, p, body)
	}
	return s.ents.CreateOrUpdate(ctx, p, meridian.KindTask, body)
}

// nextName takes the next task number.
func (s *Service) nextName(ctx context.Context) (string, error) {
	var n int64
	err := s.ents.InTx(ctx, true, func(tx store.Tx) error {
		return tx.SQL().QueryRow(ctx, `INSERT INTO tasks_sequence (name, value) VALUES ('task', 1)
			ON CONFLICT (name) DO UPDATE SET value = tasks_sequence.value + 1 RETURNING value`).Scan(&n)
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("TASK-%05d", n), nil
}

// Resolution is the body of a resolve: the resolution type (Approved when empty), a
// comment, and for a task that applies a value (Suggestion, DescriptionUpdate,
// TagUpdate) an optional NewValue replacing the suggested one: a description string,
// or a list of tag labels.
type Resolution struct {
	Type     string `json:"resolutionType,omitempty"`
	Comment  string `json:"comment,omitempty"`
	NewValue any    `json:"newValue,omitempty"`
}

// MaxCommentBytes bounds a resolution's or a comment's text.
const MaxCommentBytes = 100000

// Resolve resolves an open task. An approving resolution of a task that applies a
// value (accepting a suggestion) first changes the entity the task is about through
// the engine's write path, as the caller, with the task named in that version's
// changeSummary, then resolves the task at the version it read; a rejecting
// resolution changes nothing else. Errors: EInvalid (unknown resolution type, task
// not open, value that does not fit), ENotFound (task, target entity or column),
// EForbidden (no ResolveTask; the creator approving their own task; no Edit on the
// target), EPreconditionFailed (the task changed meanwhile).
func (s *Service) Resolve(ctx context.Context, p *meridian.Principal, id string, r Resolution) (meridian.Entity, error) {
	if r.Type == "" {
		r.Type = meridian.ResolutionApproved
	}
	status, ok := meridian.TaskStatusFor(r.Type)
	if !ok {
		return nil, meridian.Errorf(meridian.EInvalid, "resolutionType %s is not one of Approved, Rejected, Completed, Cancelled, TimedOut, AutoApproved, AutoRejected, Revoked, Expired", r.Type)
	}
	op := meridian.OpResolveTask
	if status == meridian.TaskStatusCancelled {
		op = meridian.OpCloseTask
	}
	if len(r.Comment) > MaxCommentBytes {
		return nil, meridian.Errorf(meridian.EInvalid, "comment is longer than %d bytes", MaxCommentBytes)
	}
	task, err := s.openTask(ctx, p, id, op)
	if err != nil {
		return nil, err
	}
	if status != meridian.TaskStatusCancelled && isApproving(r.Type) && meridian.IsTaskCreator(p, task) && !p.IsSystem() {
		return nil, meridian.Errorf(meridian.EForbidden, "%s can't approve task %s: a task's creator can't approve their own task", p.Name, task.Name())
	}
	var applied any
	claimed := false
	if isApproving(r.Type) && applies(task) {
		// Claim the task at the version read, so that a concurrent resolve fails (412)
		// and only one resolver applies; then apply, then resolve at the claimed version.
		held, err := s.claim(ctx, p, task)
		if err != nil {
			return nil, err
		}
		if applied, err = s.apply(ctx, p, held, r.NewValue); err != nil {
			s.unclaim(ctx, p, held, task.String("status"))
			return nil, err
		}
		task, claimed = held, true
	}
	return s.settle(ctx, p, task, status, r.Type, r.Comment, applied, claimed)
}

// notApplying refuses, with EConflict, a resolve of a task whose change another
// resolver is applying.
func (s *Service) notApplying(e meridian.Entity) error {
	m, _ := e["applying"].(map[string]any)
	if m == nil {
		return nil
	}
	at, _ := m["at"].(float64)
	if s.now().Sub(time.UnixMilli(int64(at))) > meridian.TaskClaimTimeout {
		return nil
	}
	return meridian.Errorf(meridian.EConflict, "Task %s is being resolved by %v; read it again", e.Name(), m["by"])
}

// claim marks an open task InProgress while its change is applied (a new version, at
// the version read). Errors: EPreconditionFailed when the task changed since it was
// read, those of store.Entities.Edit.
func (s *Service) claim(ctx context.Context, p *meridian.Principal, task meridian.Entity) (meridian.Entity, error) {
	res, err := s.ents.Edit(ctx, p, meridian.KindTask, store.ByID(task.ID()), task.Version().String(), func(e meridian.Entity) (meridian.Entity, error) {
		if err := s.notApplying(e); err != nil {
			return nil, err
		}
		e["status"] = "InProgress"
		e["applying"] = map[string]any{"by": resolverRef(p)["name"], "at": float64(s.now().UnixMilli())}
		return e, nil
	})
	if meridian.ErrorCode(err) == meridian.EPreconditionFailed {
		return nil, meridian.Errorf(meridian.EPreconditionFailed, "Task %s changed while it was being resolved; read it again", task.Name())
	}
	if err != nil {
		return nil, err
	}
	return res.Entity, nil
}

// unclaim gives a claimed task its status back after its change could not be applied.
// A failure is left as it is: the task stays InProgress, open, and may be resolved
// again.
func (s *Service) unclaim(ctx context.Context, p *meridian.Principal, claimed meridian.Entity, status string) {
	_, _ = s.ents.Edit(ctx, p, meridian.KindTask, store.ByID(claimed.ID()), claimed.Version().String(), func(e meridian.Entity) (meridian.Entity, error) {
		e["status"] = status
		delete(e, "applying")
		return e, nil
	})
}

func isApproving(resolution string) bool {
	return resolution == "Approved" || resolution == "AutoApproved" || resolution == "Completed"
}

// Close closes (cancels) an open task without resolving it. Errors: as Resolve.
func (s *Service) Close(ctx context.Context, p *meridian.Principal, id, comment string) (meridian.Entity, error) {
	return s.Resolve(ctx, p, id, Resolution{Type: meridian.ResolutionCancelled, Comment: comment})
}

// ApplySuggestion accepts a suggestion (or another task that applies a value): apply,
// then resolve as Approved. Errors: as Resolve, and EInvalid for a task that applies
// nothing.
func (s *Service) ApplySuggestion(ctx context.Context, p *meridian.Principal, id string, r Resolution) (meridian.Entity, error) {
	task, err := s.ents.Get(ctx, p, meridian.KindTask, store.ByID(id), store.GetOptions{})
	if err != nil {
		return nil, err
	}
	if !applies(task) {
		return nil, meridian.Errorf(meridian.EInvalid, "Task %s is a %s task: only Suggestion, DescriptionUpdate and TagUpdate tasks are applied", task.Name(), task.String("type"))
	}
	r.Type = meridian.ResolutionApproved
	return s.Resolve(ctx, p, id, r)
}

// Reassign replaces an open task's assignees (user names or references). Errors:
// EInvalid, ENotFound (task or user), EForbidden (no ReassignTask),
// EPreconditionFailed.
func (s *Service) Reassign(ctx context.Context, p *meridian.Principal, id string, assignees []any) (meridian.Entity, error) {
	if len(assignees) == 0 {
		return nil, meridian.Errorf(meridian.EInvalid, "assignees must name at least one user")
	}
	task, err := s.openTask(ctx, p, id, meridian.OpReassignTask)
	if err != nil {
		return nil, err
	}
	res, err := s.ents.Edit(ctx, p, meridian.KindTask, store.ByID(task.ID()), task.Version().String(), func(e meridian.Entity) (meridian.Entity, error) {
		e["assignees"] = assignees
		return e, nil
	})
	return res.Entity, err
}

// openTask reads a task, checks it is open and that p may perform op on it.
func (s *Service) openTask(ctx context.Context, p *meridian.Principal, id, op string) (meridian.Entity, error) {
	task, err := s.ents.Get(ctx, p, meridian.KindTask, store.ByID(id), store.GetOptions{})
	if err != nil {
		return nil, err
	}
	if !meridian.TaskIsOpen(task) {
		return nil, meridian.Errorf(meridian.EInvalid, "Task %s is already %s", task.Name(), task.String("status"))
	}
	if s.policy != nil {
		k, _ := s.ents.Registry().Kind(meridian.KindTask)
		if err := s.policy.Authorize(p, store.Operation(op), k, task, nil); err != nil {
			return nil, err
		}
	}
	return task, nil
}

// settle writes the resolution onto the task, at the version read.
// claimed says the caller holds the task's claim (it applied the change).
func (s *Service) settle(ctx context.Context, p *meridian.Principal, task meridian.Entity, status, typ, comment string, applied any, claimed bool) (meridian.Entity, error) {
	res, err := s.ents.Edit(ctx, p, meridian.KindTask, store.ByID(task.ID()), task.Version().String(), func(e meridian.Entity) (meridian.Entity, error) {
		if !meridian.TaskIsOpen(e) {
			return nil, meridian.Errorf(meridian.EInvalid, "Task %s is already %s", e.Name(), e.String("status"))
		}
		if !claimed {
			if err := s.notApplying(e); err != nil {
				return nil, err
			}
		}
		resolution := map[string]any{"type": typ, "resolvedBy": resolverRef(p), "resolvedAt": float64(s.now().UnixMilli())}
		if comment != "" {
			resolution["comment"] = comment
		}
		if applied != nil {
			resolution["newValue"] = applied
		}
		e["status"] = status
		e["resolution"] = resolution
		delete(e, "applying")
		return e, nil
	})
	if meridian.ErrorCode(err) == meridian.EPreconditionFailed {
		return nil, meridian.Errorf(meridian.EPreconditionFailed, "Task %s changed while it was being resolved; read it again", task.Name())
	}
	return res.Entity, err
}

func resolverRef(p *meridian.Principal) map[string]any {
	if p == nil {
		p = meridian.System
	}
	ref := map[string]any{"type": meridian.KindUser, "name": p.Name}
	if p.ID != "" {
		ref["id"] = p.ID
	} else {
		ref["id"] = meridian.NamedRef(meridian.KindUser, p.Name)["id"]
	}
	return ref
}

// taskRef is the reference to a task, as a change summary names it.
func taskRef(task meridian.Entity) *meridian.EntityRef {
	return &meridian.EntityRef{ID: task.ID(), Type: meridian.KindTask, Name: task.Name(), FullyQualifiedName: task.FQN()}
}

// trimID returns a path id without surrounding blanks.
func trimID(id string) string { return strings.TrimSpace(id) }
