package meridian

import (
	"context"
	"reflect"
	"time"
)

// Kind names of the collaboration kinds, for the capability that serves their flows
// (collab/tasks).
const (
	KindTask           = "task"
	KindTaskFormSchema = "taskFormSchema"
)

// Task policy operations (the specification's Authentication 7).
const (
	OpCreateTask   = "CreateTask"
	OpEditTask     = "EditTask"
	OpResolveTask  = "ResolveTask"
	OpCloseTask    = "CloseTask"
	OpReassignTask = "ReassignTask"
)

// Task types with a flow of their own.
const (
	TaskTypeSuggestion        = "Suggestion"
	TaskTypeDataAccessRequest = "DataAccessRequest"
)

// Task statuses a flow sets.
const (
	TaskStatusOpen      = "Open"
	TaskStatusCancelled = "Cancelled"
)

// Task resolution types a flow reads.
const (
	ResolutionApproved  = "Approved"
	ResolutionRejected  = "Rejected"
	ResolutionCancelled = "Cancelled"
)

// MaxTaskAssignees bounds a task's assignees.
const MaxTaskAssignees = 100

// TaskClaimTimeout is how long the claim of a task being resolved (its hidden
// "applying" marker, set while an accepted change is applied) holds off other status
// changes; past it the claim is taken as abandoned.
const TaskClaimTimeout = 5 * time.Minute

// openTaskStatuses are the statuses of a task that is not yet resolved or closed.
var openTaskStatuses = map[string]bool{"Open": true, "InProgress": true, "Pending": true}

// TaskIsOpen reports whether a task's status is an open one (Open, InProgress, Pending).
func TaskIsOpen(e Entity) bool { return openTaskStatuses[e.String("status")] }

// resolutionStatus is the status a task takes for each resolution type.
var resolutionStatus = map[string]string{
	"Approved": "Approved", "AutoApproved": "Approved", "Rejected": "Rejected", "AutoRejected": "Rejected",
	"Completed": "Completed", "Cancelled": "Cancelled", "TimedOut": "Expired", "Revoked": "Revoked", "Expired": "Expired",
}

// TaskStatusFor is the status a task takes when resolved with the resolution type, and
// whether the type is known.
func TaskStatusFor(resolution string) (string, bool) {
	s, ok := resolutionStatus[resolution]
	return s, ok
}

// approving are the statuses and resolution types that approve a task.
var approving = map[string]bool{"Approved": true, "AutoApproved": true, "Completed": true, "Granted": true}

// TaskApproves reports whether a task document's status or resolution approves it.
func TaskApproves(e Entity) bool {
	res, _ := e["resolution"].(map[string]any)
	t, _ := res["type"].(string)
	return approving[e.String("status")] || approving[t]
}

// taskCategories is the category of each task type when the body names none.
var taskCategories = map[string]string{
	"GlossaryApproval": "Approval", "RequestApproval": "Approval", "RecognizerFeedbackApproval": "Approval",
	"DataAccessRequest": "DataAccess",
	"DescriptionUpdate": "MetadataUpdate", "TagUpdate": "MetadataUpdate", "OwnershipUpdate": "MetadataUpdate",
	"TierUpdate": "MetadataUpdate", "DomainUpdate": "MetadataUpdate", "Suggestion": "MetadataUpdate",
	"TestCaseResolution": "Incident", "IncidentResolution": "Incident",
	"PipelineReview": "Review", "DataQualityReview": "Review",
	"CustomTask": "Custom",
}

// fieldPathTypes are the task types whose payload names a field of the entity the task
// is about in payload.fieldPath.
var fieldPathTypes = map[string]bool{"Suggestion": true, "DescriptionUpdate": true, "TagUpdate": true}

// aboutRequired are the task types that must be about an entity.
var aboutRequired = map[string]bool{"Suggestion": true, "DescriptionUpdate": true, "TagUpdate": true,
	"OwnershipUpdate": true, "TierUpdate": true, "DomainUpdate": true, "DataAccessRequest": true, "GlossaryApproval": true}

