// Package audit keeps Meridian's audit log (/api/v1/audit/logs): every write and every
// authentication failure, who, what, when and from where, in a table the module owns
// (Module) on both drivers.
//
// Two sources feed it, and both are kept:
//
//   - The edges (REST middleware, MCP server) record each write request (any method
//     but GET, HEAD and OPTIONS under /api, and each call of a write tool) and each
//     authentication failure, with the method, path or tool, status, outcome, remote
//     address (believing X-Forwarded-For only from a trusted proxy) and request id.
//     They hand the entry to a Writer, which inserts entries in batches on its own
//     goroutine: recording adds no transaction, and so no fsync, to the caller's path.
//   - The Consumer, an outbox consumer, records each committed change (source event,
//     with the event's id as the row id, so a redelivered event is not recorded
//     twice). The change event is written in the same transaction as the change, and
//     the consumer commits its position only after the row, so a committed write is
//     never missing from the audit log, even when the process dies right after the
//     commit and before the Writer flushed the request entry.
//
// The log is append-only: there is no update or delete operation, and the tables'
// triggers refuse UPDATE and DELETE on both drivers. Reading it (Search, Export) is
// for admins only.
package audit

import (
	"context"
	"embed"
	"io/fs"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

var migrations, _ = fs.Sub(migrationFiles, "migrations")

// Module is the store module that owns the audit_log table. It keeps the rows of
// removed entities: the audit log outlives what it records.
func Module() store.Module { return store.Module{Name: "audit", Migrations: migrations} }

// Sources of an entry.
const (
	SourceREST  = "rest"
	SourceMCP   = "mcp"
	SourceEvent = "event"
)

// Kinds of an entry.
const (
	KindWrite       = "write"
	KindAuthFailure = "authFailure"
	KindChange      = "change"
)

// Outcomes of an entry.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// Field bounds: longer values are cut when recorded.
const (
	maxField   = 512
	maxMessage = 1024
)

// Entry is one row of the audit log.
type Entry struct {
	ID         string `json:"id"`
	Timestamp  int64  `json:"timestamp"`
	Source     string `json:"source"`
	Kind       string `json:"kind"`
	UserName   string `json:"userName"`
	Method     string `json:"method,omitempty"`
	Path       string `json:"path,omitempty"` // the REST path, or the MCP tool
	EntityType string `json:"entityType,omitempty"`
	EntityID   string `json:"entityId,omitempty"`
	EntityFQN  string `json:"entityFullyQualifiedName,omitempty"`
	Status     int    `json:"status,omitempty"`
	Outcome    string `json:"outcome"`
	RemoteAddr string `json:"remoteAddr,omitempty"`
	RequestID  string `json:"requestId,omitempty"`
	EventType  string `json:"eventType,omitempty"`
	Message    string `json:"message,omitempty"`
}

// normalized fills the id and outcome and bounds the fields.
func (e Entry) normalized() Entry {
	if e.ID == "" {
		e.ID = meridian.NewID()
	}
	if e.Outcome == "" {
		e.Outcome = OutcomeSuccess
		if e.Status >= 400 {
			e.Outcome = OutcomeFailure
		}
	}
	for _, f := range []*string{&e.Source, &e.Kind, &e.UserName, &e.Method, &e.Path, &e.EntityType, &e.EntityID,
		&e.EntityFQN, &e.RemoteAddr, &e.RequestID, &e.EventType, &e.Outcome} {
		*f = cut(*f, maxField)
	}
	e.Message = cut(e.Message, maxMessage)
	return e
}

// searchText is what the text filter matches: every descriptive field, lower-cased.
func (e Entry) searchText() string {
	return strings.ToLower(strings.Join([]string{e.UserName, e.Method, e.Path, e.EntityType, e.EntityID, e.EntityFQN,
		e.EventType, e.Message, e.RemoteAddr, e.RequestID, e.Kind, e.Outcome}, " "))
}

// cut shortens s to at most n bytes, on a rune boundary, and drops invalid UTF-8 and
// NUL characters (PostgreSQL's text cannot hold them).
func cut(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !validStart(s[n]) {
		n--
	}
	return s[:n]
}

func validStart(b byte) bool { return b&0xC0 != 0x80 }

const entryColumns = "id, ts, source, kind, user_name, method, path, entity_type, entity_id, entity_fqn, status, outcome, remote_addr, request_id, event_type, message"

// insert adds entries; one already recorded (same id) is left alone.
func insert(ctx context.Context, db store.SQL, entries ...Entry) error {
	for _, e := range entries {
		e = e.normalized()
		_, err := db.Exec(ctx, "INSERT INTO audit_log ("+entryColumns+`, search)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT (id) DO NOTHING`,
			e.ID, e.Timestamp, e.Source, e.Kind, e.UserName, e.Method, e.Path, e.EntityType, e.EntityID, e.EntityFQN,
			e.Status, e.Outcome, e.RemoteAddr, e.RequestID, e.EventType, e.Message, e.searchText())
		if err != nil {
			return err
		}
	}
	return nil
}

func scanEntry(sc store.Scanner) (Entry, error) {
	var e Entry
	err := sc.Scan(&e.ID, &e.Timestamp, &e.Source, &e.Kind, &e.UserName, &e.Method, &e.Path, &e.EntityType, &e.EntityID,
		&e.EntityFQN, &e.Status, &e.Outcome, &e.RemoteAddr, &e.RequestID, &e.EventType, &e.Message)
	return e, err
}

// Consumer records the outbox's committed changes in the audit log.
type Consumer struct{ db store.Driver }

// NewConsumer returns the outbox consumer over a driver opened with Module.
func NewConsumer(db store.Driver) *Consumer { return &Consumer{db: db} }

// Name is the consumer's position key.
func (c *Consumer) Name() string { return "audit" }

// IgnoresEventEntities marks the consumer as a store.EntityBlind one: an audit entry
// takes the entity's type, id and FQN from the event's own columns, so the dispatcher
// reads its events without the entity document and never decodes it for the log.
func (c *Consumer) IgnoresEventEntities() {}

var _ store.EntityBlind = (*Consumer)(nil)

// Handle records one change event; a redelivered event is recorded once.
func (c *Consumer) Handle(ctx context.Context, ev meridian.ChangeEvent) error {
	return c.HandleBatch(ctx, []meridian.ChangeEvent{ev})
}

// HandleBatch records events as Handle does, in one transaction.
func (c *Consumer) HandleBatch(ctx context.Context, events []meridian.ChangeEvent) error {
	entries := make([]Entry, len(events))
	for i, ev := range events {
		entries[i] = FromEvent(ev)
	}
	return store.InModuleTx(ctx, c.db, true, func(db store.SQL) error { return insert(ctx, db, entries...) })
}

// FromEvent is the audit entry of a committed change event, from the event's own
// columns (the Consumer reads events without their entity document).
func FromEvent(ev meridian.ChangeEvent) Entry {
	return Entry{ID: ev.ID, Timestamp: ev.Timestamp, Source: SourceEvent, Kind: KindChange, UserName: ev.UserName,
		EntityType: ev.EntityType, EntityID: ev.EntityID, EntityFQN: ev.EntityFQN, Outcome: OutcomeSuccess, EventType: ev.EventType}
}
