// Package executions keeps the runtime records of MCP servers and AI agents
// (/api/v1/mcpExecutions and /api/v1/agentExecutions) as time series in a table the
// module owns (Module), on both drivers.
//
// A record is a JSON document validated by its record schema (schema/records): the MCP
// execution names its server (an entity reference of kind mcpServer, and serverId), the
// agent execution its agent (kind aiApplication, and agentId); both carry timestamp and
// status. The referenced entity must exist when a record is created.
//
// Authorization follows the entity the record belongs to, through the role policy:
// reading needs View on it, creating needs Edit (an admin, a data steward, the
// entity's owners, or a bot with such a role), a soft delete needs Delete, and a hard
// delete (by id with hardDelete=true, or by parent and timestamp) needs HardDelete.
package executions

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

var migrations, _ = fs.Sub(migrationFiles, "migrations")

// Module is the store module that owns the executions table. A hard-deleted server or
// agent takes its records with it.
func Module() store.Module {
	return store.Module{
		Name:       "executions",
		Migrations: migrations,
		OnRemove: func(ctx context.Context, db store.SQL, entityID string) error {
			_, err := db.Exec(ctx, "DELETE FROM executions WHERE parent_id = $1", entityID)
			return err
		},
	}
}

// Series describes one family of records.
type Series struct {
	// Name is the record schema's name and the series stored: mcpExecution or
	// agentExecution.
	Name string
	// RefField and IDField are the reference and the id of the entity the record
	// belongs to: server and serverId, or agent and agentId.
	RefField, IDField string
	// Kind is the kind of that entity.
	Kind string
}

// The two series of the specification.
var (
	MCP   = Series{Name: "mcpExecution", RefField: "server", IDField: "serverId", Kind: "mcpServer"}
	Agent = Series{Name: "agentExecution", RefField: "agent", IDField: "agentId", Kind: "aiApplication"}
)

// Bounds of the records and their lists.
const (
	// MaxRecordBytes bounds the JSON of one record.
	MaxRecordBytes = 1 << 20
	// DefaultLimit and MaxLimit bound a list page.
	DefaultLimit = 10
	MaxLimit     = 1000
	// maxPageBytes bounds the documents of one page: a page stops early (with a cursor)
	// once it holds this many bytes.
	maxPageBytes = 8 << 20
)

// Service creates, reads and deletes execution records. It is safe for concurrent use.
type Service struct {
	ents    *store.Entities
	records *schema.Validator
}

// New returns the service over an engine whose driver was opened with Module.
func New(ents *store.Entities) (*Service, error) {
	v, err := schema.NewRecords()
	if err != nil {
		return nil, err
	}
	return &Service{ents: ents, records: v}, nil
}

// prepared is a checked record ready to store.
type prepared struct {
	id       string
	parentID string
	ts       int64
	status   string
	doc      meridian.Entity
}

// check validates a record of series sr and fills its id and durationMs. Errors:
// EInvalid.
func (s *Service) check(sr Series, in meridian.Entity) (prepared, error) {
	if in == nil {
		return prepared{}, meridian.Errorf(meridian.EInvalid, "Invalid request format: the body must be a JSON object")
	}
	doc := in.Clone()
	delete(doc, "deleted")
	if err := s.records.Validate(sr.Name, doc); err != nil {
		return prepared{}, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return prepared{}, meridian.Errorf(meridian.EInvalid, "Invalid %s document", sr.Name)
	}
	if hasNUL(map[string]any(doc)) {
		return prepared{}, meridian.Errorf(meridian.EInvalid, "The %s document must not contain NUL characters", sr.Name)
	}
	if len(b) > MaxRecordBytes {
		return prepared{}, meridian.Errorf(meridian.EInvalid, "The %s document is larger than %d bytes", sr.Name, MaxRecordBytes)
	}
	p := prepared{doc: doc}
	p.parentID = strings.ToLower(doc.String(sr.IDField))
	ref, _ := doc[sr.RefField].(map[string]any)
	if id, _ := ref["id"].(string); id != "" && !strings.EqualFold(id, p.parentID) {
		return prepared{}, meridian.Errorf(meridian.EInvalid, "%s.id %s does not match %s %s", sr.RefField, id, sr.IDField, p.parentID)
	}
	p.ts, _ = integer(doc["timestamp"])
	p.status = doc.String("status")
	if end, ok := integer(doc["endTimestamp"]); ok {
		if end < p.ts {
			return prepared{}, meridian.Errorf(meridian.EInvalid, "endTimestamp %d is before timestamp %d", end, p.ts)
		}
		if d, has := doc["durationMs"]; !has || d == nil {
			doc["durationMs"] = end - p.ts
		}
	}
	p.id = strings.ToLower(doc.String("id"))
	if p.id == "" {
		p.id = uuid.NewString()
	}
	doc["id"] = p.id
	doc[sr.IDField] = p.parentID
	doc["deleted"] = false
	return p, nil
}

