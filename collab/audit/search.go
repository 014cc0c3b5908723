package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

// Bounds of a search.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
	// MaxQuery bounds the text filter and the other filter values, in bytes.
	MaxQuery = 256
)

// Service reads the audit log. It is safe for concurrent use.
type Service struct{ db store.Driver }

// New returns the service over a driver opened with Module.
func New(db store.Driver) *Service { return &Service{db: db} }

// ping reports whether the database answers.
func (s *Service) ping(ctx context.Context) error {
	return store.InModuleTx(ctx, s.db, false, func(db store.SQL) error {
		var one int
		return db.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
}

func (s *Service) insertBatch(ctx context.Context, entries []Entry) error {
	return store.InModuleTx(ctx, s.db, true, func(db store.SQL) error { return insert(ctx, db, entries...) })
}

// Query filters the audit log. Empty fields filter nothing.
type Query struct {
	// Text matches, case-insensitively, anywhere in the user, method, path or tool,
	// entity type, id and FQN, event type, message, remote address, request id, kind
	// and outcome.
	Text string
	// UserName is the exact user (or bot) name.
	UserName string
	// EntityType is the exact entity type.
	EntityType string
	// Kind is write, authFailure or change; Source rest, mcp or event.
	Kind, Source string
	// Start and End bound the timestamp (epoch ms, inclusive); 0 is unbounded.
	Start, End int64
	// Limit is the page size (DefaultLimit when 0); After the previous page's cursor.
	Limit int
	After string
}

// Page is one page of entries, newest first.
type Page struct {
	Data  []Entry
	After string
}

// check validates q. Errors: EInvalid.
func (q *Query) check() error {
	if err := collab.CheckFilters(MaxQuery, map[string]string{"q": q.Text, "userName": q.UserName, "entityType": q.EntityType}); err != nil {
		return err
	}
	switch q.Kind {
	case "", KindWrite, KindAuthFailure, KindChange:
	default:
		return meridian.Errorf(meridian.EInvalid, "kind must be one of [%s, %s, %s]", KindWrite, KindAuthFailure, KindChange)
	}
	switch q.Source {
	case "", SourceREST, SourceMCP, SourceEvent:
	default:
		return meridian.Errorf(meridian.EInvalid, "source must be one of [%s, %s, %s]", SourceREST, SourceMCP, SourceEvent)
	}
	if q.Start < 0 || q.End < 0 {
		return meridian.Errorf(meridian.EInvalid, "startTs and endTs are epoch milliseconds")
	}
	if q.End > 0 && q.Start > q.End {
		return meridian.Errorf(meridian.EInvalid, "startTs %d is after endTs %d", q.Start, q.End)
	}
	var ok bool
	if q.Limit, ok = collab.PageLimit(q.Limit, DefaultLimit, MaxLimit); !ok {
		return meridian.Errorf(meridian.EInvalid, "limit must be between 0 and %d", MaxLimit)
	}
	return nil
}

// where is q's WHERE clause and arguments, with the cursor's position when c is set.
// Every value is a bound parameter.
func (q Query) where(c *collab.Cursor) (string, []any) {
	var w collab.Where
	if q.Text != "" {
		w.Add(`search LIKE ? ESCAPE '\'`, "%"+likeEscape(strings.ToLower(q.Text))+"%")
	}
	w.AddIfSet("user_name = ?", q.UserName)
	w.AddIfSet("entity_type = ?", q.EntityType)
	w.AddIfSet("kind = ?", q.Kind)
	w.AddIfSet("source = ?", q.Source)
	w.AddWindow(q.Start, q.End)
	w.AddAfter(c)
	return w.String(), w.Args
}

// likeEscape escapes LIKE's wildcards and its escape character.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// requireAdmin refuses everyone but admins.
func requireAdmin(p *meridian.Principal) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [ViewAuditLogs] not allowed", p.Name)
	}
	return nil
}

// Search returns one page of the entries q selects, newest first. Only admins read the
// audit log. Errors: EUnauthorized, EForbidden, EInvalid (a filter or the cursor).
func (s *Service) Search(ctx context.Context, p *meridian.Principal, q Query) (Page, error) {
	if err := requireAdmin(p); err != nil {
		return Page{}, err
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
	data, err := s.page(ctx, q, c, q.Limit+1)
	if err != nil {
		return Page{}, err
	}
	page := Page{Data: data}
	if len(data) > q.Limit {
		page.Data = data[:q.Limit]
		last := page.Data[q.Limit-1]
		page.After = collab.Cursor{TS: last.Timestamp, ID: last.ID}.String()
	}
	return page, nil
}

// page reads up to limit entries of q after c, newest first, in one read transaction.
func (s *Service) page(ctx context.Context, q Query, c *collab.Cursor, limit int) ([]Entry, error) {
	where, args := q.where(c)
	args = append(args, limit)
	out := []Entry{}
	err := store.InModuleTx(ctx, s.db, false, func(db store.SQL) error {
		rows, err := db.Query(ctx, "SELECT "+entryColumns+" FROM audit_log"+where+
			" ORDER BY ts DESC, id DESC LIMIT $"+strconv.Itoa(len(args)), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanEntry(rows)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

// parseCursor reads an after cursor; its timestamp is not negative. Errors: EInvalid.
func parseCursor(s string) (collab.Cursor, error) {
	c, ok := collab.ParseCursor(s)
	if !ok || c.TS < 0 {
		return collab.Cursor{}, meridian.Errorf(meridian.EInvalid, "Invalid cursor %q", cut(s, 64))
	}
	return c, nil
}

// String describes q for logs.
func (q Query) String() string {
	return fmt.Sprintf("q=%q user=%q entityType=%q kind=%q source=%q start=%d end=%d", q.Text, q.UserName, q.EntityType,
		q.Kind, q.Source, q.Start, q.End)
}
