package graph

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tggo/goRDFlib/term"

	"github.com/meridian-catalog/meridian"
)

// Bounds of the exploring methods.
const (
	DefaultDepth     = 2
	MaxDepth         = 3
	DefaultNeighbors = 200
	MaxNeighbors     = 2000
	DefaultTagPage   = 50
	MaxTagPage       = 500
	// expandBatch is how many nodes one neighbourhood query expands, and expandBytes
	// how long their VALUES list may grow.
	expandBatch = 500
	expandBytes = 40_000
)

// iriQuoted writes an IRI for a query, refusing one that could break out of <…>.
func iriQuoted(iri string) (string, error) {
	if iri == "" || strings.ContainsAny(iri, "<>\"{}|^`\\ \t\r\n") {
		return "", Errorf(CodeQueryInvalid, "%q is not a valid IRI", iri)
	}
	return "<" + iri + ">", nil
}

// literalQuoted writes a string literal for a query.
func literalQuoted(s string) string { return `"` + escapeLiteral(s) + `"` }

// internal runs a query the service itself built, bounded like a caller's.
func (s *Service) internal(ctx context.Context, p *meridian.Principal, includeDeleted bool, q string, rows int) (*Result, error) {
	return s.Run(ctx, p, Request{Query: q, Limit: rows, IncludeDeleted: includeDeleted})
}

// Locate returns the IRI of the entity of kind with the FQN (or of the IRI given), as
// the projection holds it. Errors: EInvalid, ENotFound, and those of Run.
func (s *Service) Locate(ctx context.Context, p *meridian.Principal, kind, fqn, iri string, includeDeleted bool) (string, error) {
	if iri != "" {
		q, err := iriQuoted(iri)
		if err != nil {
			return "", err
		}
		r, err := s.internal(ctx, p, includeDeleted, "ASK { "+q+" ?p ?o }", 1)
		if err != nil {
			return "", err
		}
		if !r.Boolean {
			return "", meridian.Errorf(meridian.ENotFound, "No node %s in the knowledge graph", iri)
		}
		return iri, nil
	}
	if kind == "" || fqn == "" {
		return "", meridian.Errorf(meridian.EInvalid, "give entityType and fqn, or iri")
	}
	r, err := s.internal(ctx, p, includeDeleted, "SELECT ?e WHERE { ?e dct:identifier "+literalQuoted(fqn)+
		" ; mer:entityType "+literalQuoted(kind)+" }", 1)
	if err != nil {
		return "", err
	}
	if len(r.Rows) == 0 || r.Rows[0][0].Kind != KindIRI {
		return "", meridian.NotFound(kind, fqn)
	}
	return r.Rows[0][0].Value, nil
}

// Neighborhood is the graph around one node.
type Neighborhood struct {
	IRI          string         `json:"iri"`
	Depth        int            `json:"depth"`
	Triples      []Triple       `json:"-"`
	Edges        []EdgeCount    `json:"edges"`
	Nodes        int            `json:"nodes"`
	Completeness Completeness   `json:"completeness"`
	ByDepth      map[string]int `json:"nodesByDepth"`
}

// EdgeCount counts the triples of one predicate in a neighbourhood.
type EdgeCount struct {
	Predicate string `json:"predicate"`
	Count     int    `json:"count"`
}

// noExpand are predicates whose objects are vocabulary, not neighbours.
var noExpand = map[string]bool{rdfType: true}