// hasNUL reports whether a key or a string anywhere in v holds a NUL character, which
// PostgreSQL's jsonb cannot store.
func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case map[string]any:
		for k, x := range v {
			if strings.ContainsRune(k, 0) || hasNUL(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasNUL(x) {
				return true
			}
		}
	}
	return false
}

// integer reads a whole JSON number, as decoded (float64) or built in Go.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// Create stores a record of series sr for principal p and returns it with its id, the
// full reference of its server or agent, and durationMs when both ends are known.
// Errors: EInvalid (schema, mismatched ids, size), ENotFound (no such server or agent),
// EForbidden (no Edit on it), EConflict (the id, or the parent and timestamp, is taken).
func (s *Service) Create(ctx context.Context, p *meridian.Principal, sr Series, in meridian.Entity) (meridian.Entity, error) {
	out, err := s.CreateMany(ctx, p, sr, []meridian.Entity{in})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// CreateMany stores records of series sr in one transaction, all or none: the bulk
// path for ingestion and the benchmark. Errors: those of Create.
func (s *Service) CreateMany(ctx context.Context, p *meridian.Principal, sr Series, in []meridian.Entity) ([]meridian.Entity, error) {
	recs := make([]prepared, 0, len(in))
	for _, d := range in {
		r, err := s.check(sr, d)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	out := make([]meridian.Entity, 0, len(recs))
	err := s.ents.InTx(ctx, true, func(tx store.Tx) error {
		refs := map[string]map[string]any{}
		for _, r := range recs {
			ref, ok := refs[r.parentID]
			if !ok {
				row, _, err := s.ents.Load(ctx, tx, p, store.OpEdit, sr.Kind, store.ByID(r.parentID), store.IncludeNonDeleted)
				if err != nil {
					return err
				}
				ref = map[string]any{"id": row.ID, "type": sr.Kind, "name": row.Name, "fullyQualifiedName": row.FQN}
				refs[r.parentID] = ref
			}
			r.doc[sr.RefField] = ref
			b, err := json.Marshal(r.doc)
			if err != nil {
				return err
			}
			_, err = tx.SQL().Exec(ctx, `INSERT INTO executions (id, series, parent_id, ts, status, deleted, doc)
VALUES ($1, $2, $3, $4, $5, 0, $6)`, r.id, sr.Name, r.parentID, r.ts, r.status, string(b))
			if meridian.ErrorCode(err) == meridian.EConflict {
				return meridian.Errorf(meridian.EConflict, "A %s with id %s, or of %s %s at timestamp %d, already exists",
					sr.Name, r.id, sr.Kind, r.parentID, r.ts)
			}
			if err != nil {
				return err
			}
			out = append(out, r.doc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// record is one stored row.
type record struct {
	id, parentID string
	ts           int64
	deleted      bool
	doc          []byte
}

func scanRecord(sc store.Scanner) (record, error) {
	var r record
	var deleted int64
	var doc string
	err := sc.Scan(&r.id, &r.parentID, &r.ts, &deleted, &doc)
	r.deleted = deleted != 0
	r.doc = []byte(doc)
	return r, err
}

const recordColumns = "id, parent_id, ts, deleted, doc"

func (r record) entity() (meridian.Entity, error) {
	var e meridian.Entity
	if err := json.Unmarshal(r.doc, &e); err != nil {
		return nil, err
	}
	e["deleted"] = r.deleted
	return e, nil
}

// readRecord reads a record of sr by id in tx. Errors: ENotFound.
func readRecord(ctx context.Context, tx store.Tx, sr Series, id string) (record, error) {
	r, err := scanRecord(tx.SQL().QueryRow(ctx, "SELECT "+recordColumns+" FROM executions WHERE id = $1 AND series = $2",
		strings.ToLower(id), sr.Name))
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return r, meridian.Errorf(meridian.ENotFound, "%s instance for %s not found", sr.Name, id)
	}
	return r, err
}

// Get returns the record of series sr with id. A soft-deleted record is found only
// when include says so. Errors: ENotFound, EForbidden (no View on its server or agent).
func (s *Service) Get(ctx context.Context, p *meridian.Principal, sr Series, id string, include store.Include) (meridian.Entity, error) {
	var out meridian.Entity
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		r, err := readRecord(ctx, tx, sr, id)
		if err != nil {
			return err
		}
		if !included(r.deleted, include) {
			return meridian.Errorf(meridian.ENotFound, "%s instance for %s not found", sr.Name, id)
		}
		if _, _, err := s.ents.Load(ctx, tx, p, store.OpView, sr.Kind, store.ByID(r.parentID), store.IncludeAll); err != nil {
			return err
		}
		out, err = r.entity()
		return err
	})
	return out, err
}

func included(deleted bool, inc store.Include) bool {
	switch inc {
	case store.IncludeAll:
		return true
	case store.IncludeDeleted:
		return deleted
	}
	return !deleted
}

// ListQuery selects records of one series.
type ListQuery struct {
	// ParentID is the server or agent; empty lists every one, which only admins may.
	ParentID string
	// Start and End bound the timestamp (inclusive); HasStart and HasEnd say whether
	// they were given. They come together or not at all.
	Start, End       int64
	HasStart, HasEnd bool
	// Limit is the page size, DefaultLimit when 0.
	Limit int
	// After is the cursor of the previous page.
	After   string
	Include store.Include
}

// Page is one page of records, newest first, each the stored JSON document (its
// deleted flag kept current by Delete), passed on without being decoded.
type Page struct {
	Data  []json.RawMessage
	Total int
	After string
}

// CheckWindow applies the time-window rule: startTs and endTs come together, and
// startTs is not after endTs. Errors: EInvalid naming the missing one.
func CheckWindow(hasStart, hasEnd bool, start, end int64) error {
	switch {
	case hasStart && !hasEnd:
		return meridian.Errorf(meridian.EInvalid, "startTs and endTs must be supplied together: endTs is missing")
	case hasEnd && !hasStart:
		return meridian.Errorf(meridian.EInvalid, "startTs and endTs must be supplied together: startTs is missing")
	case hasStart && start > end:
		return meridian.Errorf(meridian.EInvalid, "startTs %d is after endTs %d", start, end)
	}
	return nil
}

// List returns one page of records of series sr, newest first. Errors: EInvalid
// (window rule, limit, cursor), ENotFound (no such server or agent), EForbidden (no
// View on it, or no parent given by a non-admin).
func (s *Service) List(ctx context.Context, p *meridian.Principal, sr Series, q ListQuery) (Page, error) {
	if err := CheckWindow(q.HasStart, q.HasEnd, q.Start, q.End); err != nil {
		return Page{}, err
	}
	var ok bool
	if q.Limit, ok = collab.PageLimit(q.Limit, DefaultLimit, MaxLimit); !ok {
		return Page{}, meridian.Errorf(meridian.EInvalid, "limit must be between 0 and %d", MaxLimit)
	}
	var cur collab.Cursor
	if q.After != "" {
		var err error
		if cur, err = parseCursor(q.After); err != nil {
			return Page{}, err
		}
	}
	if q.ParentID != "" {
		if _, err := uuid.Parse(q.ParentID); err != nil {
			return Page{}, meridian.Errorf(meridian.EInvalid, "%s %s must be a UUID", sr.IDField, q.ParentID)
		}
		q.ParentID = strings.ToLower(q.ParentID)
	}
	var page Page
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		if q.ParentID == "" {
			if !p.IsAdmin() {
				return meridian.Errorf(meridian.EForbidden, "%s is required: only admins list the records of every %s", sr.IDField, sr.Kind)
			}
		} else if _, _, err := s.ents.Load(ctx, tx, p, store.OpView, sr.Kind, store.ByID(q.ParentID), store.IncludeAll); err != nil {
			return err
		}
		w := filter(sr, q)
		if err := tx.SQL().QueryRow(ctx, "SELECT COUNT(*) FROM executions"+w.String(), w.Args...).Scan(&page.Total); err != nil {
			return err
		}
		if q.After != "" {
			w.AddAfter(&cur)
		}
		args := append(w.Args, q.Limit+1)
		rows, err := tx.SQL().Query(ctx, "SELECT "+recordColumns+" FROM executions"+w.String()+
			" ORDER BY ts DESC, id DESC LIMIT $"+strconv.Itoa(len(args)), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page.Data = []json.RawMessage{}
		size := 0
		var last record
		for rows.Next() {
			r, err := scanRecord(rows)
			if err != nil {
				return err
			}
			if len(page.Data) == q.Limit || (len(page.Data) > 0 && size+len(r.doc) > maxPageBytes) {
				page.After = collab.Cursor{TS: last.ts, ID: last.id}.String()
				break
			}
			page.Data = append(page.Data, json.RawMessage(r.doc))
			size += len(r.doc)
			last = r
		}
		return rows.Err()
	})
	return page, err
}

// filter is the WHERE clause of q: bound parameters only.
func filter(sr Series, q ListQuery) *collab.Where {
	w := &collab.Where{}
	w.Add("series = ?", sr.Name)
	if q.ParentID != "" {
		w.Add("parent_id = ?", q.ParentID)
	}
	if q.HasStart {
		w.Add("ts >= ? AND ts <= ?", q.Start, q.End)
	}
	switch q.Include {
	case store.IncludeAll:
	case store.IncludeDeleted:
		w.Add("deleted = 1")
	default:
		w.Add("deleted = 0")
	}
	return w
}

// parseCursor reads an after cursor, its id in lower case. Errors: EInvalid.
func parseCursor(s string) (collab.Cursor, error) {
	c, ok := collab.ParseCursor(s)
	if !ok {
		return collab.Cursor{}, meridian.Errorf(meridian.EInvalid, "Invalid cursor %q", truncate(s, 64))
	}
	c.ID = strings.ToLower(c.ID)
	return c, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Delete removes the record of series sr with id: a soft delete marks it deleted and
// returns it; a hard delete removes it for good. Errors: ENotFound (no such record, or
// already soft-deleted for a soft delete), EForbidden (no Delete, or HardDelete, on its
// server or agent).
func (s *Service) Delete(ctx context.Context, p *meridian.Principal, sr Series, id string, hard bool) (meridian.Entity, error) {
	var out meridian.Entity
	err := s.ents.InTx(ctx, true, func(tx store.Tx) error {
		r, err := readRecord(ctx, tx, sr, id)
		if err != nil {
			return err
		}
		op := store.OpDelete
		if hard {
			op = store.OpHardDelete
		} else if r.deleted {
			return meridian.Errorf(meridian.ENotFound, "%s instance for %s not found", sr.Name, id)
		}
		if _, _, err := s.ents.Load(ctx, tx, p, op, sr.Kind, store.ByID(r.parentID), store.IncludeAll); err != nil {
			return err
		}
		if out, err = r.entity(); err != nil {
			return err
		}
		if hard {
			_, err = tx.SQL().Exec(ctx, "DELETE FROM executions WHERE id = $1", r.id)
			return err
		}
		out["deleted"] = true
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = tx.SQL().Exec(ctx, "UPDATE executions SET deleted = 1, doc = $2 WHERE id = $1", r.id, string(b))
		return err
	})
	return out, err
}

// DeleteAt removes for good the record of series sr that the server or agent parentID
// has at timestamp ts. Errors: EInvalid (parentID not a UUID), ENotFound (no such
// server, agent or record), EForbidden (no HardDelete on the server or agent).
func (s *Service) DeleteAt(ctx context.Context, p *meridian.Principal, sr Series, parentID string, ts int64) error {
	if _, err := uuid.Parse(parentID); err != nil {
		return meridian.Errorf(meridian.EInvalid, "%s %s must be a UUID", sr.IDField, parentID)
	}
	parentID = strings.ToLower(parentID)
	return s.ents.InTx(ctx, true, func(tx store.Tx) error {
		if _, _, err := s.ents.Load(ctx, tx, p, store.OpHardDelete, sr.Kind, store.ByID(parentID), store.IncludeAll); err != nil {
			return err
		}
		n, err := tx.SQL().Exec(ctx, "DELETE FROM executions WHERE series = $1 AND parent_id = $2 AND ts = $3", sr.Name, parentID, ts)
		if err != nil {
			return err
		}
		if n == 0 {
			return meridian.Errorf(meridian.ENotFound, "No %s of %s %s at timestamp %d", sr.Name, sr.Kind, parentID, ts)
		}
		return nil
	})
}