// taskKinds are the collaboration kinds: tasks and their form schemas.
func taskKinds() []*Kind {
	return []*Kind{
		{Name: KindTask, Collection: "tasks", Fields: []string{"owners", "followers", "tags", "domains"},
			SoftDelete: true, NoLineage: true, DedicatedFlows: true,
			Immutable:  []string{"createdBy", "createdAt", "type"},
			Unanswered: []string{"assigneeNames", "assigneeKeys", "createdByName", "aboutFQN", "aboutType", "applying"},
			Filters: []Filter{{Param: "type", Field: "type"}, {Param: "status", Field: "status"},
				{Param: "category", Field: "category"}, {Param: "assignee", Field: "assigneeNames"},
				{Param: "assigneeKey", Field: "assigneeKeys"},
				{Param: "createdBy", Field: "createdByName"}, {Param: "aboutEntity", Field: "aboutFQN"},
				{Param: "aboutType", Field: "aboutType"}},
			Prepare: prepareTask, Validate: validateTask,
			EventTypes: map[string]string{EventEntityCreated: EventTaskCreated, EventEntityUpdated: EventTaskUpdated,
				EventEntityRestored: EventTaskUpdated, EventEntitySoftDeleted: EventTaskUpdated},
			Operations: map[string]string{"Create": OpCreateTask, "Edit": OpEditTask},
			Allow:      TaskAllows},
		{Name: KindTaskFormSchema, Collection: "taskFormSchemas", Fields: []string{"owners", "followers"},
			SoftDelete: true, NoLineage: true,
			Filters: []Filter{{Param: "taskType", Field: "taskType"}}},
	}
}

// TaskAllows decides the task operations for a principal that is not an admin, as
// OpenMetadata 2.0's seeded task policies do:
//
//   - task authors are principals with the DataConsumer or DataSteward role, and bots;
//     a principal without one of them gets nothing (403);
//   - CreateTask: task authors;
//   - EditTask: task authors who created the task or are assigned to it, and data
//     stewards;
//   - ResolveTask: task authors assigned to the task;
//   - CloseTask: task authors who created the task or are assigned to it;
//   - ReassignTask: task authors who created the task or are assigned to it, and data
//     stewards;
//   - Delete (soft): the creator and data stewards; HardDelete and everything else:
//     admins only.
//
// That a creator never approves their own task, admins included, is checked on every
// write by the task kind's Validate hook.
func TaskAllows(p *Principal, op string, e Entity) bool {
	if p == nil {
		return false
	}
	author := p.HasRole(RoleDataConsumer) || p.HasRole(RoleDataSteward) || p.IsBot
	steward := p.HasRole(RoleDataSteward)
	creator, assignee := IsTaskCreator(p, e), IsTaskAssignee(p, e)
	switch op {
	case OpCreateTask:
		return author
	case OpEditTask, OpReassignTask:
		return author && (creator || assignee || steward)
	case OpResolveTask:
		return author && assignee
	case OpCloseTask:
		return author && (creator || assignee)
	case "Delete":
		return author && (creator || steward)
	}
	return false
}

// IsTaskCreator reports whether p created the task e.
func IsTaskCreator(p *Principal, e Entity) bool {
	return p != nil && refIs(p, e["createdBy"])
}

// IsTaskAssignee reports whether p is one of the task's assignees, or a direct member
// of an assignee team.
func IsTaskAssignee(p *Principal, e Entity) bool {
	if p == nil || e == nil {
		return false
	}
	for _, a := range listOf(e["assignees"]) {
		if m, _ := a.(map[string]any); m != nil && m["type"] == KindTeam {
			if id, _ := m["id"].(string); p.InTeam(id) {
				return true
			}
			continue
		}
		if refIs(p, a) {
			return true
		}
	}
	return false
}

// refIs reports whether v, a user reference, names the principal (by id, else by name).
func refIs(p *Principal, v any) bool {
	m, _ := v.(map[string]any)
	if m == nil {
		return false
	}
	id, _ := m["id"].(string)
	name, _ := m["name"].(string)
	if p.ID != "" && id != "" {
		return id == p.ID
	}
	return p.Name != "" && name == p.Name
}