// Neighborhood collects the triples around iri, breadth first, out to depth hops
// (following edges both ways, not through rdf:type), at most limit triples; it is
// TRUNCATED when more were left. Errors: EInvalid (depth or limit out of range), and
// those of Run.
func (s *Service) Neighborhood(ctx context.Context, p *meridian.Principal, iri string, depth, limit int, includeDeleted bool) (*Neighborhood, error) {
	if depth == 0 {
		depth = DefaultDepth
	}
	if limit == 0 {
		limit = DefaultNeighbors
	}
	if depth < 1 || depth > MaxDepth {
		return nil, meridian.Errorf(meridian.EInvalid, "depth must be between 1 and %d", MaxDepth)
	}
	if limit < 1 || limit > MaxNeighbors {
		return nil, meridian.Errorf(meridian.EInvalid, "limit must be between 1 and %d", MaxNeighbors)
	}
	if err := authorize(p, includeDeleted); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	n := &Neighborhood{IRI: iri, Depth: depth, Completeness: Complete, ByDepth: map[string]int{"0": 1}}
	seenTriple := map[Triple]bool{}
	seenNode := map[string]bool{iri: true}
	frontier := []string{iri}
	for level := 1; level <= depth && len(frontier) > 0; level++ {
		var next []string
		for start := 0; start < len(frontier); {
			// A batch is up to expandBatch nodes whose VALUES list stays within
			// expandBytes, so the query (which lists them twice) stays well within
			// MaxQueryBytes.
			var values strings.Builder
			end := start
			for end < len(frontier) && end-start < expandBatch {
				q, err := iriQuoted(frontier[end])
				if err == nil && end > start && values.Len()+len(q) >= expandBytes {
					break
				}
				if err == nil {
					values.WriteString(q + " ")
				}
				end++
			}
			batch := frontier[start:end]
			start = end
			left := limit - len(n.Triples)
			rows, err := s.edges(ctx, p, batch, values.String(), left+1, len(seenTriple), includeDeleted, func(t Triple) bool { return seenTriple[t] })
			if err != nil {
				return nil, err
			}
			r := &Result{Rows: rows}
			for _, row := range r.Rows {
				if len(row) != 3 {
					continue
				}
				t := Triple{row[0], row[1], row[2]}
				if seenTriple[t] {
					continue
				}
				if len(n.Triples) >= limit {
					n.Completeness = Truncated
					break
				}
				seenTriple[t] = true
				n.Triples = append(n.Triples, t)
				if noExpand[t.P.Value] {
					continue
				}
				for _, other := range []Term{t.S, t.O} {
					if other.Kind == KindIRI && !seenNode[other.Value] {
						seenNode[other.Value] = true
						n.ByDepth[strconv.Itoa(level)]++
						next = append(next, other.Value)
					}
				}
			}
			if n.Completeness == Truncated {
				break
			}
		}
		if n.Completeness == Truncated {
			break
		}
		frontier = next
	}
	counts := map[string]int{}
	for _, t := range n.Triples {
		name := t.P.Value
		if c, ok := compact(name); ok {
			name = c
		}
		counts[name]++
	}
	for pname, c := range counts {
		n.Edges = append(n.Edges, EdgeCount{Predicate: pname, Count: c})
	}
	sort.Slice(n.Edges, func(i, j int) bool {
		if n.Edges[i].Count != n.Edges[j].Count {
			return n.Edges[i].Count > n.Edges[j].Count
		}
		return n.Edges[i].Predicate < n.Edges[j].Predicate
	})
	n.Nodes = len(seenNode)
	sortTriples(n.Triples)
	return n, nil
}

// Walker is implemented by backends that read nodes' edges straight from their
// indexes, without a query.
type Walker interface {
	// Edges returns the visible triples whose subject, then those whose object, is one
	// of the nodes, at most limit of them, leaving out those skip reports (already
	// seen) and repeats.
	Edges(ctx context.Context, nodes []string, limit int, includeDeleted bool, skip func(Triple) bool) ([]Triple, error)
}

