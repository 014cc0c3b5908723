package tasks

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// AddComment appends a comment by p to a task (a new version of it): a comment is an
// edit of the task, so it needs EditTask (the creator, an assignee, a data steward or an
// admin). Errors:
// EInvalid (blank or too long message), ENotFound, EForbidden.
func (s *Service) AddComment(ctx context.Context, p *meridian.Principal, id, message string) (meridian.Entity, error) {
	if err := checkMessage(message); err != nil {
		return nil, err
	}
	task, err := s.ents.Get(ctx, p, meridian.KindTask, store.ByID(id), store.GetOptions{})
	if err != nil {
		return nil, err
	}
	now := float64(s.now().UnixMilli())
	c := map[string]any{"id": uuid.NewString(), "message": message, "author": resolverRef(p), "postedAt": now}
	res, err := s.ents.Edit(ctx, p, meridian.KindTask, store.ByID(task.ID()), "", func(e meridian.Entity) (meridian.Entity, error) {
		list, _ := e["comments"].([]any)
		e["comments"] = append(list, c)
		return e, nil
	})
	return res.Entity, err
}

// EditComment changes the message of p's own comment (admins may change any). Errors:
// EInvalid, ENotFound (task or comment), EForbidden.
func (s *Service) EditComment(ctx context.Context, p *meridian.Principal, id, commentID, message string) (meridian.Entity, error) {
	if err := checkMessage(message); err != nil {
		return nil, err
	}
	return s.changeComment(ctx, p, id, commentID, func(list []any, i int) []any {
		c, _ := list[i].(map[string]any)
		c["message"] = message
		c["updatedAt"] = float64(s.now().UnixMilli())
		return list
	})
}

// DeleteComment removes p's own comment (admins may remove any). Errors: as
// EditComment.
func (s *Service) DeleteComment(ctx context.Context, p *meridian.Principal, id, commentID string) (meridian.Entity, error) {
	return s.changeComment(ctx, p, id, commentID, func(list []any, i int) []any {
		return append(list[:i:i], list[i+1:]...)
	})
}

func (s *Service) changeComment(ctx context.Context, p *meridian.Principal, id, commentID string, fn func([]any, int) []any) (meridian.Entity, error) {
	res, err := s.ents.Edit(ctx, p, meridian.KindTask, store.ByID(id), "", func(e meridian.Entity) (meridian.Entity, error) {
		list, _ := e["comments"].([]any)
		for i, item := range list {
			c, _ := item.(map[string]any)
			if c["id"] != commentID {
				continue
			}
			author, _ := c["author"].(map[string]any)
			mine := p != nil && ((p.ID != "" && author["id"] == p.ID) || author["name"] == p.Name)
			if !mine && !p.IsAdmin() {
				return nil, meridian.Errorf(meridian.EForbidden, "Only the author of a comment (or an admin) may change it")
			}
			e["comments"] = fn(list, i)
			return e, nil
		}
		return nil, meridian.Errorf(meridian.ENotFound, "Comment %s not found in task %s", commentID, e.Name())
	})
	return res.Entity, err
}

func checkMessage(m string) error {
	if strings.TrimSpace(m) == "" {
		return meridian.Errorf(meridian.EInvalid, "message must not be blank")
	}
	if len(m) > MaxCommentBytes {
		return meridian.Errorf(meridian.EInvalid, "message is longer than %d bytes", MaxCommentBytes)
	}
	return nil
}
