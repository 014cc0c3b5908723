package tasks

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// ResolveThreadTask is the body of PUT /feed/tasks/{id}/resolve: the accepted value (a
// description, or a JSON list of tag labels for a tag task).
type ResolveThreadTask struct {
	NewValue string `json:"newValue"`
}

// ResolveTaskThread resolves a legacy task thread: description and tag tasks write
// NewValue (the suggestion when empty) onto the field their about link names, through
// the engine's write path as the caller; approval and test case tasks only close.
// Assignees resolve (admins too), never the task's creator. Errors: EInvalid (closed
// task, no value), ENotFound (task, entity, column), EForbidden, EConflict.
func (s *Service) ResolveTaskThread(ctx context.Context, p *meridian.Principal, taskID string, r ResolveThreadTask) (meridian.Entity, error) {
	thread, err := s.GetTaskThread(ctx, p, taskID)
	if err != nil {
		return nil, err
	}
	task, view, err := s.threadTaskFor(p, thread, meridian.OpResolveTask)
	if err != nil {
		return nil, err
	}
	if meridian.IsTaskCreator(p, view) && !p.IsSystem() {
		return nil, meridian.Errorf(meridian.EForbidden, "%s can't approve task %v: a task's creator can't approve their own task", p.Name, task["id"])
	}
	value := r.NewValue
	if value == "" {
		value, _ = task["suggestion"].(string)
	}
	typ, _ := task["type"].(string)
	if c, ok, err := legacyChange(typ, thread.String("about"), value, task); err != nil {
		return nil, err
	} else if ok {
		link, _ := meridian.ParseEntityLink(thread.String("about"))
		ref := &meridian.EntityRef{ID: thread.ID(), Type: "thread", Name: strconv.FormatFloat(task["id"].(float64), 'f', 0, 64)}
		wctx := meridian.WithChangeSource(ctx, meridian.ChangeSource{Source: "Suggested", Task: ref})
		if _, err := s.ents.Edit(wctx, p, link.EntityType, store.ByFQN(link.FQN), "", func(e meridian.Entity) (meridian.Entity, error) {
			return e, c.applyTo(e)
		}); err != nil {
			return nil, err
		}
	}
	return s.closeThreadTask(ctx, p, thread, value, "")
}

// CloseTaskThread closes a legacy task thread without applying anything, with an
// optional comment posted to the thread. The creator and assignees close (admins too).
// Errors: EInvalid (closed task), ENotFound, EForbidden, EConflict.
func (s *Service) CloseTaskThread(ctx context.Context, p *meridian.Principal, taskID, comment string) (meridian.Entity, error) {
	thread, err := s.GetTaskThread(ctx, p, taskID)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.threadTaskFor(p, thread, meridian.OpCloseTask); err != nil {
		return nil, err
	}
	if len(comment) > MaxCommentBytes {
		return nil, meridian.Errorf(meridian.EInvalid, "comment is longer than %d bytes", MaxCommentBytes)
	}
	return s.closeThreadTask(ctx, p, thread, "", comment)
}

// threadTaskFor returns an open thread's task and checks p may perform op on it, with
// the task rules (meridian.TaskAllows) over a task view of the thread.
func (s *Service) threadTaskFor(p *meridian.Principal, thread meridian.Entity, op string) (map[string]any, meridian.Entity, error) {
	if err := writer(p); err != nil {
		return nil, nil, err
	}
	task, _ := thread["task"].(map[string]any)
	if task == nil {
		return nil, nil, meridian.Errorf(meridian.ENotFound, "thread %s is not a task", thread.ID())
	}
	if task["status"] != ThreadTaskOpen {
		return nil, nil, meridian.Errorf(meridian.EInvalid, "Task %v is already closed", task["id"])
	}
	view := meridian.Entity{"createdBy": map[string]any{"name": thread.String("createdBy")}, "assignees": task["assignees"]}
	if s.policy != nil {
		k, _ := s.ents.Registry().Kind(meridian.KindTask)
		if err := s.policy.Authorize(p, store.Operation(op), k, view, nil); err != nil {
			return nil, nil, err
		}
	}
	return task, view, nil
}

// closeThreadTask marks the thread's task closed, at the thread's stored version.
func (s *Service) closeThreadTask(ctx context.Context, p *meridian.Principal, thread meridian.Entity, newValue, comment string) (meridian.Entity, error) {
	return s.updateThread(ctx, p, "id = $1", thread.ID(), func(e meridian.Entity) error {
		task, _ := e["task"].(map[string]any)
		if task == nil || task["status"] != ThreadTaskOpen {
			return meridian.Errorf(meridian.EInvalid, "Task %v is already closed", thread["task"].(map[string]any)["id"])
		}
		task["status"] = ThreadTaskClosed
		task["closedBy"] = p.Name
		task["closedAt"] = float64(s.now().UnixMilli())
		if newValue != "" {
			task["newValue"] = newValue
		}
		e["resolved"] = true
		if comment != "" {
			e["posts"] = append(listOf(e["posts"]), map[string]any{"id": thread.ID() + "-close", "message": comment,
				"from": p.Name, "postTs": task["closedAt"], "reactions": []any{}})
		}
		return nil
	})
}

// legacyChange is what resolving a description or tag task writes: the field its about
// link names (the entity's description or tags, or a column's), and the value. ok is
// false for the tasks that apply nothing (approval, test case failure resolution).
func legacyChange(typ, about, value string, task map[string]any) (change, bool, error) {
	var field string
	switch typ {
	case "RequestDescription", "UpdateDescription":
		field = meridian.FieldDescription
	case "RequestTag", "UpdateTag":
		field = meridian.FieldTags
	default:
		return change{}, false, nil
	}
	link, err := meridian.ParseEntityLink(about)
	if err != nil {
		return change{}, false, err
	}
	c := change{path: meridian.FieldPath{Field: field}}
	if link.Field == "columns" && link.ArrayField != "" {
		c.path.Columns = []string{link.ArrayField}
	}
	if field == meridian.FieldDescription {
		c.description = &value
		return c, true, nil
	}
	if value == "" {
		return change{}, false, meridian.Errorf(meridian.EInvalid, "newValue is required: a JSON list of tag labels")
	}
	if err := json.Unmarshal([]byte(value), &c.add); err != nil {
		return change{}, false, meridian.Errorf(meridian.EInvalid, "newValue must be a JSON list of tag labels")
	}
	if old, _ := task["oldValue"].(string); old != "" {
		_ = json.Unmarshal([]byte(old), &c.remove) // checked when the thread was created
	}
	return c, true, nil
}
