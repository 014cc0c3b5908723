package meridian

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"sort"
	"strings"
	"unicode"
)

// Kind describes one entity type. The engine, the REST routes and the schemas are all
// driven by Kinds: adding a kind adds no CRUD code.
type Kind struct {
	// Name is the entity type, e.g. "table".
	Name string
	// Collection is the REST path below /v1, e.g. "tables" or "services/mcpServices".
	Collection string
	// Parents are the ways a create body names its parent. The first rule whose field is
	// present wins; the FQN is then the parent FQN plus the quoted name. With no rules the
	// kind is top level and its FQN is its quoted name.
	Parents []ParentRule
	// ParentRequired makes a create body without any parent field invalid.
	ParentRequired bool
	// Inherit names reference fields copied from the parent document on create, for
	// example a table takes "database", "service" and "serviceType" from its schema.
	Inherit []string
	// Fields are the values accepted by ?fields=. Each is omitted from answers unless
	// requested. Relationship fields (see RelationFields) are kept in the relationship
	// store; the others are stored in the document.
	Fields []string
	// AlwaysFields are Fields answered even when ?fields= does not ask for them; they are
	// accepted there too. A table's columns, as OpenMetadata always returns them.
	AlwaysFields []string
	// NamedRefs are fields stored as a list of names and answered as entity references
	// of the given type, as OpenMetadata answers them (a user's roles). A write may send
	// names or references; the names are stored.
	NamedRefs map[string]string
	// Unanswered are document fields left out of every answer because the kind's
	// OpenMetadata schema does not allow them (its clients reject unknown properties):
	// a domain's "deleted", for one, as domains have no soft delete there.
	Unanswered []string
	// SoftDelete is true when DELETE without hardDelete keeps the entity as deleted.
	SoftDelete bool
	// HardDeleteNoContent makes a hard delete answer 204 with no body.
	HardDeleteNoContent bool
	// Filters are the list query parameters this kind accepts.
	Filters []Filter
	// Locate computes the parent and the FQN when the parent rules do not apply (test
	// cases take theirs from the entity link). It may set other derived fields.
	Locate func(e Entity) (Location, error)
	// Prepare sets derived fields and defaults on the document being written, after the
	// parent is resolved and before the schema is checked (a glossary term with
	// reviewers starts as Draft). It runs for every verb that writes.
	Prepare func(ctx context.Context, c Catalog, w *Write) error
	// Validate checks the kind's own rules, those the JSON Schema cannot express, after
	// the schema. It runs for every verb that writes and returns EInvalid or ENotFound
	// errors.
	Validate func(ctx context.Context, c Catalog, w *Write) error
	// Deletable refuses to delete an entity the kind protects (a system test
	// definition) with EInvalid.
	Deletable func(p *Principal, e Entity) error
	// Refs are single reference fields resolved on write to full references: a create
	// body may name the target by FQN string, or by an object with id or
	// fullyQualifiedName. The value lists the entity types the field may point at.
	Refs map[string][]string
	// Container, when set, is the entity a new entity of this kind belongs to when its
	// body names none (a test case's basic test suite). The engine creates it with the
	// first entity that needs it.
	Container *Container
	// Immutable lists fields that PATCH and PUT may not change, besides id, name,
	// fullyQualifiedName and deleted.
	Immutable []string
	// Inverse are the kind's inverse relationship fields, by field name: a team's
	// "users" are the users whose "teams" hold the team, a persona's "users" those whose
	// "personas" hold it. Writing the field writes those relations, so both sides record
	// the relationship once.
	Inverse map[string]InverseRelation
	// Privileged lists fields only a principal allowed OpEditPrivileged (an admin) may
	// change, such as a user's roles and teams (a member of a team counts as an owner of
	// what the team owns, so joining one is not left to the user).
	Privileged []string

	// Facts other packages act on, so that none of them compares a kind's name.

	// Actions are the kind's operations besides the generic ones (REST routes and tools).
	Actions []Action
	// AdminOnly is true when only admins may create, change, delete or restore entities
	// of the kind (event subscriptions, which send the catalog's changes outside);
	// anyone signed in may still read and follow them.
	AdminOnly bool
	// NoLineage is true when the kind cannot be an end of a lineage edge.
	NoLineage bool
	// Account is true for the kinds that describe who acts (users, teams, bots): the
	// policy lets consumers edit only their own account.
	Account bool
	// Service is true for the service kinds; a service is its own "service" in search.
	Service bool
	// SearchIndex is OpenMetadata's search index name of the kind when it is not the
	// kind's name in snake case plus "_search_index" (see IndexName).
	SearchIndex string
	// DataAsset is true for the kinds in OpenMetadata's dataAsset search alias.
	DataAsset bool
	// Computed are read fields computed when the entity is read, by the capability that
	// owns their data (a test case's testCaseStatus and testCaseResult). A body's values
	// for them are dropped on write.
	Computed []string
	// Text are the kind's own text fields that search reads with the description (a
	// knowledge article's content, a context memory's question and answer).
	Text []string
	// DedicatedFlows is true when generic patching by an assistant is refused because the
	// kind has its own flows (users, test cases, test suites).
	DedicatedFlows bool
	// EventTypes rename the engine's change event types for this kind's writes: a
	// task's entityCreated is recorded as taskCreated. A type not listed keeps its name.
	EventTypes map[string]string
	// Operations rename the engine's generic policy operations for this kind: a task's
	// Create is checked as CreateTask, its Edit as EditTask. An operation not listed
	// keeps its name.
	Operations map[string]string
	// Allow, when set, decides the kind's own policy operations (the values of
	// Operations and the kind's flows' operations, such as ResolveTask) for a principal
	// that is not an admin: the policy asks it instead of applying its role rules.
	Allow func(p *Principal, op string, e Entity) bool
	// LeftTheFeed is true for a kind whose entities were feed threads once and are
	// served at their own collection now (announcements): a feed call naming one answers
	// 400 saying so.
	LeftTheFeed bool
	// Graph says how the knowledge graph projects the kind's entities besides the
	// generic mapping (package graph).
	Graph GraphFacts
}

