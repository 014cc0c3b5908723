package activity

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

// List bounds.
const (
	DefaultLimit = 50
	MaxLimit     = 500
	maxFilter    = 512
)

// userKind is the kind a user id is looked up in.
const userKind = "user"

// Query selects events. Empty fields filter nothing.
type Query struct {
	EntityType string
	EntityID   string
	UserName   string
	Domain     string
	EventType  string
	// Start and End bound the timestamp (epoch ms, inclusive); 0 is unbounded.
	Start, End int64
	// Limit is the page size (DefaultLimit when 0); After the previous page's cursor.
	Limit int
	After string
}

// Page is one page of events, newest first. Total counts every event the query
// selects.
type Page struct {
	Data  []Event
	Total int
	After string
}

func (q *Query) check() error {
	if err := collab.CheckFilters(maxFilter, map[string]string{"entityType": q.EntityType, "entityId": q.EntityID, "userName": q.UserName,
		"domain": q.Domain, "eventType": q.EventType}); err != nil {
		return err
	}
	if q.Start < 0 || q.End < 0 || (q.End > 0 && q.Start > q.End) {
		return meridian.Errorf(meridian.EInvalid, "startTs and endTs must be epoch milliseconds with startTs not after endTs")
	}
	var ok bool
	if q.Limit, ok = collab.PageLimit(q.Limit, DefaultLimit, MaxLimit); !ok {
		return meridian.Errorf(meridian.EInvalid, "limit must be between 1 and %d", MaxLimit)
	}
	return nil
}

// where is q's WHERE clause and arguments (bound parameters only), with the cursor's
// position when c is set.
func (q Query) where(c *collab.Cursor) (string, []any) {
	var w collab.Where
	w.AddIfSet("entity_type = ?", q.EntityType)
	if q.EntityID != "" {
		w.Add("entity_id = ?", strings.ToLower(q.EntityID))
	}
	w.AddIfSet("user_name = ?", q.UserName)
	w.AddIfSet("domain = ?", q.Domain)
	w.AddIfSet("event_type = ?", q.EventType)
	w.AddWindow(q.Start, q.End)
	w.AddAfter(c)
	return w.String(), w.Args
}

// List returns one page of the events q selects, newest first. Every authenticated
// principal reads the stream, as every principal may view every entity under the role
// policy. Errors: EUnauthorized, EInvalid (a filter, the limit, the cursor).
func (s *Service) List(ctx context.Context, p *meridian.Principal, q Query) (Page, error) {
	if p == nil {
		return Page{}, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if err := q.check(); err != nil {
		return Page{}, err
	}
	var c *collab.Cursor
	if q.After != "" {
		cur, err := parseCursor(q.After)
		if err != nil {
			return Page{}, err
		}
		c = &cur
	}
	page := Page{Data: []Event{}}
	err := store.InModuleTx(ctx, s.db, false, func(db store.SQL) error {
		where, args := q.where(nil)
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM activity_events"+where, args...).Scan(&page.Total); err != nil {
			return err
		}
		where, args = q.where(c)
		args = append(args, q.Limit+1)
		rows, err := db.Query(ctx, "SELECT id, ts, doc FROM activity_events"+where+" ORDER BY ts DESC, id DESC LIMIT $"+
			strconv.Itoa(len(args)), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, doc string
			var ts int64
			if err := rows.Scan(&id, &ts, &doc); err != nil {
				return err
			}
			if len(page.Data) == q.Limit {
				last := page.Data[len(page.Data)-1]
				page.After = collab.Cursor{TS: last.Timestamp, ID: last.ID}.String()
				break
			}
			var e Event
			if err := json.Unmarshal([]byte(doc), &e); err != nil {
				return err
			}
			page.Data = append(page.Data, e)
		}
		return rows.Err()
	})
	return page, err
}

// Count counts the events q selects (its Limit and After are ignored). Errors: those
// of List.
func (s *Service) Count(ctx context.Context, p *meridian.Principal, q Query) (int, error) {
	q.Limit, q.After = 1, ""
	page, err := s.List(ctx, p, q)
	return page.Total, err
}

// EntityActivity lists the events of one entity, named by kind and id or FQN; the
// entity must exist (soft-deleted counts) and p must be allowed to view it. Errors:
// those of List, ENotFound, EForbidden, EInvalid (unknown kind).
func (s *Service) EntityActivity(ctx context.Context, p *meridian.Principal, kind string, key store.Key, q Query) (Page, error) {
	var id string
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		row, _, err := s.ents.Load(ctx, tx, p, store.OpView, kind, key, store.IncludeAll)
		id = row.ID
		return err
	})
	if err != nil {
		return Page{}, err
	}
	q.EntityType, q.EntityID = kind, id
	return s.List(ctx, p, q)
}

// UserActivity lists the events a user made, named by user name or by user id (which
// must exist). Errors: those of List, ENotFound (no user with that id).
func (s *Service) UserActivity(ctx context.Context, p *meridian.Principal, user string, q Query) (Page, error) {
	if _, err := uuid.Parse(user); err == nil {
		err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
			row, _, err := s.ents.Load(ctx, tx, p, store.OpView, userKind, store.ByID(user), store.IncludeAll)
			user = row.Name
			return err
		})
		if err != nil {
			return Page{}, err
		}
	}
	q.UserName = user
	return s.List(ctx, p, q)
}

// parseCursor reads an after cursor; its timestamp is not negative. Errors: EInvalid.
func parseCursor(s string) (collab.Cursor, error) {
	c, ok := collab.ParseCursor(s)
	if !ok || c.TS < 0 {
		return collab.Cursor{}, meridian.Errorf(meridian.EInvalid, "Invalid cursor")
	}
	return c, nil
}