// edges returns the out-edges and the in-edges of nodes (values is their VALUES list):
// at least limit rows of (s, p, o) that skip does not report, when there are that
// many. A walker leaves out the skipped ones itself; a query cannot, so it asks for
// seen (the number of triples skip reports) more rows.
func (s *Service) edges(ctx context.Context, p *meridian.Principal, nodes []string, values string, limit, seen int, includeDeleted bool, skip func(Triple) bool) ([][]Term, error) {
	if w, ok := s.cfg.Backend.(Walker); ok {
		ts, err := w.Edges(ctx, nodes, limit, includeDeleted, skip)
		if err != nil {
			return nil, err
		}
		rows := make([][]Term, len(ts))
		for i, t := range ts {
			rows[i] = []Term{t.S, t.P, t.O}
		}
		return rows, nil
	}
	// Out-edges and in-edges in one query, one round trip per batch, for a backend
	// that does not walk itself (the embedded store, whose engine evaluates a UNION
	// branch poorly, walks its indexes; the remote one sends a query of its own,
	// written for the store's planner).
	r, err := s.internal(ctx, p, includeDeleted, "SELECT ?s ?p ?o WHERE { { VALUES ?s { "+values+"} ?s ?p ?o } UNION { VALUES ?o { "+values+"} ?s ?p ?o } }", limit+seen)
	if err != nil {
		return nil, err
	}
	return r.Rows, nil
}

// Edges implements Walker over the store's subject and object indexes.
func (e *Embedded) Edges(_ context.Context, nodes []string, limit int, includeDeleted bool, skip func(Triple) bool) ([]Triple, error) {
	st := e.Store()
	st.mu.RLock()
	defer st.mu.RUnlock()
	v := &view{s: st, includeDeleted: includeDeleted, budget: DefaultWork, deadline: time.Now().Add(DefaultTimeout),
		cancel: &atomic.Bool{}}
	var out []Triple
	taken := map[*tripleRec]bool{}
	for _, dir := range []int{0, 2} {
		for _, n := range nodes {
			t, ok := toRDF(IRI(n))
			if !ok || len(out) >= limit {
				continue
			}
			pat := term.TriplePattern{Subject: t.(term.Subject)}
			if dir == 2 {
				pat = term.TriplePattern{Object: t}
			}
			v.each(pat, func(r *tripleRec) bool {
				if len(out) >= limit {
					return false
				}
				if taken[r] {
					return true
				}
				taken[r] = true
				tr := v.triple(r)
				t := Triple{S: fromRDF(tr.Subject), P: IRI(tr.Predicate.Value()), O: fromRDF(tr.Object)}
				if skip != nil && skip(t) {
					return true
				}
				out = append(out, t)
				return true
			})
		}
	}
	return out, nil
}

// Tagged is one entity found by FindByTag.
type Tagged struct {
	IRI        string `json:"iri"`
	EntityType string `json:"entityType"`
	FQN        string `json:"fullyQualifiedName"`
	Name       string `json:"name,omitempty"`
}

// TaggedPage is one page of FindByTag.
type TaggedPage struct {
	Concept  string   `json:"concept"`
	Entities []Tagged `json:"entities"`
	// After is the cursor of the next page, empty on the last.
	After string `json:"after,omitempty"`
}