// EventType is the change event type the kind records for the engine's type typ.
func (k *Kind) EventType(typ string) string {
	if t, ok := k.EventTypes[typ]; ok {
		return t
	}
	return typ
}

// Operation is the policy operation the kind checks for the generic operation op.
func (k *Kind) Operation(op string) string {
	if o, ok := k.Operations[op]; ok {
		return o
	}
	return op
}

// GraphFacts are what the knowledge graph needs to know of a kind beyond its fields.
type GraphFacts struct {
	// Classes are standard RDF classes (full IRIs) its entities belong to besides their
	// Meridian class: tables are dcat:Dataset, tags and glossary terms skos:Concept,
	// classifications and glossaries skos:ConceptScheme.
	Classes []string
	// Broader is the reference field naming an entity's broader concept (a tag's or a
	// glossary term's parent), projected as skos:broader.
	Broader string
	// Scheme is the reference field naming the concept scheme an entity is in (a tag's
	// classification, a glossary term's glossary), projected as skos:inScheme.
	Scheme string
}

// Standard RDF classes named by kinds' GraphFacts.
const (
	ClassDataset       = "http://www.w3.org/ns/dcat#Dataset"
	ClassConcept       = "http://www.w3.org/2004/02/skos/core#Concept"
	ClassConceptScheme = "http://www.w3.org/2004/02/skos/core#ConceptScheme"
	ClassAgent         = "http://www.w3.org/ns/prov#Agent"
)

// Container is the entity of Kind an entity belongs to: when a create or PUT body leaves
// Field empty, the engine sets it to a reference to the entity Body describes (built
// from the new entity's parent document), creating that entity in the same transaction
// when none has its fully qualified name.
type Container struct {
	Field string
	Kind  string
	Body  func(parent Entity) Entity
}

// Action is an operation a kind offers besides the generic ones.
type Action string

// Actions.
const (
	// ActionTestConnectionResult records a service's connection test result:
	// PUT …/{id}/testConnectionResult.
	ActionTestConnectionResult Action = "testConnectionResult"
	// ActionTestConnection tests a context plugin's connection: POST …/{id}/testConnection.
	ActionTestConnection Action = "testConnection"
)

