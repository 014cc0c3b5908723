package rest

import (
	"net/http"
	"strconv"

	"github.com/meridian-catalog/meridian/collab/tasks"
)

// feedRoutes are the feed: conversations about entities with posts and reactions, and
// the legacy task threads. Announcements are refused (400).
func (s *server) feedRoutes() []route {
	if s.tasks == nil {
		return nil
	}
	p := apiPrefix + "/v1/feed"
	thread := obj{"type": "object", "description": "A thread: id, type (Conversation or Task), about (an entity link), entityRef, " +
		"threadTs, createdBy, message, posts, postsCount, reactions, resolved, and for a task thread task {id, type, assignees, status, " +
		"oldValue, suggestion, newValue, closedBy, closedAt}."}
	list := obj{"allOf": []any{schemaRef("EntityList"), obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": thread}}}}}
	id := []any{pathParamSpec("id", "The thread's id.", schemaRef("uuid"))}
	taskID := []any{pathParamSpec("taskId", "The task's id (a number) or its thread's id.", obj{"type": "string", "maxLength": 64})}
	postID := pathParamSpec("postId", "The post's id.", schemaRef("uuid"))
	reaction := pathParamSpec("reactionType", "thumbsUp, thumbsDown, hooray, laugh, confused, heart, rocket or eyes.", obj{"type": "string",
		"enum": []any{"thumbsUp", "thumbsDown", "hooray", "laugh", "confused", "heart", "rocket", "eyes"}})
	message := jsonBody("The post.", obj{"type": "object", "required": []any{"message"}, "properties": obj{
		"message": obj{"type": "string", "minLength": 1, "maxLength": tasks.MaxCommentBytes}, "from": obj{"type": "string"}}}, true)
	ok := func(desc string) obj { return obj{"200": resp(desc, thread)} }
	return []route{
		{method: http.MethodGet, path: p, handler: s.h(s.listThreads), id: "listThreads", tag: "feed", summary: "List conversations",
			description: "Newest first. type=Announcement answers 400: announcements are no longer served from the feed.",
			params: []any{queryParam("type", "Conversation or Task.", obj{"type": "string"}),
				queryParam("entityLink", "Only threads about this entity.", obj{"type": "string"}),
				queryParam("taskStatus", "Open or Closed (task threads).", obj{"type": "string"}),
				queryParam("startTs", "Only threads created at or after (epoch ms).", obj{"type": "integer", "minimum": 0}),
				queryParam("endTs", "Only threads created at or before (epoch ms).", obj{"type": "integer", "minimum": 0}),
				queryParam("limit", "Page size, 1 to 100 (10).", obj{"type": "integer", "minimum": 0, "maximum": tasks.MaxThreadPage}),
				queryParam("limitPosts", "How many of each thread's newest posts to answer, 0 to 10 (3).", obj{"type": "integer", "minimum": 0, "maximum": tasks.MaxListPosts}),
				paramRef("after")},
			responses: responses(obj{"200": resp("A page of threads.", list)}, 400, 403)},
		{method: http.MethodPost, path: p, handler: s.h(s.createThread), id: "createThread", tag: "feed", summary: "Create a thread",
			description: "A conversation, or a task thread of the four legacy kinds (RequestDescription, UpdateDescription, RequestTag, UpdateTag, " +
				"RequestApproval, RequestTestCaseFailureResolution; needs CreateTask). Another task type, a blank about or an announcement answers 400.",
			body: jsonBody("The thread.", obj{"type": "object", "required": []any{"message", "about"}, "properties": obj{
				"message": obj{"type": "string"}, "from": obj{"type": "string"}, "about": obj{"type": "string"},
				"type": obj{"type": "string", "enum": []any{"Conversation", "Task"}}, "taskDetails": obj{"type": "object"}}}, true),
			responses: responses(obj{"201": resp("The thread.", thread)}, 400, 403, 404, 413)},
		{method: http.MethodGet, path: p + "/{id}", handler: s.h(s.getThread), id: "getThread", tag: "feed", summary: "Get a thread",
			params: id, responses: responses(ok("The thread."), 400, 403, 404)},
		{method: http.MethodDelete, path: p + "/{id}", handler: s.h(s.deleteThread), id: "deleteThread", tag: "feed",
			summary: "Delete a thread", description: "Its creator, or an admin.", params: id,
			responses: responses(obj{"204": resp("Deleted.", nil)}, 400, 403, 404)},
		{method: http.MethodGet, path: p + "/{id}/posts", handler: s.h(s.listPosts), id: "listPosts", tag: "feed",
			summary: "List a thread's posts", params: id, responses: responses(obj{"200": resp("The posts.", obj{"type": "object"})}, 400, 403, 404)},
		{method: http.MethodPost, path: p + "/{id}/posts", handler: s.h(s.addPost), id: "addPost", tag: "feed",
			summary: "Post to a thread", params: id, body: message, responses: responses(ok("The thread."), 400, 403, 404, 409, 413)},
		{method: http.MethodDelete, path: p + "/{id}/posts/{postId}", handler: s.h(s.deletePost), id: "deletePost", tag: "feed",
			summary: "Delete a post", description: "Its author, or an admin.", params: cat(id, []any{postID}),
			responses: responses(ok("The thread."), 400, 403, 404, 409)},
		{method: http.MethodPut, path: p + "/{id}/reactions/{reactionType}", handler: s.h(s.react(false, true)), id: "addThreadReaction",
			tag: "feed", summary: "React to a thread", params: cat(id, []any{reaction}), responses: responses(ok("The thread."), 400, 403, 404, 409)},
		{method: http.MethodDelete, path: p + "/{id}/reactions/{reactionType}", handler: s.h(s.react(false, false)), id: "deleteThreadReaction",
			tag: "feed", summary: "Remove the caller's reaction to a thread", params: cat(id, []any{reaction}),
			responses: responses(ok("The thread."), 400, 403, 404, 409)},
		{method: http.MethodPut, path: p + "/{id}/posts/{postId}/reactions/{reactionType}", handler: s.h(s.react(true, true)),
			id: "addPostReaction", tag: "feed", summary: "React to a post", params: cat(id, []any{postID, reaction}),
			responses: responses(ok("The thread."), 400, 403, 404, 409)},
		{method: http.MethodDelete, path: p + "/{id}/posts/{postId}/reactions/{reactionType}", handler: s.h(s.react(true, false)),
			id: "deletePostReaction", tag: "feed", summary: "Remove the caller's reaction to a post", params: cat(id, []any{postID, reaction}),
			responses: responses(ok("The thread."), 400, 403, 404, 409)},
		{method: http.MethodGet, path: p + "/tasks/{taskId}", handler: s.h(s.getTaskThread), id: "getTaskThread", tag: "feed",
			summary: "Read a task thread", params: taskID, responses: responses(ok("The task thread."), 400, 403, 404)},
		{method: http.MethodPut, path: p + "/tasks/{taskId}/resolve", handler: s.h(s.resolveTaskThread), id: "resolveTaskThread", tag: "feed",
			summary: "Resolve a task thread", description: "An assignee (or an admin), never the creator. A description or tag task writes " +
				"newValue (or the suggestion) onto the field its about link names.",
			params: taskID, body: jsonBody("The accepted value.", obj{"type": "object", "properties": obj{"newValue": obj{"type": "string"}}}, false),
			responses: responses(ok("The task thread."), 400, 403, 404, 409, 413)},
		{method: http.MethodPut, path: p + "/tasks/{taskId}/close", handler: s.h(s.closeTaskThread), id: "closeTaskThread", tag: "feed",
			summary: "Close a task thread", description: "The creator or an assignee (or an admin); nothing is applied.",
			params: taskID, body: jsonBody("An optional comment, posted to the thread.", obj{"type": "object",
				"properties": obj{"comment": obj{"type": "string"}}}, false),
			responses: responses(ok("The task thread."), 400, 403, 404, 409, 413)},
	}
}

func (s *server) listThreads(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	tq := tasks.ThreadQuery{Type: q.Get("type"), EntityLink: q.Get("entityLink"), TaskStatus: q.Get("taskStatus"), After: q.Get("after")}
	var err error
	if tq.Limit, err = queryLimit(q); err != nil {
		return err
	}
	if !q.Has("limit") {
		tq.Limit = 0
	}
	if v := q.Get("limitPosts"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > tasks.MaxListPosts {
			return invalid("limitPosts must be an integer from 0 to %d", tasks.MaxListPosts)
		}
		if n == 0 {
			n = tasks.NoPosts
		}
		tq.LimitPosts = n
	}
	if tq.StartTs, err = tsParam(r, "startTs"); err != nil {
		return err
	}
	if tq.EndTs, err = tsParam(r, "endTs"); err != nil {
		return err
	}
	data, after, total, err := s.tasks.ListThreads(r.Context(), principal(r), tq)
	return respond(w, http.StatusOK, map[string]any{"data": data, "paging": paging{After: after, Total: total}}, err)
}

func (s *server) createThread(w http.ResponseWriter, r *http.Request) error {
	var body tasks.CreateThread
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	e, err := s.tasks.CreateThread(r.Context(), principal(r), body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", e.String("href"))
	writeJSON(w, http.StatusCreated, e)
	return nil
}

func (s *server) getThread(w http.ResponseWriter, r *http.Request) error {
	id, err := uuidParam(r, "id")
	if err != nil {
		return err
	}
	e, err := s.tasks.GetThread(r.Context(), principal(r), id)
	return respond(w, http.StatusOK, e, err)
}

func (s *server) deleteThread(w http.ResponseWriter, r *http.Request) error {
	id, err := uuidParam(r, "id")
	if err != nil {
		return err
	}
	if err := s.tasks.DeleteThread(r.Context(), principal(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) listPosts(w http.ResponseWriter, r *http.Request) error {
	id, err := uuidParam(r, "id")
	if err != nil {
		return err
	}
	e, err := s.tasks.GetThread(r.Context(), principal(r), id)
	if err != nil {
		return err
	}
	posts, _ := e["posts"].([]any)
	if posts == nil {
		posts = []any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": posts, "paging": paging{Total: len(posts)}})
	return nil
}

func (s *server) addPost(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Message string `json:"message"`
		From    string `json:"from"`
	}
	id, err := uuidAndBody(r, "id", &body)
	if err != nil {
		return err
	}
	e, err := s.tasks.AddPost(r.Context(), principal(r), id, body.Message)
	return respond(w, http.StatusOK, e, err)
}

func (s *server) deletePost(w http.ResponseWriter, r *http.Request) error {
	id, post, err := uuidPair(r, "id", "postId")
	if err != nil {
		return err
	}
	e, err := s.tasks.DeletePost(r.Context(), principal(r), id, post)
	return respond(w, http.StatusOK, e, err)
}

func (s *server) react(onPost, add bool) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := uuidParam(r, "id")
		if err != nil {
			return err
		}
		var post string
		if onPost {
			if post, err = uuidParam(r, "postId"); err != nil {
				return err
			}
		}
		typ, err := pathParam(r, "reactionType")
		if err != nil {
			return err
		}
		e, err := s.tasks.React(r.Context(), principal(r), id, post, typ, add)
		return respond(w, http.StatusOK, e, err)
	}
}

func (s *server) getTaskThread(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "taskId")
	if err != nil {
		return err
	}
	e, err := s.tasks.GetTaskThread(r.Context(), principal(r), id)
	return respond(w, http.StatusOK, e, err)
}

func (s *server) resolveTaskThread(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "taskId")
	if err != nil {
		return err
	}
	var body tasks.ResolveThreadTask
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	e, err := s.tasks.ResolveTaskThread(r.Context(), principal(r), id, body)
	return respond(w, http.StatusOK, e, err)
}

func (s *server) closeTaskThread(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "taskId")
	if err != nil {
		return err
	}
	var body struct {
		Comment string `json:"comment"`
	}
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	e, err := s.tasks.CloseTaskThread(r.Context(), principal(r), id, body.Comment)
	return respond(w, http.StatusOK, e, err)
}
