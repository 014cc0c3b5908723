// Package store is Meridian's entity engine, written once over a narrow Driver: create,
// create-or-update with OpenMetadata's merge rules, JSON Patch and Edit, bulk writes,
// versions and changeDescription, soft, hard and recursive delete, restore, followers,
// relationships, the transactional outbox and its dispatcher. The SQL lives in the
// drivers (store/sqlite, store/postgres); the rules live here and in the kinds.
//
// The seams:
//   - One write path (before.go): every verb that creates or changes an entity runs
//     beforeWrite — immutable and privileged fields, prepare and defaults, the JSON
//     Schema, the kind's own rules (meridian.Kind.Prepare and Validate, with read access
//     to the catalog), governance. Read-modify-write happens in one transaction (Edit).
//   - Modules (module.go): a capability (auth, quality, jobs, …) owns its tables, with
//     its own migrations numbered alike on both drivers, and reaches them through Tx.SQL
//     in the engine's transactions.
//   - The outbox (outbox.go): each write commits its change event with it; the
//     Dispatcher delivers events to each Consumer in its own goroutine, outside the write
//     transaction, at least once, and prunes delivered events after the retention.
//   - Jobs (jobs.go, store/jobs): durable asynchronous work, such as async deletes.
//   - Optimistic creates (optimistic.go, readset.go): on a driver whose writers take
//     turns (GroupCommitter), a create runs its draft, beforeWrite and encoding against
//     a read snapshot and, under the writer, replays the reads it made; it writes what
//     it prepared only when each answers alike, else it runs wholly under the writer.
//   - The read cache (cache.go): GetJSON keeps encoded answers on a driver with a
//     DataVersion (SQLite's data_version, PostgreSQL's change feed); any commit, by
//     this engine, another process or another node, empties it.
//
// Each Entities method lists the meridian error codes it returns.
package store

