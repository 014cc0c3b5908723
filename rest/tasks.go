package rest

import (
	"context"
	"net/http"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/tasks"
	"github.com/meridian-catalog/meridian/store"
)

// taskRoutes are the task flows beside the task kind's generic routes (GET, PATCH,
// DELETE, versions, restore): the list with its filters and time window, create and
// upsert with task numbering (these three replace the generic rows), the scoped lists,
// resolve, close, reassign, suggestion apply, bulk and comments.
func (s *server) taskRoutes(reg *meridian.Registry) []route {
	if s.tasks == nil {
		return nil
	}
	k, ok := reg.Kind(meridian.KindTask)
	if !ok {
		return nil
	}
	p := apiPrefix + "/v1/" + k.Collection
	task := kindRef(reg, meridian.KindTask)
	list := obj{"allOf": []any{schemaRef("EntityList"),
		obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": task}}}}}
	listParams := []any{paramRef("limit"), paramRef("before"), paramRef("after")}
	listParams = append(listParams, fieldsParam(k)...)
	listParams = append(listParams, paramRef("include"))
	for _, f := range k.Filters {
		desc := "Only tasks whose " + f.Param + " is this value."
		switch f.Param {
		case "aboutEntity":
			desc = "Only tasks about the entity with this fully qualified name."
		case "assignee":
			desc = "Only tasks assigned to the user or team of this name."
		case "assigneeKey":
			desc = "Only tasks assigned to this user or team, written user:<id> or team:<id>."
		}
		listParams = append(listParams, queryParam(f.Param, desc, obj{"type": "string"}))
	}
	listParams = append(listParams,
		queryParam("about", "Only tasks about this entity: an entity link (<#E::table::fqn>) or its FQN.", obj{"type": "string"}),
		queryParam("startTs", "Only tasks created at or after this time (epoch ms).", obj{"type": "integer", "minimum": 0}),
		queryParam("endTs", "Only tasks created at or before this time (epoch ms).", obj{"type": "integer", "minimum": 0}))
	create := jsonBody("The task to create; name is optional (TASK-<number> when absent).", schemaRef("CreateTask"), true)
	id := []any{paramRef("id")}
	resolution := jsonBody("The resolution: resolutionType (Approved when absent; Rejected rejects), comment, newValue.", obj{
		"type": "object", "properties": obj{
			"resolutionType": obj{"type": "string", "enum": []any{"Approved", "Rejected", "Completed", "Cancelled", "TimedOut", "AutoApproved", "AutoRejected", "Revoked", "Expired"}},
			"comment":        obj{"type": "string", "maxLength": tasks.MaxCommentBytes},
			"newValue":       obj{"description": "A description, or a list of tag labels, replacing the suggested value."}},
	}, false)
	comment := jsonBody("The comment.", obj{"type": "object", "required": []any{"message"},
		"properties": obj{"message": obj{"type": "string", "minLength": 1, "maxLength": tasks.MaxCommentBytes}}}, true)
	commentID := pathParamSpec("commentId", "The comment's id.", schemaRef("uuid"))
	one := func(desc string) obj { return resp(desc, task, "Change") }
	scoped := func(path, id, summary string, fn func(*tasks.Service) func(r *http.Request, q tasks.Query) (store.Page, error)) route {
		return route{method: http.MethodGet, path: p + path, handler: s.h(s.listTasks(fn(s.tasks))), id: id, tag: k.Name,
			summary: summary, params: listParams, responses: responses(obj{"200": resp("A page of tasks.", list)}, 400, 403)}
	}
	bulkResult := obj{"type": "object", "properties": obj{
		"status": obj{"type": "string"}, "numberOfRowsProcessed": obj{"type": "integer"},
		"numberOfRowsPassed": obj{"type": "integer"}, "numberOfRowsFailed": obj{"type": "integer"},
		"successRequest": obj{"type": "array", "items": obj{"type": "object"}},
		"failedRequest":  obj{"type": "array", "items": obj{"type": "object"}}}}
	return []route{
		{method: http.MethodGet, path: p, handler: s.h(s.listTasks(func(r *http.Request, q tasks.Query) (store.Page, error) {
			return s.tasks.List(r.Context(), principal(r), q)
		})), id: "listTasks", tag: k.Name, summary: "List tasks",
			description: "Filters type, status, category, assignee, createdBy, about and aboutType; startTs and endTs bound createdAt " +
				"(a windowed list examines at most 10,000 tasks per request and then answers an after cursor). Ordered by name " +
				"(TASK-<number>, creation order).",
			params: listParams, responses: responses(obj{"200": resp("A page of tasks.", list)}, 400, 403)},
		{method: http.MethodPost, path: p, handler: s.h(s.createTask(false)), id: "createTask", tag: k.Name,
			summary: "Create a task", description: "Needs CreateTask. The caller is the task's creator; type Suggestion for suggestions.",
			body: create, responses: responses(obj{"201": resp("The created task.", task, "Change", "Location")}, 400, 403, 404, 409, 413)},
		{method: http.MethodPut, path: p, handler: s.h(s.createTask(true)), id: "createOrUpdateTask", tag: k.Name,
			summary: "Create or update a task", body: create, responses: responses(obj{
				"200": one("The updated task."), "201": resp("The created task.", task, "Change", "Location")}, 400, 403, 404, 409, 412, 413)},
		scoped("/assigned", "listAssignedTasks", "List the tasks assigned to the caller",
			func(t *tasks.Service) func(*http.Request, tasks.Query) (store.Page, error) {
				return func(r *http.Request, q tasks.Query) (store.Page, error) {
					return t.Assigned(r.Context(), principal(r), q)
				}
			}),
		scoped("/created", "listCreatedTasks", "List the tasks the caller created",
			func(t *tasks.Service) func(*http.Request, tasks.Query) (store.Page, error) {
				return func(r *http.Request, q tasks.Query) (store.Page, error) {
					return t.Created(r.Context(), principal(r), q)
				}
			}),
		scoped("/owned", "listOwnedTasks", "List the tasks about entities the caller owns (directly or through a team)",
			func(t *tasks.Service) func(*http.Request, tasks.Query) (store.Page, error) {
				return func(r *http.Request, q tasks.Query) (store.Page, error) { return t.Owned(r.Context(), principal(r), q) }
			}),
		scoped("/visible", "listVisibleTasks", "List the tasks the caller may see (every task)",
			func(t *tasks.Service) func(*http.Request, tasks.Query) (store.Page, error) {
				return func(r *http.Request, q tasks.Query) (store.Page, error) { return t.List(r.Context(), principal(r), q) }
			}),
		scoped("/dataAccessRequests", "listDataAccessRequests", "List the data access request tasks",
			func(t *tasks.Service) func(*http.Request, tasks.Query) (store.Page, error) {
				return func(r *http.Request, q tasks.Query) (store.Page, error) {
					return t.DataAccessRequests(r.Context(), principal(r), q)
				}
			}),
		{method: http.MethodGet, path: p + "/count", handler: s.h(s.countTasks), id: "countTasks", tag: k.Name,
			summary: "Count tasks", description: "The list's filters; with startTs or endTs, counted among the first 10,000 tasks examined.",
			params: listParams, responses: responses(obj{"200": resp("The count.", obj{"type": "object",
				"properties": obj{"count": obj{"type": "integer"}}})}, 400, 403)},
		{method: http.MethodPost, path: p + "/{id}/resolve", handler: s.h(s.resolveTask), id: "resolveTask", tag: k.Name,
			summary: "Resolve a task", description: "Needs ResolveTask (an assignee, or an admin); the creator never approves their own task. " +
				"Approving a Suggestion, DescriptionUpdate or TagUpdate task applies it to the entity it is about first (a new version of it); " +
				"a rejecting resolution (Rejected) changes nothing else.",
			params: id, body: resolution, responses: responses(obj{"200": one("The resolved task.")}, 400, 403, 404, 409, 412, 413)},
		{method: http.MethodPost, path: p + "/{id}/close", handler: s.h(s.closeTask), id: "closeTask", tag: k.Name,
			summary: "Close a task", description: "Needs CloseTask (the creator or an assignee, or an admin). The task becomes Cancelled.",
			params: id, body: resolution, responses: responses(obj{"200": one("The closed task.")}, 400, 403, 404, 409, 412, 413)},
		{method: http.MethodPost, path: p + "/{id}/reassign", handler: s.h(s.reassignTask), id: "reassignTask", tag: k.Name,
			summary: "Reassign a task", description: "Needs ReassignTask (the creator, an assignee or a data steward, or an admin).",
			params: id, body: jsonBody("The new assignees: user names or references.", obj{"type": "object", "required": []any{"assignees"},
				"properties": obj{"assignees": obj{"type": "array", "minItems": 1, "maxItems": 100, "items": obj{}}}}, true),
			responses: responses(obj{"200": one("The reassigned task.")}, 400, 403, 404, 409, 412, 413)},
		{method: http.MethodPut, path: p + "/{id}/suggestion/apply", handler: s.h(s.applySuggestion), id: "applyTaskSuggestion", tag: k.Name,
			summary: "Accept a suggestion: apply it, then resolve the task",
			description: "The suggested value (or newValue) is written to payload.fieldPath of the entity the task is about, as the caller, " +
				"in a new version whose changeDescription.changeSummary names the task; then the task is resolved Approved.",
			params: id, body: resolution, responses: responses(obj{"200": one("The resolved task.")}, 400, 403, 404, 409, 412, 413)},
		{method: http.MethodPost, path: p + "/bulk", handler: s.h(s.bulkTasks), id: "bulkTasks", tag: k.Name,
			summary: "Act on many tasks (accept-all, reject-all)",
			description: "operation Approve, Reject, Close or Reassign, on taskIds (at most 1,000) or, without them, on every open task of type " +
				"(Suggestion by default) about an entity: accept-all and reject-all of an entity's suggestions. Each task succeeds or fails alone.",
			body: jsonBody("The operation.", obj{"type": "object", "required": []any{"operation"}, "properties": obj{
				"operation": obj{"type": "string", "enum": []any{"Approve", "Reject", "Close", "Reassign"}},
				"taskIds":   obj{"type": "array", "maxItems": tasks.MaxBulkTasks, "items": schemaRef("uuid")},
				"about":     obj{"type": "string"}, "type": obj{"type": "string"}, "comment": obj{"type": "string"},
				"assignees": obj{"type": "array", "items": obj{}}}}, true),
			responses: responses(obj{"200": resp("Every task's outcome.", bulkResult)}, 400, 403, 413)},
		{method: http.MethodPost, path: p + "/{id}/comments", handler: s.h(s.addTaskComment), id: "addTaskComment", tag: k.Name,
			summary: "Comment on a task", description: "A comment is an edit of the task: it needs EditTask.",
			params: id, body: comment, responses: responses(obj{"200": one("The task with the comment.")}, 400, 403, 404, 409, 413)},
		{method: http.MethodPatch, path: p + "/{id}/comments/{commentId}", handler: s.h(s.editTaskComment), id: "editTaskComment", tag: k.Name,
			summary: "Change a comment's message", description: "Its author, or an admin.",
			params: cat(id, []any{commentID}), body: comment, responses: responses(obj{"200": one("The task.")}, 400, 403, 404, 409, 413)},
		{method: http.MethodDelete, path: p + "/{id}/comments/{commentId}", handler: s.h(s.deleteTaskComment), id: "deleteTaskComment", tag: k.Name,
			summary: "Delete a comment", description: "Its author, or an admin.",
			params: cat(id, []any{commentID}), responses: responses(obj{"200": one("The task.")}, 400, 403, 404, 409)},
	}
}

// taskQuery reads a task list's query parameters.
func taskQuery(r *http.Request, k *meridian.Kind) (tasks.Query, error) {
	q := r.URL.Query()
	limit, err := queryLimit(q)
	if err != nil {
		return tasks.Query{}, err
	}
	inc, err := queryInclude(q)
	if err != nil {
		return tasks.Query{}, err
	}
	if q.Has("before") && q.Has("after") {
		return tasks.Query{}, invalid("Only one of before or after query parameter allowed")
	}
	out := tasks.Query{About: q.Get("about"), Filters: map[string]string{},
		Options: store.ListOptions{Fields: q.Get("fields"), Include: inc, Limit: limit, Before: q.Get("before"), After: q.Get("after")}}
	for _, f := range k.Filters {
		if v := q.Get(f.Param); v != "" {
			out.Filters[f.Param] = v
		}
	}
	if out.StartTs, err = tsParam(r, "startTs"); err != nil {
		return tasks.Query{}, err
	}
	if out.EndTs, err = tsParam(r, "endTs"); err != nil {
		return tasks.Query{}, err
	}
	return out, nil
}

func (s *server) taskKind() *meridian.Kind {
	k, _ := s.ents.Registry().Kind(meridian.KindTask)
	return k
}

func (s *server) listTasks(fn func(r *http.Request, q tasks.Query) (store.Page, error)) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := taskQuery(r, s.taskKind())
		if err != nil {
			return err
		}
		page, err := fn(r, q)
		if err != nil {
			return err
		}
		out := listPage{Data: page.Data, Paging: paging{Before: page.Before, After: page.After, Total: page.Total}}
		if out.Data == nil {
			out.Data = []meridian.Entity{}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

func (s *server) countTasks(w http.ResponseWriter, r *http.Request) error {
	q, err := taskQuery(r, s.taskKind())
	if err != nil {
		return err
	}
	n, err := s.tasks.Count(r.Context(), principal(r), q)
	return respond(w, http.StatusOK, map[string]int{"count": n}, err)
}

func (s *server) createTask(upsert bool) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readObject(r)
		if err != nil {
			return err
		}
		var res store.Result
		if upsert {
			res, err = s.tasks.CreateOrUpdate(r.Context(), principal(r), body)
		} else {
			res, err = s.tasks.Create(r.Context(), principal(r), body)
		}
		if err != nil {
			return err
		}
		status := http.StatusOK
		if res.Created {
			status = http.StatusCreated
			w.Header().Set("Location", location(s.taskKind(), res.Entity))
		}
		writeResult(w, status, res)
		return nil
	}
}

// respondTask ends a task handler: it returns err when there is one, and otherwise
// answers the updated task e.
func respondTask(w http.ResponseWriter, e meridian.Entity, err error) error {
	if err != nil {
		return err
	}
	w.Header().Set(ChangeHeader, meridian.EventEntityUpdated)
	writeJSON(w, http.StatusOK, entityOrEmpty(e))
	return nil
}

// taskResolution answers a task action on the task of path parameter id with a
// Resolution body.
func (s *server) taskResolution(w http.ResponseWriter, r *http.Request,
	act func(context.Context, *meridian.Principal, string, tasks.Resolution) (meridian.Entity, error)) error {
	var body tasks.Resolution
	id, err := uuidAndBody(r, "id", &body)
	if err != nil {
		return err
	}
	e, err := act(r.Context(), principal(r), id, body)
	return respondTask(w, e, err)
}

func (s *server) resolveTask(w http.ResponseWriter, r *http.Request) error {
	return s.taskResolution(w, r, s.tasks.Resolve)
}

func (s *server) closeTask(w http.ResponseWriter, r *http.Request) error {
	var body tasks.Resolution
	id, err := uuidAndBody(r, "id", &body)
	if err != nil {
		return err
	}
	e, err := s.tasks.Close(r.Context(), principal(r), id, body.Comment)
	return respondTask(w, e, err)
}

func (s *server) reassignTask(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Assignees []any `json:"assignees"`
	}
	id, err := uuidAndBody(r, "id", &body)
	if err != nil {
		return err
	}
	e, err := s.tasks.Reassign(r.Context(), principal(r), id, body.Assignees)
	return respondTask(w, e, err)
}