// SearchText is the text of e that search reads as its description: the description
// and the kind's Text fields, in order, separated by blank lines.
func (k *Kind) SearchText(e Entity) string {
	parts := []string{e.String("description")}
	for _, f := range k.Text {
		parts = append(parts, e.String(f))
	}
	var b strings.Builder
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

// NamedRef is the entity reference answered for a name stored in a NamedRefs field: its
// id is derived from the type and the name, so it is the same in every answer.
func NamedRef(typ, name string) map[string]any {
	id := uuid.NewSHA1(uuid.NameSpaceURL, []byte("meridian:"+typ+":"+name)).String()
	return map[string]any{"id": id, "type": typ, "name": name, "fullyQualifiedName": name}
}

// namesOf turns a NamedRefs value into names: strings stay, references give their
// name (or fullyQualifiedName); anything else is left for the schema to refuse.
func namesOf(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, item := range list {
		out[i] = item
		if m, ok := item.(map[string]any); ok {
			if n, ok := m["name"].(string); ok && n != "" {
				out[i] = n
			} else if n, ok := m["fullyQualifiedName"].(string); ok && n != "" {
				out[i] = n
			}
		}
	}
	return out
}

// StoreNames rewrites e's NamedRefs fields as names, as they are stored.
func (k *Kind) StoreNames(e Entity) {
	for f := range k.NamedRefs {
		if v, ok := e[f]; ok {
			e[f] = namesOf(v)
		}
	}
}

// AnswerRefs rewrites e's NamedRefs fields as entity references, as they are answered.
func (k *Kind) AnswerRefs(e Entity) {
	for f, typ := range k.NamedRefs {
		list, ok := e[f].([]any)
		if !ok {
			continue
		}
		out := make([]any, len(list))
		for i, item := range list {
			out[i] = item
			if n, ok := item.(string); ok {
				out[i] = NamedRef(typ, n)
			}
		}
		e[f] = out
	}
}

// IndexName is OpenMetadata's search index name of the kind: table_search_index,
// database_schema_search_index, … or SearchIndex when set.
func (k *Kind) IndexName() string {
	if k.SearchIndex != "" {
		return k.SearchIndex
	}
	var b strings.Builder
	for i, r := range k.Name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String() + "_search_index"
}

// HasAction reports whether the kind offers the action.
func (k *Kind) HasAction(a Action) bool {
	for _, x := range k.Actions {
		if x == a {
			return true
		}
	}
	return false
}

// Write is what a kind's Prepare and Validate hooks see of a write.
type Write struct {
	// Principal is the caller; nil or the engine's own principal for internal writes.
	Principal *Principal
	// Old is the stored document with its relationship fields; nil on create.
	Old Entity
	// New is the document being written. Prepare may change it.
	New Entity
	// Parent is the parent document with its relationship fields, when the write
	// resolved one (on create, and on PUT); nil otherwise.
	Parent Entity
}

// Catalog is the read access a kind's hooks have to the catalog, inside the write's
// transaction. Documents are as stored: without relationship fields, secrets sealed.
type Catalog interface {
	// Get reads an entity by kind and id. ENotFound when there is none.
	Get(ctx context.Context, kind, id string) (Entity, error)
	// GetByFQN reads an entity by kind and fully qualified name. ENotFound when there is
	// none.
	GetByFQN(ctx context.Context, kind, fqn string) (Entity, error)
}

// Location is where an entity sits: its parent (kind and FQN; empty for top level) and,
// when it is not the parent FQN plus the quoted name, its own FQN.
type Location struct {
	ParentKind string
	ParentFQN  string
	FQN        string
}

// ParentRule is one way a create body names the parent: Field holds the parent's FQN (or
// a reference object) and Kind is the parent's entity type.
type ParentRule struct {
	Field string
	Kind  string
}

// Filter is a list query parameter. With Prefix the value is an ancestor FQN and matches
// every entity below it; otherwise it must equal the top-level document Field (or be an
// element of it when the field is an array).
type Filter struct {
	Param  string
	Field  string
	Prefix bool
}

// RelationFields are the reference-list fields kept in the relationship store, with the
// entity types they may point at. Each reference is a relation whose type is the field
// name, from the entity holding the field to the entity referenced; "teams" records a
// user's membership of a team.
var RelationFields = map[string][]string{
	"owners":       {"user", "team"},
	"followers":    {"user"},
	"domains":      {"domain"},
	"reviewers":    {"user", "team"},
	"experts":      {"user"},
	"dataProducts": {"dataProduct"},
	"teams":        {"team"},
	"personas":     {"persona"},
}

// InverseRelation is a reference-list field that shows a relationship from its target's
// side: the entities of Kinds whose relation of type Type points at this entity. Writing
// the field writes those relations (from each listed entity to this one), so both sides
// record the relationship once.
type InverseRelation struct {
	Type  string
	Kinds []string
}

// SystemFields are set by the engine; a create or PUT body may carry them (a document
// fetched and sent back) but they are ignored.
var SystemFields = []string{"id", "fullyQualifiedName", "version", "updatedAt", "updatedBy", "href",
	"changeDescription", "incrementalChangeDescription", "deleted", "followers", "votes"}

// HasField reports whether name is accepted in ?fields= for this kind.
func (k *Kind) HasField(name string) bool {
	for _, f := range k.Fields {
		if f == name {
			return true
		}
	}
	return false
}

// Answers reports whether an answer carries the field when fields, the parsed
// ?fields= (nil for every field), is what the caller asked for.
func (k *Kind) Answers(field string, fields map[string]bool) bool {
	if contains(k.Unanswered, field) {
		return false
	}
	return fields == nil || fields[field] || !k.HasField(field) || contains(k.AlwaysFields, field)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// IsRelationField reports whether the field is one of this kind's relationship fields,
// either direct (RelationFields) or inverse (Kind.Inverse).
func (k *Kind) IsRelationField(name string) bool {
	_, ok := RelationFields[name]
	_, inv := k.Inverse[name]
	return (ok || inv) && k.HasField(name)
}

// ParseFields parses a ?fields= value: a comma list, spaces stripped, "*" for every
// field. An unknown field is EInvalid "Invalid field name X".
func (k *Kind) ParseFields(s string) (map[string]bool, error) {
	out := map[string]bool{}
	s = strings.TrimSpace(s)
	if s == "" {
		return out, nil
	}
	if s == "*" {
		for _, f := range k.Fields {
			out[f] = true
		}
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !k.HasField(f) {
			return nil, Errorf(EInvalid, "Invalid field name %s", f)
		}
		out[f] = true
	}
	return out, nil
}

// Registry holds every kind, by name and by collection.
type Registry struct {
	byName       map[string]*Kind
	byCollection map[string]*Kind
	kinds        []*Kind
}

// NewRegistry builds a registry and checks that names, collections and parent kinds are
// consistent.
func NewRegistry(kinds ...*Kind) (*Registry, error) {
	r := &Registry{byName: map[string]*Kind{}, byCollection: map[string]*Kind{}}
	for _, k := range kinds {
		if k.Name == "" || k.Collection == "" {
			return nil, fmt.Errorf("kind %q: name and collection are required", k.Name)
		}
		if _, dup := r.byName[k.Name]; dup {
			return nil, fmt.Errorf("kind %q registered twice", k.Name)
		}
		if _, dup := r.byCollection[k.Collection]; dup {
			return nil, fmt.Errorf("collection %q registered twice", k.Collection)
		}
		r.byName[k.Name] = k
		r.byCollection[k.Collection] = k
		r.kinds = append(r.kinds, k)
	}
	for _, k := range kinds {
		for _, p := range k.Parents {
			if _, ok := r.byName[p.Kind]; !ok {
				return nil, fmt.Errorf("kind %q: unknown parent kind %q", k.Name, p.Kind)
			}
		}
	}
	sort.Slice(r.kinds, func(i, j int) bool { return r.kinds[i].Name < r.kinds[j].Name })
	return r, nil
}

// Kind returns the kind with this entity type name.
func (r *Registry) Kind(name string) (*Kind, bool) {
	k, ok := r.byName[name]
	return k, ok
}

// Lookup returns the kind with this name, or an EInvalid error naming it.
func (r *Registry) Lookup(name string) (*Kind, error) {
	if k, ok := r.byName[name]; ok {
		return k, nil
	}
	return nil, Errorf(EInvalid, "Unknown entity type %s", name)
}

// ByCollection returns the kind served at a collection path.
func (r *Registry) ByCollection(c string) (*Kind, bool) {
	k, ok := r.byCollection[c]
	return k, ok
}

// Kinds returns every kind, sorted by name.
func (r *Registry) Kinds() []*Kind { return r.kinds }

// Children returns the kinds whose parent rules name kind.
func (r *Registry) Children(kind string) []*Kind {
	var out []*Kind
	for _, k := range r.kinds {
		for _, p := range k.Parents {
			if p.Kind == kind {
				out = append(out, k)
				break
			}
		}
	}
	return out
}
