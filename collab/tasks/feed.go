package tasks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// AnnouncementsMoved is the feed's answer to any call on announcements.
const AnnouncementsMoved = "Announcements are no longer served from /v1/feed. Use /v1/announcements instead."

// Thread types.
const (
	ThreadConversation = "Conversation"
	ThreadTask         = "Task"
	ThreadAnnouncement = "Announcement"
)

// Legacy task thread statuses.
const (
	ThreadTaskOpen   = "Open"
	ThreadTaskClosed = "Closed"
)

// legacyTaskTypes are the task types a feed thread may still carry: description, tag,
// approval and test-case-failure-resolution tasks.
var legacyTaskTypes = map[string]bool{"RequestDescription": true, "UpdateDescription": true,
	"RequestTag": true, "UpdateTag": true, "RequestApproval": true, "RequestTestCaseFailureResolution": true}

// Feed bounds.
const (
	MaxPostsPerThread = 10000
	MaxReactions      = 1000
	MaxThreadPage     = 100
	MaxAssignees      = meridian.MaxTaskAssignees
	// MaxThreadBytes bounds a thread's stored document, posts and reactions included.
	MaxThreadBytes = 4 << 20
	// DefaultListPosts and MaxListPosts bound the posts a list answers per thread (the
	// newest); GET /feed/{id}/posts answers them all.
	DefaultListPosts = 3
	MaxListPosts     = 10
	// NoPosts as ThreadQuery.LimitPosts answers threads without their posts.
	NoPosts = -1
)

// reactionTypes are OpenMetadata's reaction types.
var reactionTypes = map[string]bool{"thumbsUp": true, "thumbsDown": true, "hooray": true, "laugh": true,
	"confused": true, "heart": true, "rocket": true, "eyes": true}

// CreateThread is the body of POST /feed.
type CreateThread struct {
	Message     string       `json:"message"`
	From        string       `json:"from,omitempty"`
	About       string       `json:"about"`
	Type        string       `json:"type,omitempty"`
	TaskDetails *TaskDetails `json:"taskDetails,omitempty"`
	// Announcement is refused: announcements live at /v1/announcements.
	Announcement any `json:"announcementDetails,omitempty"`
}