// prepareTask fills a task's derived fields: on create the creator (the calling
// principal), createdAt, the default status (Open) and the category of its type; on
// every write the assignees as full user or team references (a body may name a user by
// name, or either by a reference with id or name), the comment count, and the hidden
// filter fields (assignee names and type:id keys, creator name, the FQN and type of
// the entity it is about). Errors: ENotFound for an assignee that is no user or team,
// EInvalid for a bad about link.
func prepareTask(ctx context.Context, c Catalog, w *Write) error {
	e := w.New
	if w.Old == nil {
		// The engine's own writes (a migration) may carry their creator and time; a
		// caller's never do.
		if p := w.Principal; !p.IsSystem() || e["createdBy"] == nil {
			e["createdBy"] = principalRef(p)
		}
		if p := w.Principal; !p.IsSystem() || e["createdAt"] == nil {
			e["createdAt"] = float64(time.Now().UnixMilli())
		}
		if e.String("status") == "" {
			e["status"] = TaskStatusOpen
		}
		if e.String("category") == "" {
			if cat, ok := taskCategories[e.String("type")]; ok {
				e["category"] = cat
			}
		}
	}
	delete(e, "assigneeNames") // derived below, never taken from a body
	delete(e, "assigneeKeys")
	if v, ok := e["assignees"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return Errorf(EInvalid, "assignees must be a list of users and teams")
		}
		if len(list) > MaxTaskAssignees {
			return Errorf(EInvalid, "assignees: at most %d users and teams", MaxTaskAssignees)
		}
		out := make([]any, 0, len(list))
		names := make([]any, 0, len(list))
		keys := make([]any, 0, len(list))
		seen := map[string]bool{}
		for i, a := range list {
			ref, err := assigneeRef(ctx, c, a)
			if err != nil {
				return Errorf(ErrorCode(err), "assignees[%d]: %s", i, ErrorMessage(err))
			}
			if seen[ref["id"].(string)] {
				continue
			}
			seen[ref["id"].(string)] = true
			out = append(out, ref)
			names = append(names, ref["name"])
			keys = append(keys, assigneeKey(ref))
		}
		e["assignees"] = out
		e["assigneeNames"] = names
		e["assigneeKeys"] = keys
	}
	if cb, _ := e["createdBy"].(map[string]any); cb != nil {
		e["createdByName"], _ = cb["name"].(string)
	}
	delete(e, "aboutFQN")
	delete(e, "aboutType")
	if about := e.String("about"); about != "" {
		link, err := ParseEntityLink(about)
		if err != nil {
			return Errorf(EInvalid, "about: %s", ErrorMessage(err))
		}
		fqn, err := NormalizeFQN(link.FQN)
		if err != nil {
			return Errorf(EInvalid, "about: %s", ErrorMessage(err))
		}
		link.FQN = fqn
		e["about"] = link.String()
		e["aboutFQN"] = fqn
		e["aboutType"] = link.EntityType
	}
	e["commentCount"] = float64(len(listOf(e["comments"])))
	return nil
}

// principalRef is the user reference of the calling principal.
func principalRef(p *Principal) map[string]any {
	if p == nil {
		p = System
	}
	ref := map[string]any{"type": KindUser, "name": p.Name, "fullyQualifiedName": QuoteName(p.Name)}
	if p.ID != "" {
		ref["id"] = p.ID
	} else {
		ref["id"] = NamedRef(KindUser, p.Name)["id"]
	}
	return ref
}