// FindByTag lists the entities tagged with the tag or glossary term conceptFQN or any
// of its descendants (directly, or through one of their columns), optionally only of
// the given entity types, ordered by FQN, limit per page after the cursor. Errors:
// EInvalid (limit, types, cursor), ENotFound (no such tag or term), and those of Run.
func (s *Service) FindByTag(ctx context.Context, p *meridian.Principal, conceptFQN string, types []string, limit int, after string) (*TaggedPage, error) {
	if limit == 0 {
		limit = DefaultTagPage
	}
	if limit < 1 || limit > MaxTagPage {
		return nil, meridian.Errorf(meridian.EInvalid, "limit must be between 1 and %d", MaxTagPage)
	}
	if strings.TrimSpace(conceptFQN) == "" {
		return nil, meridian.Errorf(meridian.EInvalid, "tag is required: the FQN of a tag or glossary term")
	}
	r, err := s.internal(ctx, p, false, "SELECT ?c WHERE { ?c dct:identifier "+literalQuoted(conceptFQN)+
		" ; a skos:Concept }", 1)
	if err != nil {
		return nil, err
	}
	if len(r.Rows) == 0 {
		return nil, meridian.Errorf(meridian.ENotFound, "No tag or glossary term %s", conceptFQN)
	}
	concept := r.Rows[0][0].Value
	var filters strings.Builder
	if len(types) > 0 {
		quoted := make([]string, len(types))
		for i, t := range types {
			if !plainLocal(t) {
				return nil, meridian.Errorf(meridian.EInvalid, "unknown entity type %q", t)
			}
			quoted[i] = literalQuoted(t)
		}
		filters.WriteString(" FILTER(?type IN (" + strings.Join(quoted, ", ") + "))")
	}
	if after != "" {
		var cur [2]string
		b, err := base64.RawURLEncoding.DecodeString(after)
		if err != nil || json.Unmarshal(b, &cur) != nil {
			return nil, meridian.Errorf(meridian.EInvalid, "after is not a cursor from an earlier page")
		}
		filters.WriteString(" FILTER(?fqn > " + literalQuoted(cur[0]) + " || (?fqn = " + literalQuoted(cur[0]) +
			" && STR(?e) > " + literalQuoted(cur[1]) + "))")
	}
	// Entities tagged directly, and through a column: two queries whose patterns are
	// joined in order from the concept (an engine evaluating a UNION branch on its own
	// would read every tag edge), merged by FQN.
	paths := []string{"?e mer:tag ?c .", "?col mer:tag ?c . ?col mer:columnOf ?e ."}
	var found []Tagged
	for _, path := range paths {
		q := "SELECT DISTINCT ?e ?type ?fqn ?name WHERE { ?c skos:broader* <" + concept + "> . " + path +
			" ?e mer:entityType ?type ; dct:identifier ?fqn ; rdfs:label ?name ." + filters.String() +
			" } ORDER BY ?fqn ?e LIMIT " + strconv.Itoa(limit+1)
		r, err = s.internal(ctx, p, false, q, limit+1)
		if err != nil {
			return nil, err
		}
		for _, row := range r.Rows {
			found = append(found, Tagged{IRI: row[0].Value, EntityType: row[1].Value, FQN: row[2].Value, Name: row[3].Value})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].FQN != found[j].FQN {
			return found[i].FQN < found[j].FQN
		}
		return found[i].IRI < found[j].IRI
	})
	page := &TaggedPage{Concept: concept, Entities: []Tagged{}}
	for _, e := range found {
		if n := len(page.Entities); n > 0 && page.Entities[n-1].IRI == e.IRI {
			continue
		}
		if len(page.Entities) == limit {
			last := page.Entities[limit-1]
			b, _ := json.Marshal([2]string{last.FQN, last.IRI})
			page.After = base64.RawURLEncoding.EncodeToString(b)
			break
		}
		page.Entities = append(page.Entities, e)
	}
	return page, nil
}

// ClassInfo and PropertyInfo describe the ontology with instance counts.
type ClassInfo struct {
	IRI        string   `json:"iri"`
	Label      string   `json:"label"`
	Comment    string   `json:"comment"`
	SubClassOf []string `json:"subClassOf,omitempty"`
	Instances  int      `json:"instances"`
}

// PropertyInfo describes one property with the number of its triples.
type PropertyInfo struct {
	IRI     string `json:"iri"`
	Label   string `json:"label"`
	Comment string `json:"comment"`
	Object  bool   `json:"object"`
	Triples int    `json:"triples"`
}

// OntologyInfo is the answer of DescribeOntology.
type OntologyInfo struct {
	Prefixes   map[string]string `json:"prefixes"`
	Classes    []ClassInfo       `json:"classes"`
	Properties []PropertyInfo    `json:"properties"`
}

// Counter is implemented by backends that count pattern matches cheaply.
type Counter interface {
	// Count counts the visible triples with predicate p (and object o when not "").
	Count(ctx context.Context, p, o string, includeDeleted bool) (int, error)
}