func (s *server) applySuggestion(w http.ResponseWriter, r *http.Request) error {
	return s.taskResolution(w, r, s.tasks.ApplySuggestion)
}

func (s *server) bulkTasks(w http.ResponseWriter, r *http.Request) error {
	var body tasks.BulkRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	res, err := s.tasks.Bulk(r.Context(), principal(r), body)
	return respond(w, http.StatusOK, res, err)
}

type commentBody struct {
	Message string `json:"message"`
}

func (s *server) addTaskComment(w http.ResponseWriter, r *http.Request) error {
	var body commentBody
	id, err := uuidAndBody(r, "id", &body)
	if err != nil {
		return err
	}
	e, err := s.tasks.AddComment(r.Context(), principal(r), id, body.Message)
	return respondTask(w, e, err)
}

func (s *server) editTaskComment(w http.ResponseWriter, r *http.Request) error {
	id, cid, err := uuidPair(r, "id", "commentId")
	if err != nil {
		return err
	}
	var body commentBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	e, err := s.tasks.EditComment(r.Context(), principal(r), id, cid, body.Message)
	return respondTask(w, e, err)
}

func (s *server) deleteTaskComment(w http.ResponseWriter, r *http.Request) error {
	id, cid, err := uuidPair(r, "id", "commentId")
	if err != nil {
		return err
	}
	e, err := s.tasks.DeleteComment(r.Context(), principal(r), id, cid)
	return respondTask(w, e, err)
}
