// Package graph projects the catalog to RDF under the Meridian ontology and answers
// bounded, read-only SPARQL over it. The projection lives in a Backend: the embedded
// store of this package (goRDFlib's SPARQL engine over a compact, dictionary-encoded,
// indexed triple store) or a remote SPARQL 1.1 protocol server (package graph/remote).
package graph

import (
	"context"
	"time"
)

// Backend holds the projection and evaluates queries over it. Both the embedded store
// (Embedded) and the remote store implement it; the Service checks every query (form,
// dataset selection, SERVICE) before a Backend sees it, and applies the output byte cap
// after, so a Backend only evaluates and bounds rows, time and work.
type Backend interface {
	// Query evaluates a checked SELECT, ASK, CONSTRUCT or DESCRIBE query. It returns at
	// most lim.Rows rows (SELECT) or triples (CONSTRUCT, DESCRIBE), with Completeness
	// TRUNCATED when there were more. Soft-deleted descriptions are invisible unless
	// lim.IncludeDeleted. Errors: QUERY_INVALID when the backend cannot parse the query,
	// EXECUTION_TIMEOUT past lim.Timeout or when ctx ends, QUERY_WORK_EXCEEDED past
	// lim.Work, GRAPH_UNAVAILABLE when a remote store does not answer.
	Query(ctx context.Context, query string, lim Limits) (*Result, error)
	// Apply replaces descriptions: for every IRI in d.Remove and every d.Put[i].Entity,
	// the triples previously put under that entity are removed, then d.Put's triples are
	// added. It is idempotent: applying the same delta twice leaves the same graph.
	Apply(ctx context.Context, d Delta) error
	// Reset empties the projection before a rebuild.
	Reset(ctx context.Context) error
	// Load adds descriptions to a projection being rebuilt (after Reset), in batches;
	// it does not look for older triples of the same entities.
	Load(ctx context.Context, descs []Description) error
}

// Rebuilder is implemented by backends that build a rebuild aside and switch to it
// at once: BeginRebuild replaces Reset, Load fills the new projection, Commit makes it
// the one queries read.
type Rebuilder interface {
	BeginRebuild(ctx context.Context) error
	Commit(ctx context.Context) error
}

// Limits bound one query.
type Limits struct {
	// Rows is the most rows or triples answered; 0 means DefaultRows.
	Rows int
	// Timeout is the most time the query may take; 0 means DefaultTimeout.
	Timeout time.Duration
	// Work is the most triples the embedded store may visit for the query; 0 means
	// DefaultWork. A remote store may ignore it (its server has its own bounds).
	Work int64
	// IncludeDeleted makes soft-deleted entities visible (admins only, on request).
	IncludeDeleted bool
}

// Defaults and bounds of Limits and of the Service's answers.
const (
	DefaultRows    = 1000
	MaxRows        = 10000
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 60 * time.Second
	DefaultWork    = 1_000_000
	// DefaultOutputBytes is the output cap of one answer (10 MiB).
	DefaultOutputBytes = 10 << 20
	// MaxQueryBytes is the longest query text accepted.
	MaxQueryBytes = 100_000
)

// Form is a query form.
type Form string

// The query forms a Service accepts.
const (
	FormSelect    Form = "SELECT"
	FormAsk       Form = "ASK"
	FormConstruct Form = "CONSTRUCT"
	FormDescribe  Form = "DESCRIBE"
)

// Completeness says whether an answer holds every row of the query.
type Completeness string

// Completeness values.
const (
	Complete  Completeness = "COMPLETE"
	Truncated Completeness = "TRUNCATED"
)

// TermKind is the kind of an RDF term.
type TermKind uint8

// Term kinds. The zero Term (KindNone) is an unbound value in a result row.
const (
	KindNone TermKind = iota
	KindIRI
	KindLiteral
	KindBlank
)

// Term is an RDF term: an IRI, a literal (with a datatype IRI or a language) or a blank
// node (Value is its label).
type Term struct {
	Kind     TermKind
	Value    string
	Datatype string
	Lang     string
}

// IRI returns the IRI term v.
func IRI(v string) Term { return Term{Kind: KindIRI, Value: v} }

// Literal returns a plain string literal.
func Literal(v string) Term { return Term{Kind: KindLiteral, Value: v} }

// TypedLiteral returns a literal with a datatype IRI.
func TypedLiteral(v, datatype string) Term {
	return Term{Kind: KindLiteral, Value: v, Datatype: datatype}
}

// Blank returns the blank node with this label.
func Blank(label string) Term { return Term{Kind: KindBlank, Value: label} }

// Triple is one RDF statement.
type Triple struct {
	S, P, O Term
}

// Description is what the projection says about one entity: every triple it puts in
// the graph for it (the entity node and the nodes it owns, such as its columns).
type Description struct {
	// Entity is the entity's IRI (EntityIRI).
	Entity string
	// Deleted marks a soft-deleted entity: its triples are kept but invisible to
	// queries unless Limits.IncludeDeleted.
	Deleted bool
	// Triples are the description's statements.
	Triples []Triple
}

// Delta is one change to the projection: descriptions replaced and entities removed.
type Delta struct {
	Put    []Description
	Remove []string
}

// Result is the answer of a query. For SELECT, Vars and Rows (each row aligned with
// Vars, a zero Term when unbound); for ASK, Boolean; for CONSTRUCT and DESCRIBE,
// Triples.
type Result struct {
	Form         Form
	Vars         []string
	Rows         [][]Term
	Boolean      bool
	Triples      []Triple
	Completeness Completeness
}