// assigneeRef resolves an assignee, written as a user name or a reference (type user,
// the default, or team) with id or name, to a full reference. A team assignee stands
// for each of its direct members. Errors: EInvalid (neither a user nor a team, or
// deleted), ENotFound.
func assigneeRef(ctx context.Context, c Catalog, v any) (map[string]any, error) {
	var name, id string
	kind := KindUser
	switch x := v.(type) {
	case string:
		name = x
	case map[string]any:
		switch t, _ := x["type"].(string); t {
		case "", KindUser:
		case KindTeam:
			kind = KindTeam
		default:
			return nil, Errorf(EInvalid, "an assignee must be a user or a team, not a %s", t)
		}
		id, _ = x["id"].(string)
		name, _ = x["name"].(string)
		if name == "" {
			name, _ = x["fullyQualifiedName"].(string)
		}
	default:
		return nil, Errorf(EInvalid, "an assignee is a user name or a user or team reference")
	}
	var u Entity
	var err error
	switch {
	case id != "":
		u, err = c.Get(ctx, kind, id)
	case name != "":
		u, err = c.GetByFQN(ctx, kind, QuoteName(name))
	default:
		return nil, Errorf(EInvalid, "an assignee reference needs an id or a name")
	}
	if ErrorCode(err) == ENotFound {
		return nil, Errorf(ENotFound, "%s %s not found", kind, firstOf(id, name))
	}
	if err != nil {
		return nil, err
	}
	if u.Deleted() {
		return nil, Errorf(EInvalid, "%s %s is deleted", kind, u.Name())
	}
	return map[string]any{"id": u.ID(), "type": kind, "name": u.Name(), "fullyQualifiedName": u.FQN()}, nil
}

// assigneeKey is the hidden assigneeKeys value of an assignee reference: its type and
// id, so that a user and a team of the same name stay apart.
func assigneeKey(ref map[string]any) string {
	t, _ := ref["type"].(string)
	id, _ := ref["id"].(string)
	return t + ":" + id
}