import (
	"context"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// Driver opens transactions on a database. Every write the engine makes commits in one
// transaction: the entity row, its version snapshot, its relationships and its change
// event.
type Driver interface {
	// Begin starts a transaction. A writable transaction takes the write lock at once,
	// so two writers never deadlock upgrading a read lock.
	Begin(ctx context.Context, writable bool) (Tx, error)
	// Modules returns the modules the driver was opened with, in order.
	Modules() []Module
	// Close releases the database.
	Close() error
}

// Row is one stored entity. Doc holds the document without its relationship fields.
type Row struct {
	ID        string
	Kind      string
	Name      string
	FQN       string
	Version   meridian.Version
	UpdatedAt int64
	UpdatedBy string
	Deleted   bool
	Doc       []byte
	// Snapshot says Doc is also the entity's snapshot at Version, the document
	// PutVersion would store (an entity with no relationship field in its document).
	// The driver then keeps the row as that snapshot (Tx.Version and Tx.Versions answer
	// it), and an Update keeps it as the snapshot of the version it replaces, so a
	// write stores the document once. It is written, not read: a Row a read answers
	// leaves it false.
	Snapshot bool
}

// Include selects rows by their deleted flag.
type Include string

// Include values.
const (
	IncludeNonDeleted Include = "non-deleted"
	IncludeDeleted    Include = "deleted"
	IncludeAll        Include = "all"
)

// Cursor is a position in a list ordered by name, then id.
type Cursor struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// Condition restricts a list. With Prefix, the row FQN must start with Value plus a
// dot. Otherwise the top-level document field Field must equal Value, or hold it as an
// element when the field is an array; with AnyOf (Value unused), equal or hold any of
// its values (none matches nothing).
type Condition struct {
	Field  string
	Value  string
	Prefix bool
	AnyOf  []string
}

// OrClause joins SQL conditions with OR, for a driver building a Condition's WHERE
// clause: none matches no row.
func OrClause(conds []string) string {
	switch len(conds) {
	case 0:
		return "1 = 0"
	case 1:
		return conds[0]
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

// Values returns the values the field condition c accepts: AnyOf when set, else Value.
func (c Condition) Values() []string {
	if c.AnyOf != nil {
		return c.AnyOf
	}
	return []string{c.Value}
}

// ListQuery selects one page of one kind, ordered by name then id. After and Before
// are exclusive bounds; with Before the driver returns the rows just before the bound,
// still in ascending order. Limit 0 returns no rows but still counts them.
type ListQuery struct {
	Kind       string
	Include    Include
	Conditions []Condition
	After      *Cursor
	Before     *Cursor
	Limit      int
}

// Relation is a typed edge between two entities, for example contains (parent to
// child), owners (entity to owner), followers (entity to user) or upstream (lineage).
type Relation struct {
	FromID   string
	FromKind string
	ToID     string
	ToKind   string
	Type     string
	Doc      []byte // optional edge details (lineage)
}

// RelationQuery selects relations: every set field must match.
type RelationQuery struct {
	FromID string
	ToID   string
	Type   string
}

// RelatedRow is one relation found by Tx.Related: its type and the entity at its
// other end.
type RelatedRow struct {
	Type string
	Row  Row
}

// EventQuery selects outbox events: sequence number above After, timestamp at or
// after Since (epoch ms, 0 for any), entity type in EntityTypes (empty for any). Limit
// 0 or less means no limit. WithoutEntity leaves each event's Entity nil, so its
// document is neither read nor decoded.
type EventQuery struct {
	After         int64
	Since         int64
	EntityTypes   []string
	Limit         int
	WithoutEntity bool
}

// Tx is one transaction. Methods return *meridian.Error values with ENotFound for a
// missing row, EConflict for a duplicate (kind, FQN) and EPreconditionFailed when an
// Update finds another version than it expected.
type Tx interface {
	// Get reads a row by id. An empty kind matches any kind.
	Get(ctx context.Context, kind, id string) (Row, error)
	// GetByFQN reads a row by kind and FQN.
	GetByFQN(ctx context.Context, kind, fqn string) (Row, error)
	// Insert adds a new row. A duplicate (kind, FQN) or id is EConflict. With
	// r.Snapshot the row is also the snapshot of r.Version (no PutVersion needed).
	Insert(ctx context.Context, r Row) error
	// Update replaces a row whose stored version is expect. Otherwise it is
	// EPreconditionFailed and nothing is written. The snapshots stored before stay as
	// they were (a replaced row that was its version's snapshot becomes a stored one);
	// with r.Snapshot the new row is the snapshot of r.Version, replacing any stored.
	Update(ctx context.Context, r Row, expect meridian.Version) error
	// Remove deletes a row, its version snapshots, its search document, every
	// relation touching it, and the rows each module keeps about it (Module.OnRemove).
	Remove(ctx context.Context, id string) error
	// List returns one page and the count of every row matching the query.
	List(ctx context.Context, q ListQuery) ([]Row, int, error)

	// PutVersion stores the full snapshot of an entity at a version.
	PutVersion(ctx context.Context, id string, v meridian.Version, doc []byte) error
	// Versions returns every snapshot of an entity, newest first.
	Versions(ctx context.Context, id string) ([][]byte, error)
	// Version returns one snapshot, ENotFound when there is none.
	Version(ctx context.Context, id string, v meridian.Version) ([]byte, error)

	// Relate adds a relation; adding an existing one replaces its Doc.
	Relate(ctx context.Context, r Relation) error
	// Unrelate removes a relation; removing a missing one is not an error.
	Unrelate(ctx context.Context, r Relation) error
	// Relations lists the relations matching the query, oldest first.
	Relations(ctx context.Context, q RelationQuery) ([]Relation, error)
	// Related reads, in one query, the relations of the given types from the entity (with
	// inverse, to it), oldest first, each with the row of the entity at the other end,
	// deleted or not. A relation whose target is missing, or is stored under another kind
	// than the relation records (an empty recorded kind matches any), is left out: Get
	// with that kind and id would not find it. No types is no relations.
	Related(ctx context.Context, id string, types []string, inverse bool) ([]RelatedRow, error)

	// AppendEvent adds a change event to the outbox.
	AppendEvent(ctx context.Context, e meridian.ChangeEvent) error
	// Events lists outbox events matching the query, oldest first.
	Events(ctx context.Context, q EventQuery) ([]meridian.ChangeEvent, error)

	// Index adds or replaces the search document of an entity; Unindex removes it.
	Index(ctx context.Context, d search.Doc) error
	Unindex(ctx context.Context, id string) error
	// Search runs a keyword search: one page of hits, best first, the count of every
	// match and the aggregations asked for, all computed by the database. A query that
	// fails search.Query.Validate is EInvalid.
	Search(ctx context.Context, q search.Query) (search.Result, error)

	// Setting and PutSetting read and write a small key-value table (signing keys,
	// seeded data markers). Setting returns ENotFound when the key is absent.
	Setting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error

	// SQL is the generic seam through which a Module reaches its own tables in this
	// transaction.
	SQL() SQL

	Commit() error
	Rollback() error
}

// Pipeliner is a Tx capability: writes held back and sent together. Pipeline runs f
// with the writes that answer only their success (Insert, Relate, PutVersion, Index,
// AppendEvent) held back, to be sent in one round trip with the transaction's next
// statement; a held write that fails fails that statement and every one after it,
// Commit included. So f must make writes that nothing in the catalog can refuse (a
// create whose reads replayed under the writer). store/postgres has it; store/sqlite
// has no round trips to save.
type Pipeliner interface {
	Pipeline(f func() error) error
}

// ConflictKeeper is a Tx capability: an Insert refused because an entity of its kind
// and FQN exists answers EConflict and leaves the transaction as it was, so the
// transaction goes on. A create prepared outside the writer then lets its Insert check
// that its FQN is still free, instead of reading it again under the writer
// (optimistic.go). store/sqlite has it (SQLite rolls back the refused statement alone);
// on PostgreSQL a refused statement ends the transaction.
type ConflictKeeper interface {
	KeepsTxOnConflict()
}

// RowKey names a row read: by ID (FQN empty, Kind optional, as Get) or by Kind and FQN
// (as GetByFQN).
type RowKey struct{ Kind, ID, FQN string }

// RowBatcher is a Tx capability: many row reads in one round trip. GetRows answers,
// for each key in order, what Get or GetByFQN would. The engine uses it to replay the
// reads of a create prepared outside the writer (optimistic.go). store/postgres has it;
// store/sqlite has no round trips to save.
type RowBatcher interface {
	GetRows(ctx context.Context, keys []RowKey) ([]Row, []error)
}

// EncodedEventAppender is a Tx capability: AppendEvent of an event whose entity is
// already encoded (entity is e.Entity as JSON), so that a create encodes it once, before
// it takes the writer, for its search document and its event alike. snapshot says
// entity is also the snapshot of the entity at e.CurrentVersion that the same
// transaction stores (PutVersion): the driver may then keep a reference to that
// snapshot instead of a second copy. It reads the event back with the snapshot's
// document (rowscan.EventColumns), and Remove copies the document into the events of an
// entity before it removes the snapshots. Both drivers have it.
type EncodedEventAppender interface {
	AppendEncodedEvent(ctx context.Context, e meridian.ChangeEvent, entity []byte, snapshot bool) error
}