// DescribeOntology lists the ontology's classes and properties with labels, comments
// and instance counts (classes with no instances and properties with no triples are
// kept), and the prefixes. Errors: EUnauthorized, and those of Run.
func (s *Service) DescribeOntology(ctx context.Context, p *meridian.Principal) (*OntologyInfo, error) {
	if err := authorize(p, false); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	o := s.cfg.Sync.Ontology()
	info := &OntologyInfo{Prefixes: map[string]string{}}
	for _, pr := range Prefixes {
		info.Prefixes[pr.Prefix] = pr.NS
	}
	count := func(pred, obj string) (int, error) {
		if c, ok := s.cfg.Backend.(Counter); ok {
			return c.Count(ctx, pred, obj, false)
		}
		q := "SELECT (COUNT(*) AS ?n) WHERE { ?s <" + pred + "> "
		if obj != "" {
			q += "<" + obj + "> }"
		} else {
			q += "?o }"
		}
		r, err := s.internal(ctx, p, false, q, 1)
		if err != nil || len(r.Rows) == 0 {
			return 0, err
		}
		n, _ := strconv.Atoi(r.Rows[0][0].Value)
		return n, nil
	}
	for _, c := range o.Classes {
		n, err := count(rdfType, c.IRI)
		if err != nil {
			return nil, err
		}
		info.Classes = append(info.Classes, ClassInfo{IRI: c.IRI, Label: c.Label, Comment: c.Comment, SubClassOf: c.SubClassOf, Instances: n})
	}
	for _, pr := range o.Properties {
		n, err := count(pr.IRI, "")
		if err != nil {
			return nil, err
		}
		info.Properties = append(info.Properties, PropertyInfo{IRI: pr.IRI, Label: pr.Label, Comment: pr.Comment, Object: pr.Object, Triples: n})
	}
	return info, nil
}

// EntityTriples returns the description of one entity as the projection holds it: the
// entity node's triples and those of its columns. Errors: EUnauthorized, EForbidden,
// ENotFound, and those of Run.
func (s *Service) EntityTriples(ctx context.Context, p *meridian.Principal, kind, id string, includeDeleted bool) ([]Triple, Completeness, error) {
	iri := EntityIRI(kind, id)
	q, err := iriQuoted(iri)
	if err != nil {
		return nil, "", meridian.NotFound(kind, id)
	}
	r, err := s.Run(ctx, p, Request{Query: "CONSTRUCT { ?s ?p ?o } WHERE { { VALUES ?s { " + q + " } ?s ?p ?o } UNION { ?s mer:columnOf " +
		q + " . ?s ?p ?o } }", Limit: MaxRows, IncludeDeleted: includeDeleted})
	if err != nil {
		return nil, "", err
	}
	if len(r.Triples) == 0 {
		return nil, "", meridian.NotFound(kind, id)
	}
	return r.Triples, r.Completeness, nil
}

// OntologyTurtle is the published ontology in Turtle.
func (s *Service) OntologyTurtle() string {
	return Turtle(s.cfg.Sync.Ontology().Description().Triples)
}

// Count implements Counter over the store's indexes, without a work cap.
func (e *Embedded) Count(_ context.Context, p, o string, includeDeleted bool) (int, error) {
	st := e.Store()
	st.mu.RLock()
	defer st.mu.RUnlock()
	pt, _ := toRDF(IRI(p))
	pid := st.lookup(pt)
	if pid == 0 {
		return 0, nil
	}
	var oid uint32
	if o != "" {
		ot, _ := toRDF(IRI(o))
		if oid = st.lookup(ot); oid == 0 {
			return 0, nil
		}
	}
	list := st.byP.of(pid)
	if objects := st.byO.of(oid); oid != 0 && len(objects) < len(list) {
		list = objects
	}
	n := 0
	for _, id := range list {
		r := &st.triples[id]
		if r.p != pid || (oid != 0 && r.o != oid) {
			continue
		}
		if !includeDeleted && len(st.hidden) > 0 && (st.hidden[r.s] || st.hidden[r.o]) {
			continue
		}
		n++
	}
	return n, nil
}
