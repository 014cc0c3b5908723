package tasks

import (
	"context"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
)

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
