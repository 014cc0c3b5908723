package tasks

import (
	"context"
	"encoding/json"
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
