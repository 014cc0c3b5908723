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
