package audit

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
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
	return inTx(ctx, s.db, false, func(db store.SQL) error {
		var one int
		return db.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
}

func (s *Service) insertBatch(ctx context.Context, entries []Entry) error {
	return inTx(ctx, s.db, true, func(db store.SQL) error { return insert(ctx, db, entries...) })
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
	for name, v := range map[string]string{"q": q.Text, "userName": q.UserName, "entityType": q.EntityType} {
		if len(v) > MaxQuery {
			return meridian.Errorf(meridian.EInvalid, "%s is longer than %d bytes", name, MaxQuery)
		}
		if strings.ContainsRune(v, 0) || !utf8.ValidString(v) {
			return meridian.Errorf(meridian.EInvalid, "%s must be valid UTF-8 without NUL characters", name)
		}
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
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return meridian.Errorf(meridian.EInvalid, "limit must be between 0 and %d", MaxLimit)
	}
	return nil
}

// where is q's WHERE clause and arguments, with the cursor's position when c is set.
// Every value is a bound parameter.
func (q Query) where(c *cursor) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		conds = append(conds, cond)
	}
	if q.Text != "" {
		add(`search LIKE ? ESCAPE '\'`, "%"+likeEscape(strings.ToLower(q.Text))+"%")
	}
	if q.UserName != "" {
		add("user_name = ?", q.UserName)
	}
	if q.EntityType != "" {
		add("entity_type = ?", q.EntityType)
	}
	if q.Kind != "" {
		add("kind = ?", q.Kind)
	}
	if q.Source != "" {
		add("source = ?", q.Source)
	}
	if q.Start > 0 {
		add("ts >= ?", q.Start)
	}
	if q.End > 0 {
		add("ts <= ?", q.End)
	}
	if c != nil {
		add("(ts < ? OR (ts = ? AND id < ?))", c.ts, c.ts, c.id)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
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
	var c *cursor
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
		page.After = cursor{ts: last.Timestamp, id: last.ID}.String()
	}
	return page, nil
}

// page reads up to limit entries of q after c, newest first, in one read transaction.
func (s *Service) page(ctx context.Context, q Query, c *cursor, limit int) ([]Entry, error) {
	where, args := q.where(c)
	args = append(args, limit)
	out := []Entry{}
	err := inTx(ctx, s.db, false, func(db store.SQL) error {
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

// cursor is the position after the last entry of a page.
type cursor struct {
	ts int64
	id string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.ts, 10) + ":" + c.id))
}

// parseCursor reads an after cursor. Errors: EInvalid.
func parseCursor(s string) (cursor, error) {
	bad := meridian.Errorf(meridian.EInvalid, "Invalid cursor %q", cut(s, 64))
	if len(s) > 128 {
		return cursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, bad
	}
	tsPart, id, ok := strings.Cut(string(b), ":")
	if !ok {
		return cursor{}, bad
	}
	ts, err := strconv.ParseInt(tsPart, 10, 64)
	if err != nil || ts < 0 {
		return cursor{}, bad
	}
	if _, err := uuid.Parse(id); err != nil {
		return cursor{}, bad
	}
	return cursor{ts: ts, id: id}, nil
}

// String describes q for logs.
func (q Query) String() string {
	return fmt.Sprintf("q=%q user=%q entityType=%q kind=%q source=%q start=%d end=%d", q.Text, q.UserName, q.EntityType,
		q.Kind, q.Source, q.Start, q.End)
}