// TaskAssigneeKeys returns the assigneeKeys values that stand for p: p itself and each
// of its teams; a task assigned to any of them is assigned to p.
func TaskAssigneeKeys(p *Principal) []string {
	if p == nil || p.ID == "" {
		return nil
	}
	keys := []string{KindUser + ":" + p.ID}
	for _, t := range p.Teams {
		keys = append(keys, KindTeam+":"+t)
	}
	return keys
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// validateTask checks a task's own rules after its schema (which holds the typed
// payload of each task type): the entity it is about exists (and the column a field
// path or column link names), the payload's fieldPath parses, the task form schema it
// names exists for its type at a version it had, and the lifecycle:
//
//   - a task is created open, and a resolution comes only with a resolved or closed
//     status;
//   - a resolved or closed task does not change status, resolution, assignees or
//     payload again;
//   - resolving needs ResolveTask, cancelling CloseTask and changing the assignees
//     ReassignTask (TaskAllows; admins may);
//   - the creator of a task never approves it, admins included (EForbidden).
//
// Errors: EInvalid, ENotFound, EForbidden.
func validateTask(ctx context.Context, c Catalog, w *Write) error {
	e, old, p := w.New, w.Old, w.Principal
	typ := e.String("type")
	if aboutRequired[typ] && e.String("about") == "" {
		return Errorf(EInvalid, "about: a %s task must name the entity it is about (an entity link)", typ)
	}
	var target Entity
	if about := e.String("about"); about != "" && (old == nil || old.String("about") != about) {
		link, _ := ParseEntityLink(about) // parsed by prepareTask
		t, err := c.GetByFQN(ctx, link.EntityType, link.FQN)
		if ErrorCode(err) == ENotFound || ErrorCode(err) == EInvalid {
			return Errorf(ENotFound, "about: %s %s not found", link.EntityType, link.FQN)
		}
		if err != nil {
			return err
		}
		target = t
		if link.Field == "columns" && link.ArrayField != "" {
			if _, ok := (FieldPath{Columns: []string{link.ArrayField}}).Column(t); !ok {
				return Errorf(ENotFound, "about: column %s not found in %s %s", link.ArrayField, link.EntityType, link.FQN)
			}
		}
	}
	if fieldPathTypes[typ] {
		payload, _ := e["payload"].(map[string]any)
		fp, _ := payload["fieldPath"].(string)
		if fp == "" {
			fp = FieldDescription
		}
		path, err := ParseFieldPath(fp)
		if err != nil {
			return err
		}
		if len(path.Columns) > 0 && target != nil {
			if _, ok := path.Column(target); !ok {
				return Errorf(ENotFound, "payload.fieldPath: column %s not found in %s", path.String(), e.String("about"))
			}
		}
	}
	if err := checkTaskForm(ctx, c, e); err != nil {
		return err
	}
	return checkTaskLifecycle(p, old, e)
}

// checkTaskForm checks taskFormSchemaId and taskFormSchemaVersion against the stored
// task form schema.
func checkTaskForm(ctx context.Context, c Catalog, e Entity) error {
	id := e.String("taskFormSchemaId")
	if id == "" {
		if _, ok := e["taskFormSchemaVersion"]; ok {
			return Errorf(EInvalid, "taskFormSchemaVersion needs taskFormSchemaId")
		}
		return nil
	}
	form, err := c.Get(ctx, KindTaskFormSchema, id)
	if ErrorCode(err) == ENotFound {
		return Errorf(EInvalid, "taskFormSchemaId: task form schema %s not found", id)
	}
	if err != nil {
		return err
	}
	if form.Deleted() {
		return Errorf(EInvalid, "taskFormSchemaId: task form schema %s is deleted", form.Name())
	}
	if t := form.String("taskType"); t != e.String("type") {
		return Errorf(EInvalid, "taskFormSchemaId: task form schema %s is for %s tasks, not %s", form.Name(), t, e.String("type"))
	}
	if v, ok := e["taskFormSchemaVersion"].(float64); ok {
		if v < InitialVersion.Float() || v > form.Version().Float()+1e-9 {
			return Errorf(EInvalid, "taskFormSchemaVersion %.1f: task form schema %s has versions 0.1 to %.1f", v, form.Name(), form.Version().Float())
		}
	}
	return nil
}

// checkTaskLifecycle checks a write's status, resolution and assignee changes.
func checkTaskLifecycle(p *Principal, old, e Entity) error {
	status := e.String("status")
	_, resolved := e["resolution"]
	if old == nil {
		if !openTaskStatuses[status] {
			return Errorf(EInvalid, "status: a task is created Open, InProgress or Pending, not %s; resolve or close it afterwards", status)
		}
		if resolved {
			return Errorf(EInvalid, "resolution: a new task has no resolution")
		}
		return nil
	}
	oldStatus := old.String("status")
	if !openTaskStatuses[oldStatus] {
		for _, f := range []string{"status", "resolution", "assignees", "payload"} {
			if !sameJSON(old[f], e[f]) {
				return Errorf(EInvalid, "Task %s is already %s: its %s can't change", old.Name(), oldStatus, f)
			}
		}
		return nil
	}
	if resolved && openTaskStatuses[status] {
		return Errorf(EInvalid, "resolution: an open task has no resolution; resolve or close it")
	}
	if claim, _ := old["applying"].(map[string]any); claim != nil && e["applying"] != nil && status != oldStatus {
		at, _ := claim["at"].(float64)
		if time.Since(time.UnixMilli(int64(at))) < TaskClaimTimeout {
			return Errorf(EConflict, "Task %s is being resolved by %v; read it again", old.Name(), claim["by"])
		}
	}
	admin := p.IsSystem() || p.IsAdmin()
	if status != oldStatus && !openTaskStatuses[status] {
		op := OpResolveTask
		if status == TaskStatusCancelled {
			op = OpCloseTask
		}
		if !admin && !TaskAllows(p, op, old) {
			return Errorf(EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [%s] not allowed", p.Name, op)
		}
		if TaskApproves(e) && !p.IsSystem() && IsTaskCreator(p, old) {
			return Errorf(EForbidden, "%s can't approve task %s: a task's creator can't approve their own task", p.Name, old.Name())
		}
	}
	if !sameJSON(old["assignees"], e["assignees"]) && !admin && !TaskAllows(p, OpReassignTask, old) {
		return Errorf(EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [%s] not allowed", p.Name, OpReassignTask)
	}
	return nil
}

// sameJSON reports whether two field values are equal, an absent value and an empty
// list being the same.
func sameJSON(a, b any) bool {
	if isEmptyValue(a) && isEmptyValue(b) {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func isEmptyValue(v any) bool {
	if v == nil {
		return true
	}
	l, ok := v.([]any)
	return ok && len(l) == 0
}