// TaskDetails is a legacy task thread's task.
type TaskDetails struct {
	Type       string `json:"type"`
	Assignees  []any  `json:"assignees"`
	OldValue   string `json:"oldValue,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// ThreadQuery selects feed threads, newest first.
type ThreadQuery struct {
	// LimitPosts is how many of each thread's newest posts the list answers
	// (DefaultListPosts when 0, none when NoPosts, at most MaxListPosts); postsCount
	// tells them all.
	LimitPosts int
	Type       string
	EntityLink string
	TaskStatus string
	StartTs    int64
	EndTs      int64
	Limit      int
	After      string
}

// writer checks that p may write to the feed: authenticated, and not a read-only token.
func writer(p *meridian.Principal) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if p.ReadOnly() {
		return meridian.Errorf(meridian.EForbidden, "Token scope %s does not allow writing to the feed", meridian.ScopeRead)
	}
	return nil
}

// CreateThread starts a conversation, or a legacy task thread, about an entity.
// Errors: EInvalid (announcements, a blank about, a task type outside the four legacy
// kinds, taskDetails on a conversation or missing on a task, a blank message, a bad
// tag value), ENotFound (the entity or an assignee), EForbidden (a task thread without
// CreateTask), EUnauthorized.
func (s *Service) CreateThread(ctx context.Context, p *meridian.Principal, c CreateThread) (meridian.Entity, error) {
	if err := writer(p); err != nil {
		return nil, err
	}
	if c.Type == ThreadAnnouncement || c.Announcement != nil {
		return nil, meridian.Errorf(meridian.EInvalid, AnnouncementsMoved)
	}
	if c.Type == "" {
		c.Type = ThreadConversation
	}
	if strings.TrimSpace(c.About) == "" {
		return nil, meridian.Errorf(meridian.EInvalid, "about must not be blank: name the entity the thread is about with an entity link")
	}
	if err := checkMessage(c.Message); err != nil {
		return nil, err
	}
	link, err := meridian.ParseEntityLink(c.About)
	if err != nil {
		return nil, err
	}
	target, err := s.ents.Get(ctx, p, link.EntityType, store.ByFQN(link.FQN), store.GetOptions{})
	if err != nil {
		return nil, err
	}
	now := s.now().UnixMilli()
	doc := meridian.Entity{"id": uuid.NewString(), "type": c.Type, "about": c.About, "threadTs": float64(now),
		"createdBy": p.Name, "updatedAt": float64(now), "updatedBy": p.Name, "resolved": false, "message": c.Message,
		"postsCount": float64(0), "posts": []any{}, "reactions": []any{},
		"entityRef": map[string]any{"id": target.ID(), "type": link.EntityType, "name": target.Name(), "fullyQualifiedName": target.FQN()}}
	doc["href"] = "/api/v1/feed/" + doc.ID()
	switch c.Type {
	case ThreadConversation:
		if c.TaskDetails != nil {
			return nil, meridian.Errorf(meridian.EInvalid, "taskDetails is only for Task threads")
		}
	case ThreadTask:
		task, err := s.legacyTask(ctx, p, link, c.TaskDetails)
		if err != nil {
			return nil, err
		}
		doc["task"] = task
	default:
		return nil, meridian.Errorf(meridian.EInvalid, "type must be Conversation or Task, not %s", c.Type)
	}
	err = s.ents.InTx(ctx, true, func(tx store.Tx) error {
		var taskID any
		if t, ok := doc["task"].(map[string]any); ok {
			var n int64
			if err := tx.SQL().QueryRow(ctx, `INSERT INTO tasks_sequence (name, value) VALUES ('feedTask', 1)
				ON CONFLICT (name) DO UPDATE SET value = tasks_sequence.value + 1 RETURNING value`).Scan(&n); err != nil {
				return err
			}
			t["id"] = float64(n)
			taskID = n
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		if _, err = tx.SQL().Exec(ctx, `INSERT INTO feed_threads (id, type, about, about_type, about_fqn, about_id, task_id,
			task_status, created_by, created_at, updated_at, version, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, 1, $11)`,
			doc.ID(), c.Type, c.About, link.EntityType, target.FQN(), target.ID(), taskID, taskStatusOf(doc), p.Name, now, string(b)); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, threadEvent(meridian.EventEntityCreated, p, doc, now))
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

func taskStatusOf(doc meridian.Entity) any {
	t, ok := doc["task"].(map[string]any)
	if !ok {
		return nil
	}
	return t["status"]
}

// legacyTask checks a legacy task thread's task and the caller's CreateTask.
func (s *Service) legacyTask(ctx context.Context, p *meridian.Principal, link meridian.EntityLink, d *TaskDetails) (map[string]any, error) {
	if d == nil {
		return nil, meridian.Errorf(meridian.EInvalid, "taskDetails is required for a Task thread")
	}
	if !legacyTaskTypes[d.Type] {
		return nil, meridian.Errorf(meridian.EInvalid, "Task type %q can't be created through the feed: only description (RequestDescription, UpdateDescription), tag (RequestTag, UpdateTag), approval (RequestApproval) and test case failure resolution (RequestTestCaseFailureResolution) tasks are; create other tasks with POST /v1/tasks", d.Type)
	}
	if d.Type == "RequestApproval" && link.Field != "" {
		return nil, meridian.Errorf(meridian.EInvalid, "A RequestApproval task must be about an entity, not a field or column")
	}
	if strings.HasSuffix(d.Type, "Tag") {
		for name, v := range map[string]string{"oldValue": d.OldValue, "suggestion": d.Suggestion} {
			if v == "" {
				continue
			}
			var labels []map[string]any
			if json.Unmarshal([]byte(v), &labels) != nil {
				return nil, meridian.Errorf(meridian.EInvalid, "taskDetails.%s must be a JSON list of tag labels", name)
			}
			for _, l := range labels {
				if fqn, _ := l["tagFQN"].(string); fqn == "" {
					return nil, meridian.Errorf(meridian.EInvalid, "taskDetails.%s: every tag label needs a tagFQN", name)
				}
			}
		}
	}
	if s.policy != nil {
		k, _ := s.ents.Registry().Kind(meridian.KindTask)
		if err := s.policy.Authorize(p, store.Operation(meridian.OpCreateTask), k, nil, nil); err != nil {
			return nil, err
		}
	}
	if len(d.Assignees) == 0 || len(d.Assignees) > MaxAssignees {
		return nil, meridian.Errorf(meridian.EInvalid, "taskDetails.assignees must name 1 to %d users", MaxAssignees)
	}
	var assignees []any
	for i, a := range d.Assignees {
		key, err := assigneeKey(a)
		if err != nil {
			return nil, meridian.Errorf(meridian.EInvalid, "taskDetails.assignees[%d]: %s", i, meridian.ErrorMessage(err))
		}
		u, err := s.ents.Get(ctx, p, meridian.KindUser, key, store.GetOptions{})
		if err != nil {
			return nil, err
		}
		assignees = append(assignees, map[string]any{"id": u.ID(), "type": meridian.KindUser, "name": u.Name(), "fullyQualifiedName": u.FQN()})
	}
	task := map[string]any{"type": d.Type, "assignees": assignees, "status": ThreadTaskOpen}
	if d.OldValue != "" {
		task["oldValue"] = d.OldValue
	}
	if d.Suggestion != "" {
		task["suggestion"] = d.Suggestion
	}
	return task, nil
}

func assigneeKey(a any) (store.Key, error) {
	switch x := a.(type) {
	case string:
		return store.ByFQN(meridian.QuoteName(x)), nil
	case map[string]any:
		if t, _ := x["type"].(string); t != "" && t != meridian.KindUser {
			return store.Key{}, meridian.Errorf(meridian.EInvalid, "an assignee must be a user, not a %s", t)
		}
		if id, _ := x["id"].(string); id != "" {
			return store.ByID(id), nil
		}
		if n, _ := x["name"].(string); n != "" {
			return store.ByFQN(meridian.QuoteName(n)), nil
		}
	}
	return store.Key{}, meridian.Errorf(meridian.EInvalid, "an assignee is a user name or a user reference")
}

// ListThreads answers a page of threads, newest first, with the total matching.
// Errors: EInvalid (announcements, a bad type, link, cursor, limit or window),
// EUnauthorized.
func (s *Service) ListThreads(ctx context.Context, p *meridian.Principal, q ThreadQuery) ([]meridian.Entity, string, int, error) {
	if p == nil {
		return nil, "", 0, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	switch q.Type {
	case "", ThreadConversation, ThreadTask:
	case ThreadAnnouncement:
		return nil, "", 0, meridian.Errorf(meridian.EInvalid, AnnouncementsMoved)
	default:
		return nil, "", 0, meridian.Errorf(meridian.EInvalid, "type must be Conversation or Task, not %s", q.Type)
	}
	if q.Limit == 0 {
		q.Limit = store.DefaultListLimit
	}
	if q.Limit < 1 || q.Limit > MaxThreadPage {
		return nil, "", 0, meridian.Errorf(meridian.EInvalid, "limit must be between 1 and %d", MaxThreadPage)
	}
	switch q.LimitPosts {
	case 0:
		q.LimitPosts = DefaultListPosts
	case NoPosts:
		q.LimitPosts = 0
	}
	if q.LimitPosts < 0 || q.LimitPosts > MaxListPosts {
		return nil, "", 0, meridian.Errorf(meridian.EInvalid, "limitPosts must be between 0 and %d", MaxListPosts)
	}
	if q.StartTs < 0 || q.EndTs < 0 || (q.EndTs > 0 && q.StartTs > q.EndTs) {
		return nil, "", 0, meridian.Errorf(meridian.EInvalid, "startTs must not be after endTs, both epoch milliseconds")
	}
	where := []string{"1 = 1"}
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if q.Type != "" {
		where = append(where, "type = "+arg(q.Type))
	}
	if q.TaskStatus != "" {
		if q.TaskStatus != ThreadTaskOpen && q.TaskStatus != ThreadTaskClosed {
			return nil, "", 0, meridian.Errorf(meridian.EInvalid, "taskStatus must be Open or Closed")
		}
		where = append(where, "task_status = "+arg(q.TaskStatus))
	}
	if q.EntityLink != "" {
		link, err := meridian.ParseEntityLink(q.EntityLink)
		if err != nil {
			return nil, "", 0, err
		}
		fqn, err := meridian.NormalizeFQN(link.FQN)
		if err != nil {
			return nil, "", 0, err
		}
		where = append(where, "about_type = "+arg(link.EntityType), "about_fqn = "+arg(fqn))
	}
	if q.StartTs > 0 {
		where = append(where, "created_at >= "+arg(q.StartTs))
	}
	if q.EndTs > 0 {
		where = append(where, "created_at <= "+arg(q.EndTs))
	}
	cond := strings.Join(where, " AND ")
	page := cond
	if q.After != "" {
		at, id, err := decodeThreadCursor(q.After)
		if err != nil {
			return nil, "", 0, err
		}
		a, b := arg(at), arg(id)
		page += " AND (created_at < " + a + " OR (created_at = " + a + " AND id < " + b + "))"
	}
	var out []meridian.Entity
	var total int
	var after string
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		if err := tx.SQL().QueryRow(ctx, "SELECT COUNT(*) FROM feed_threads WHERE "+cond, args[:countArgs(args, q.After)]...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.SQL().Query(ctx, "SELECT doc, created_at, id FROM feed_threads WHERE "+page+
			" ORDER BY created_at DESC, id DESC LIMIT "+arg(q.Limit+1), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var doc, id string
			var at int64
			if err := rows.Scan(&doc, &at, &id); err != nil {
				return err
			}
			if len(out) == q.Limit {
				last := out[len(out)-1]
				after = encodeThreadCursor(int64(last["threadTs"].(float64)), last.ID())
				break
			}
			var e meridian.Entity
			if err := json.Unmarshal([]byte(doc), &e); err != nil {
				return err
			}
			if posts := listOf(e["posts"]); len(posts) > q.LimitPosts {
				e["posts"] = posts[len(posts)-q.LimitPosts:]
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if out == nil {
		out = []meridian.Entity{}
	}
	return out, after, total, err
}

// countArgs is how many of args the count query uses: all but the cursor's two.
func countArgs(args []any, after string) int {
	if after != "" {
		return len(args) - 2
	}
	return len(args)
}

func encodeThreadCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + "|" + id))
}

func decodeThreadCursor(s string) (int64, string, error) {
	bad := meridian.Errorf(meridian.EInvalid, "Invalid cursor %q", s)
	if len(s) > 256 {
		return 0, "", bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, "", bad
	}
	at, id, ok := strings.Cut(string(b), "|")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", bad
	}
	return n, id, nil
}

// GetThread reads a thread by id. Errors: ENotFound, EUnauthorized.
func (s *Service) GetThread(ctx context.Context, p *meridian.Principal, id string) (meridian.Entity, error) {
	return s.readThread(ctx, p, "id = $1", trimID(id))
}

// GetTaskThread reads a legacy task thread by its task id (a number) or its thread id.
// Errors: ENotFound, EUnauthorized.
func (s *Service) GetTaskThread(ctx context.Context, p *meridian.Principal, taskID string) (meridian.Entity, error) {
	if n, err := strconv.ParseInt(trimID(taskID), 10, 64); err == nil {
		return s.readThread(ctx, p, "task_id = $1", n)
	}
	e, err := s.readThread(ctx, p, "id = $1 AND type = 'Task'", trimID(taskID))
	return e, err
}

func (s *Service) readThread(ctx context.Context, p *meridian.Principal, where string, key any) (meridian.Entity, error) {
	if p == nil {
		return nil, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	var doc string
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		return tx.SQL().QueryRow(ctx, "SELECT doc FROM feed_threads WHERE "+where, key).Scan(&doc)
	})
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil, s.notFound(ctx, key)
	}
	if err != nil {
		return nil, err
	}
	var e meridian.Entity
	return e, json.Unmarshal([]byte(doc), &e)
}

// updateThread reads a thread, lets fn change it and writes it back in one
// transaction, at the version read.
func (s *Service) updateThread(ctx context.Context, p *meridian.Principal, where string, key any, fn func(meridian.Entity) error) (meridian.Entity, error) {
	if err := writer(p); err != nil {
		return nil, err
	}
	var out meridian.Entity
	err := s.ents.InTx(ctx, true, func(tx store.Tx) error {
		var doc, id string
		var version int64
		err := tx.SQL().QueryRow(ctx, "SELECT doc, version, id FROM feed_threads WHERE "+where, key).Scan(&doc, &version, &id)
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return errNoThread
		}
		if err != nil {
			return err
		}
		var e meridian.Entity
		if err := json.Unmarshal([]byte(doc), &e); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
		now := s.now().UnixMilli()
		e["updatedAt"] = float64(now)
		e["updatedBy"] = p.Name
		e["postsCount"] = float64(len(listOf(e["posts"])))
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if len(b) > MaxThreadBytes {
			return meridian.Errorf(meridian.EInvalid, "The thread is full: a thread holds at most %d bytes; start a new one", MaxThreadBytes)
		}
		n, err := tx.SQL().Exec(ctx, `UPDATE feed_threads SET doc = $1, updated_at = $2, version = version + 1, task_status = $3
			WHERE id = $4 AND version = $5`, string(b), now, taskStatusOf(e), id, version)
		if err != nil {
			return err
		}
		if n == 0 {
			return meridian.Errorf(meridian.EConflict, "The thread was changed by another request; retry")
		}
		out = e
		return tx.AppendEvent(ctx, threadEvent(meridian.EventEntityUpdated, p, e, now))
	})
	if err == errNoThread {
		return nil, s.notFound(ctx, key)
	}
	return out, err
}

func listOf(v any) []any { l, _ := v.([]any); return l }

// AddPost adds a post by p to a thread. Errors: EInvalid (blank or long message, a
// full thread), ENotFound, EForbidden (read-only token), EConflict.
func (s *Service) AddPost(ctx context.Context, p *meridian.Principal, id, message string) (meridian.Entity, error) {
	if err := checkMessage(message); err != nil {
		return nil, err
	}
	return s.updateThread(ctx, p, "id = $1", trimID(id), func(e meridian.Entity) error {
		posts := listOf(e["posts"])
		if len(posts) >= MaxPostsPerThread {
			return meridian.Errorf(meridian.EInvalid, "A thread holds at most %d posts", MaxPostsPerThread)
		}
		e["posts"] = append(posts, map[string]any{"id": uuid.NewString(), "message": message, "from": p.Name,
			"postTs": float64(s.now().UnixMilli()), "reactions": []any{}})
		return nil
	})
}

// DeletePost removes a post: its author or an admin. Errors: ENotFound, EForbidden.
func (s *Service) DeletePost(ctx context.Context, p *meridian.Principal, id, postID string) (meridian.Entity, error) {
	return s.updateThread(ctx, p, "id = $1", trimID(id), func(e meridian.Entity) error {
		posts := listOf(e["posts"])
		for i, item := range posts {
			m, _ := item.(map[string]any)
			if m["id"] != postID {
				continue
			}
			if m["from"] != p.Name && !p.IsAdmin() {
				return meridian.Errorf(meridian.EForbidden, "Only the author of a post (or an admin) may delete it")
			}
			e["posts"] = append(posts[:i:i], posts[i+1:]...)
			return nil
		}
		return meridian.Errorf(meridian.ENotFound, "post %s not found in thread %s", postID, e.ID())
	})
}

// React adds (add) or removes p's reaction of a type to a thread, or to one of its
// posts when postID is set. Errors: EInvalid (unknown reaction type, too many),
// ENotFound.
func (s *Service) React(ctx context.Context, p *meridian.Principal, id, postID, reactionType string, add bool) (meridian.Entity, error) {
	if !reactionTypes[reactionType] {
		return nil, meridian.Errorf(meridian.EInvalid, "reactionType must be one of thumbsUp, thumbsDown, hooray, laugh, confused, heart, rocket, eyes")
	}
	return s.updateThread(ctx, p, "id = $1", trimID(id), func(e meridian.Entity) error {
		holder := map[string]any(e)
		if postID != "" {
			holder = nil
			for _, item := range listOf(e["posts"]) {
				if m, _ := item.(map[string]any); m != nil && m["id"] == postID {
					holder = m
				}
			}
			if holder == nil {
				return meridian.Errorf(meridian.ENotFound, "post %s not found in thread %s", postID, e.ID())
			}
		}
		var kept []any
		for _, r := range listOf(holder["reactions"]) {
			m, _ := r.(map[string]any)
			user, _ := m["user"].(map[string]any)
			if m["reactionType"] == reactionType && user["name"] == p.Name {
				continue
			}
			kept = append(kept, r)
		}
		if add {
			if len(kept) >= MaxReactions {
				return meridian.Errorf(meridian.EInvalid, "At most %d reactions", MaxReactions)
			}
			kept = append(kept, map[string]any{"reactionType": reactionType, "user": resolverRef(p)})
		}
		if kept == nil {
			kept = []any{}
		}
		holder["reactions"] = kept
		return nil
	})
}

// DeleteThread removes a thread: its creator or an admin. Errors: ENotFound,
// EForbidden.
func (s *Service) DeleteThread(ctx context.Context, p *meridian.Principal, id string) error {
	if err := writer(p); err != nil {
		return err
	}
	err := s.ents.InTx(ctx, true, func(tx store.Tx) error {
		var by, doc string
		err := tx.SQL().QueryRow(ctx, "SELECT created_by, doc FROM feed_threads WHERE id = $1", trimID(id)).Scan(&by, &doc)
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return errNoThread
		}
		if err != nil {
			return err
		}
		if by != p.Name && !p.IsAdmin() {
			return meridian.Errorf(meridian.EForbidden, "Only the creator of a thread (or an admin) may delete it")
		}
		if _, err = tx.SQL().Exec(ctx, "DELETE FROM feed_threads WHERE id = $1", trimID(id)); err != nil {
			return err
		}
		var e meridian.Entity
		if err := json.Unmarshal([]byte(doc), &e); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, threadEvent(meridian.EventEntityDeleted, p, e, s.now().UnixMilli()))
	})
	if err == errNoThread {
		return s.notFound(ctx, trimID(id))
	}
	return err
}

// errNoThread is what a transaction returns for a thread that is not there; the caller
// answers notFound once the transaction is over.
var errNoThread = meridian.Errorf(meridian.ENotFound, "thread not found")

// notFound is the answer for a thread id the feed does not hold: 400 when the id is an
// entity of a kind that left the feed (an announcement), else 404.
func (s *Service) notFound(ctx context.Context, key any) error {
	if id, ok := key.(string); ok {
		for _, k := range s.ents.Registry().Kinds() {
			if !k.LeftTheFeed {
				continue
			}
			if _, err := s.ents.Get(ctx, meridian.System, k.Name, store.ByID(id), store.GetOptions{Include: store.IncludeAll}); err == nil {
				return meridian.Errorf(meridian.EInvalid, AnnouncementsMoved)
			}
		}
	}
	return meridian.Errorf(meridian.ENotFound, "thread %v not found", key)
}

// ThreadEntityType is the entityType of the change events of feed threads.
const ThreadEntityType = "thread"

// threadEvent is the outbox event of a thread write, in the write's transaction: its
// entityFullyQualifiedName is the FQN of the entity the thread is about (alert filters
// match a thread on it), and a task thread's creation and changes are taskCreated and
// taskUpdated.
func threadEvent(typ string, p *meridian.Principal, doc meridian.Entity, at int64) meridian.ChangeEvent {
	if _, task := doc["task"]; task {
		switch typ {
		case meridian.EventEntityCreated:
			typ = meridian.EventTaskCreated
		case meridian.EventEntityUpdated:
			typ = meridian.EventTaskUpdated
		}
	}
	ref, _ := doc["entityRef"].(map[string]any)
	fqn, _ := ref["fullyQualifiedName"].(string)
	return meridian.ChangeEvent{ID: uuid.NewString(), EventType: typ, EntityType: ThreadEntityType, EntityID: doc.ID(),
		EntityFQN: fqn, UserName: p.Name, Timestamp: at, Entity: doc}
}
