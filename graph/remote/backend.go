package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	rdf "github.com/tggo/goRDFlib"

	"github.com/meridian-catalog/meridian/graph"
)

// Bookkeeping predicates: ownsIRI links an entity to a node its description puts
// triples about (what Apply removes when the description is replaced); hiddenIRI marks
// a node of a soft-deleted description.
const (
	ownsIRI   = "urn:meridian:graph:owns"
	hiddenIRI = "urn:meridian:graph:hidden"
)

// Backend is a graph.Backend over a remote SPARQL 1.1 server. The projection lives in
// four named graphs: the visible triples in Graph; in Graph + "/deleted" the triples
// of soft-deleted descriptions and every other triple whose object is one of their
// nodes (the embedded store hides those too); in Graph + "/owners" which entity owns
// which subject nodes; in Graph + "/hidden" the nodes of soft-deleted descriptions.
// Queries run with the visible graph (and the deleted one when asked) as their default
// graph, named by the protocol's default-graph-uri parameter, so they never see the
// server's other graphs. A description's triples must have the description's own nodes
// (the entity and the nodes it owns, such as its columns) as subjects, as the projection
// builds them: replacing a description removes every triple about those subjects.
//
// A rebuild is built aside (graph.Rebuilder): BeginRebuild empties a second set of
// graphs under Graph + "/rebuild", Load fills it while queries keep reading the current
// one, and Commit moves it over the current set (SPARQL 1.1 MOVE).
type Backend struct {
	c *Client
	graphSet
	stage      graphSet
	rebuilding *atomic.Bool
}

// graphSet names the four graphs of a projection.
type graphSet struct {
	live, deleted, ownerGraph, hiddenGraph string
}

func newGraphSet(g string) graphSet {
	return graphSet{live: g, deleted: g + "/deleted", ownerGraph: g + "/owners", hiddenGraph: g + "/hidden"}
}

func (s graphSet) all() []string { return []string{s.live, s.deleted, s.ownerGraph, s.hiddenGraph} }

// liveOrDeleted is a filter keeping ?g to the visible and the deleted graph. It names
// two graphs by their text on purpose: Virtuoso folds a test on one name (or on IRIs)
// back into a constant graph, whose patterns bound only by their object it may plan as
// a scan of the graph (see Backend.Edges).
func (s graphSet) liveOrDeleted() string {
	return "FILTER(STR(?g) IN (" + Term(rdf.NewLiteral(s.live)) + ", " + Term(rdf.NewLiteral(s.deleted)) + "))"
}

var (
	_ graph.Backend   = (*Backend)(nil)
	_ graph.Rebuilder = (*Backend)(nil)
)

// NewBackend returns a Backend over c's server and graph.
func NewBackend(c *Client) *Backend {
	g := c.Graph()
	return &Backend{c: c, graphSet: newGraphSet(g), stage: newGraphSet(g + "/rebuild"), rebuilding: &atomic.Bool{}}
}

// BeginRebuild implements graph.Rebuilder: it empties the rebuild graphs, which Load
// fills until Commit. Errors: GRAPH_UNAVAILABLE.
func (b *Backend) BeginRebuild(ctx context.Context) error {
	if err := b.clear(ctx, b.stage); err != nil {
		return err
	}
	b.rebuilding.Store(true)
	return nil
}

// Commit implements graph.Rebuilder: the rebuilt graphs replace the current ones.
// Errors: GRAPH_UNAVAILABLE.
func (b *Backend) Commit(ctx context.Context) error {
	if !b.rebuilding.Load() {
		return nil
	}
	var ops []string
	for i, src := range b.stage.all() {
		dst := b.graphSet.all()[i]
		ops = append(ops, "CLEAR SILENT GRAPH "+IRI(dst), "MOVE SILENT GRAPH "+IRI(src)+" TO GRAPH "+IRI(dst))
	}
	if err := b.c.Update(ctx, strings.Join(ops, " ;\n")); err != nil {
		return unavailable(err)
	}
	b.rebuilding.Store(false)
	return nil
}

// clear empties a set of graphs.
func (b *Backend) clear(ctx context.Context, set graphSet) error {
	var u []string
	for _, g := range set.all() {
		u = append(u, "CLEAR SILENT GRAPH "+IRI(g))
	}
	return unavailable(b.c.Update(ctx, strings.Join(u, " ;\n")))
}

// target is the backend that Load writes through: this one, or during a rebuild the
// same client over the rebuild graphs.
func (b *Backend) target() *Backend {
	if !b.rebuilding.Load() {
		return b
	}
	t := *b
	t.graphSet = b.stage
	return &t
}

// Client returns the backend's protocol client.
func (b *Backend) Client() *Client { return b.c }

// Reset implements graph.Backend: it clears the three graphs. Errors:
// GRAPH_UNAVAILABLE.
func (b *Backend) Reset(ctx context.Context) error {
	b.rebuilding.Store(false)
	return b.clear(ctx, b.graphSet)
}

// Load implements graph.Backend: it inserts descriptions in batches without looking
// for older triples. Errors: GRAPH_UNAVAILABLE.
func (b *Backend) Load(ctx context.Context, descs []graph.Description) error {
	b = b.target()
	add, err := b.insert(ctx, descs)
	if err != nil {
		return unavailable(err)
	}
	if hidden, err := b.anyHidden(ctx); err != nil || !hidden {
		return unavailable(err)
	}
	return unavailable(b.send(ctx, b.routing(add.nodes, add.hidden)))
}

// anyHidden reports whether any node is hidden or any triple set aside in the deleted
// graph: without either, nothing needs routing and nothing is in those graphs to remove.
func (b *Backend) anyHidden(ctx context.Context) (bool, error) {
	return b.c.Ask(ctx, "ASK { { GRAPH "+IRI(b.hiddenGraph)+" { ?s ?p ?o } } UNION { GRAPH "+IRI(b.deleted)+" { ?s ?p ?o } } }")
}

// Apply implements graph.Backend: the triples about the nodes owned by each removed
// or replaced entity are deleted (from both the visible and the deleted graph) and the
// new descriptions inserted. The nodes an entity owns are read from the owners graph
// first, so that every deletion names its subjects: a change costs index lookups on
// those nodes, never a scan of the graph (Virtuoso plans a deletion that reaches its
// subjects through a join with the owners graph as a scan of the whole visible graph).
// A small delta is two queries sent together (and, when some node is hidden, a third
// for which of the entities' nodes are) and one update request. Errors:
// GRAPH_UNAVAILABLE.
func (b *Backend) Apply(ctx context.Context, d graph.Delta) error {
	entities := append([]string(nil), d.Remove...)
	for _, desc := range d.Put {
		entities = append(entities, desc.Entity)
	}
	var (
		hiddenBefore bool
		hiddenErr    error
		done         = make(chan struct{})
	)
	go func() {
		defer close(done)
		hiddenBefore, hiddenErr = b.anyHidden(ctx)
	}()
	owned, err := b.ownedNodes(ctx, entities)
	<-done
	if err = cmp.Or(err, hiddenErr); err != nil {
		return unavailable(err)
	}
	old := make([]string, len(owned))
	for i, o := range owned {
		old[i] = o.node
	}
	var wasHidden []string
	if hiddenBefore {
		if wasHidden, err = b.hiddenAmong(ctx, old); err != nil {
			return unavailable(err)
		}
	}
	add := b.additions(d.Put)
	requests := b.removals(owned, add.owns, hiddenBefore)
	add.keepNewOwnerships(owned)
	var routing []string
	if hiddenBefore || len(add.hidden) > 0 {
		routing = b.routing(append(old, add.nodes...), append(wasHidden, add.hidden...))
	}
	inserted, routed := false, len(routing) == 0
	if add.total > 0 && add.total <= b.c.cfg.BatchTriples {
		// A small insertion rides with the last removal, and a short routing after it:
		// a small replace is one request.
		last := ""
		if n := len(requests); n > 0 {
			last, requests = requests[n-1], requests[:n-1]
		}
		for _, r := range requests {
			if err := b.c.Update(ctx, r); err != nil {
				return unavailable(err)
			}
		}
		requests = nil
		ops := append([]string{last}, b.ops(add)...)
		withRouting := len(routing) <= routingOps
		if withRouting {
			ops = append(ops, routing...)
		}
		err := b.c.Update(ctx, joinOps(ops))
		switch {
		case err == nil:
			inserted, routed = true, routed || withRouting
		case !tooBig(err):
			return unavailable(err)
		case last != "":
			// Too big to compile at once: remove, then load in batches and route.
			requests = []string{last}
		}
	}
	for _, r := range requests {
		if err := b.c.Update(ctx, r); err != nil {
			return unavailable(err)
		}
	}
	if !inserted {
		if err := b.post(ctx, add); err != nil {
			return unavailable(err)
		}
	}
	if routed {
		return nil
	}
	return unavailable(b.send(ctx, routing))
}

// hiddenAmong are the nodes that are hidden, removalNodes a query.
func (b *Backend) hiddenAmong(ctx context.Context, nodes []string) ([]string, error) {
	var out []string
	for len(nodes) > 0 {
		n := min(removalNodes, len(nodes))
		q := fmt.Sprintf("SELECT ?s WHERE { VALUES ?s {%s } GRAPH %s { ?s %s ?x } }", iriList(nodes[:n]), IRI(b.hiddenGraph), IRI(hiddenIRI))
		lr, err := b.c.Limited(ctx, q, graph.MaxRows)
		if err != nil {
			return nil, err
		}
		for _, row := range lr.Result.Bindings {
			if u, ok := row["s"].(rdf.URIRef); ok {
				out = append(out, u.Value())
			}
		}
		nodes = nodes[n:]
	}
	return out, nil
}

// ownership is one node an entity owns.
type ownership struct{ entity, node string }

// ownedPage bounds the rows of one ownership query, under Virtuoso's silent row cap.
const ownedPage = 5000

// ownedNodes are the nodes the entities own now, 200 entities a query; a batch whose
// answer would pass ownedPage rows is split, and one entity's nodes are then paged.
func (b *Backend) ownedNodes(ctx context.Context, entities []string) ([]ownership, error) {
	var out []ownership
	for len(entities) > 0 {
		n := min(200, len(entities))
		got, err := b.ownedBy(ctx, entities[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		entities = entities[n:]
	}
	return out, nil
}

// ownedBy is what a batch of entities owns.
func (b *Backend) ownedBy(ctx context.Context, entities []string) ([]ownership, error) {
	q := fmt.Sprintf("SELECT ?e ?s WHERE { VALUES ?e {%s } GRAPH %s { ?e %s ?s } }",
		iriList(entities), IRI(b.ownerGraph), IRI(ownsIRI))
	lr, err := b.c.Limited(ctx, q, ownedPage)
	if err != nil {
		return nil, err
	}
	if lr.Completeness == Truncated && len(entities) == 1 {
		return b.ownedByOne(ctx, entities[0])
	}
	if lr.Completeness == Truncated {
		half := len(entities) / 2
		first, err := b.ownedBy(ctx, entities[:half])
		if err != nil {
			return nil, err
		}
		second, err := b.ownedBy(ctx, entities[half:])
		return append(first, second...), err
	}
	var out []ownership
	for _, row := range lr.Result.Bindings {
		e, eok := row["e"].(rdf.URIRef)
		s, sok := row["s"].(rdf.URIRef)
		if eok && sok {
			out = append(out, ownership{e.Value(), s.Value()})
		}
	}
	return out, nil
}

// ownedByOne is what one entity that owns more than ownedPage nodes owns, ownedPage
// nodes a query in the order of their IRIs' text.
func (b *Backend) ownedByOne(ctx context.Context, entity string) ([]ownership, error) {
	var out []ownership
	after := ""
	for {
		q := fmt.Sprintf("SELECT ?s WHERE { GRAPH %s { %s %s ?s } FILTER(STR(?s) > %s) } ORDER BY STR(?s) LIMIT %d",
			IRI(b.ownerGraph), IRI(entity), IRI(ownsIRI), Term(rdf.NewLiteral(after)), ownedPage)
		lr, err := b.c.Limited(ctx, q, ownedPage)
		if err != nil {
			return nil, err
		}
		for _, row := range lr.Result.Bindings {
			if s, ok := row["s"].(rdf.URIRef); ok {
				out = append(out, ownership{entity, s.Value()})
				after = s.Value()
			}
		}
		if len(lr.Result.Bindings) < ownedPage {
			return out, nil
		}
	}
}

// routing are the operations that move the triples that mention nodes to the graph
// they belong in: a visible triple whose subject or object is hidden goes to the
// deleted graph, a triple of the deleted graph whose subject and object are both
// visible comes back, run after the insertion. nodes are the subjects just inserted
// and those just removed; changed are the nodes whose visibility may have changed
// (hidden before or now). Only a changed node can hide
// the triples about it or those pointing at it, or bring triples back: for the other
// nodes the one thing to do is to hide the new triples that point at a hidden node.
//
// A pattern bound by its object matches the visible and the deleted graph together
// (GRAPH ?g and a test on its name; moving a triple already where it belongs changes
// nothing): in a constant graph Virtuoso may plan it as a scan of that graph, as
// Backend.Edges explains.
func (b *Backend) routing(nodes, changed []string) []string {
	live, del, hid, mark := IRI(b.live), IRI(b.deleted), IRI(b.hiddenGraph), IRI(hiddenIRI)
	both := b.liveOrDeleted()
	move := func(from, to, where string, values []string) string {
		return fmt.Sprintf("DELETE { GRAPH %[1]s { ?s ?p ?o } } INSERT { GRAPH %[2]s { ?s ?p ?o } } WHERE { "+where+" }",
			from, to, iriList(values), hid, mark, both, live, del)
	}
	var ops []string
	for len(nodes) > 0 {
		n := min(200, len(nodes))
		// A visible triple whose object is hidden.
		ops = append(ops, move(live, del, "VALUES ?s {%[3]s } GRAPH %[7]s { ?s ?p ?o } GRAPH %[4]s { ?o %[5]s ?x }", nodes[:n]))
		nodes = nodes[n:]
	}
	for len(changed) > 0 {
		n := min(200, len(changed))
		ops = append(ops,
			// A visible triple whose subject or object is hidden,
			move(live, del, "VALUES ?s {%[3]s } GRAPH %[7]s { ?s ?p ?o } GRAPH %[4]s { ?s %[5]s ?x }", changed[:n]),
			move(live, del, "VALUES ?o {%[3]s } GRAPH ?g { ?s ?p ?o } %[6]s GRAPH %[4]s { ?o %[5]s ?x }", changed[:n]),
			// and a hidden triple whose subject and object are both visible.
			move(del, live, "VALUES ?s {%[3]s } GRAPH %[8]s { ?s ?p ?o } FILTER NOT EXISTS { GRAPH %[4]s { ?s %[5]s ?x } } FILTER NOT EXISTS { GRAPH %[4]s { ?o %[5]s ?y } }", changed[:n]),
			move(del, live, "VALUES ?o {%[3]s } GRAPH ?g { ?s ?p ?o } %[6]s FILTER NOT EXISTS { GRAPH %[4]s { ?s %[5]s ?x } } FILTER NOT EXISTS { GRAPH %[4]s { ?o %[5]s ?y } }", changed[:n]))
		changed = changed[n:]
	}
	return ops
}

// routingOps is how many routing operations one request carries.
const routingOps = 10

// send sends update operations, routingOps a request.
func (b *Backend) send(ctx context.Context, ops []string) error {
	for len(ops) > 0 {
		n := min(routingOps, len(ops))
		if err := b.c.Update(ctx, joinOps(ops[:n])); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// iriList is IRIs separated by spaces, each with a leading space.
func iriList(iris []string) string {
	var b strings.Builder
	for _, s := range iris {
		b.WriteByte(' ')
		b.WriteString(IRI(s))
	}
	return b.String()
}

// removalNodes is how many nodes one removal request names.
const removalNodes = 500

// removals are the update requests that delete the triples about the owned nodes and
// the ownerships that kept (the new descriptions' ownerships) does not hold,
// removalNodes ownerships a request. Every pattern has its subject bound by VALUES.
// The deleted and hidden graphs are cleaned only when aside is set (they hold
// something).
func (b *Backend) removals(owned []ownership, kept map[ownership]bool, aside bool) []string {
	owns := rdf.NewURIRefUnsafe(ownsIRI)
	var out []string
	perRequest := removalNodes
	for len(owned) > 0 {
		var pairs []rdf.Triple
		n := min(perRequest, len(owned))
		for _, o := range owned[:n] {
			if !kept[o] {
				pairs = append(pairs, rdf.Triple{Subject: rdf.NewURIRefUnsafe(o.entity), Predicate: owns, Object: rdf.NewURIRefUnsafe(o.node)})
			}
		}
		forget := ""
		if len(pairs) > 0 {
			var used int
			forget, used = dataUpdate("DELETE DATA", b.ownerGraph, pairs)
			if used < len(pairs) {
				// The ownerships' text would pass maxBatchBytes: name fewer nodes.
				perRequest = max(1, n*used/len(pairs))
				continue
			}
		}
		seen := map[string]bool{}
		var nodes []string
		for _, o := range owned[:n] {
			if !seen[o.node] {
				seen[o.node] = true
				nodes = append(nodes, o.node)
			}
		}
		values := iriList(nodes)
		graphs := []string{b.live}
		if aside {
			graphs = append(graphs, b.deleted)
		}
		var ops []string
		for _, g := range graphs {
			ops = append(ops, fmt.Sprintf("DELETE { GRAPH %[1]s { ?s ?p ?o } } WHERE { VALUES ?s {%[2]s } GRAPH %[1]s { ?s ?p ?o } }",
				IRI(g), values))
		}
		if aside {
			ops = append(ops, fmt.Sprintf("DELETE { GRAPH %[1]s { ?s %[2]s ?x } } WHERE { VALUES ?s {%[3]s } GRAPH %[1]s { ?s %[2]s ?x } }",
				IRI(b.hiddenGraph), IRI(hiddenIRI), values))
		}
		out = append(out, joinOps(append(ops, forget)))
		owned = owned[n:]
	}
	return out
}

// joinOps joins the non-empty update operations into one request.
func joinOps(ops []string) string {
	kept := ops[:0:0]
	for _, op := range ops {
		if op != "" {
			kept = append(kept, op)
		}
	}
	return strings.Join(kept, " ;\n")
}

// addition is what inserting descriptions adds: the triples bound for the hidden,
// visible and deleted graphs, the ownerships of their subject nodes (owns holds them
// too), and those nodes, which routing must see (hidden: those of soft-deleted
// descriptions).
type addition struct {
	parts         []graphTriples
	owners        []ownership
	owns          map[ownership]bool
	nodes, hidden []string
	total         int
}

// graphTriples are triples bound for one graph.
type graphTriples struct {
	graph   string
	triples []rdf.Triple
}

// additions sorts descriptions out: visible ones go into the live graph, soft-deleted
// ones into the deleted graph with their nodes marked hidden, and the ownership of their
// subject nodes into the owners graph.
func (b *Backend) additions(descs []graph.Description) addition {
	var live, deleted, hidden []rdf.Triple
	a := addition{owns: map[ownership]bool{}}
	mark, yes := rdf.NewURIRefUnsafe(hiddenIRI), rdf.NewLiteral(true)
	for _, d := range descs {
		for _, t := range d.Triples {
			tr, ok := toRDFTriple(t)
			if !ok {
				continue
			}
			if d.Deleted {
				deleted = append(deleted, tr)
			} else {
				live = append(live, tr)
			}
			if o := (ownership{d.Entity, t.S.Value}); t.S.Kind == graph.KindIRI && !a.owns[o] {
				a.owns[o] = true
				a.owners = append(a.owners, o)
				a.nodes = append(a.nodes, t.S.Value)
				if d.Deleted {
					hidden = append(hidden, rdf.Triple{Subject: rdf.NewURIRefUnsafe(t.S.Value), Predicate: mark, Object: yes})
					a.hidden = append(a.hidden, t.S.Value)
				}
			}
		}
	}
	for _, part := range []graphTriples{{b.hiddenGraph, hidden}, {b.live, live}, {b.deleted, deleted}} {
		if len(part.triples) > 0 {
			a.parts = append(a.parts, part)
			a.total += len(part.triples)
		}
	}
	a.total += len(a.owners)
	return a
}

// keepNewOwnerships leaves out of the addition the ownerships already held.
func (a *addition) keepNewOwnerships(held []ownership) {
	has := make(map[ownership]bool, len(held))
	for _, o := range held {
		has[o] = true
	}
	kept := a.owners[:0]
	for _, o := range a.owners {
		if !has[o] {
			kept = append(kept, o)
		}
	}
	a.total -= len(a.owners) - len(kept)
	a.owners = kept
}

// all is every part of the addition, the ownerships' included.
func (a addition) all(ownerGraph string) []graphTriples {
	if len(a.owners) == 0 {
		return a.parts
	}
	owns := rdf.NewURIRefUnsafe(ownsIRI)
	ts := make([]rdf.Triple, len(a.owners))
	for i, o := range a.owners {
		ts[i] = rdf.Triple{Subject: rdf.NewURIRefUnsafe(o.entity), Predicate: owns, Object: rdf.NewURIRefUnsafe(o.node)}
	}
	return append(a.parts[:len(a.parts):len(a.parts)], graphTriples{ownerGraph, ts})
}

// ops are the INSERT DATA operations of a small addition, one a graph.
func (b *Backend) ops(a addition) []string {
	var out []string
	for _, part := range a.all(b.ownerGraph) {
		text, _ := dataUpdate("INSERT DATA", part.graph, part.triples)
		out = append(out, text)
	}
	return out
}

// post loads an addition in batches (by the Graph Store protocol when the server has
// one).
func (b *Backend) post(ctx context.Context, a addition) error {
	for _, part := range a.all(b.ownerGraph) {
		if err := b.c.PostTriples(ctx, part.graph, part.triples); err != nil {
			return err
		}
	}
	return nil
}

// insert adds descriptions, in one request when they are few. It returns what it
// added, whose nodes routing must see.
func (b *Backend) insert(ctx context.Context, descs []graph.Description) (addition, error) {
	a := b.additions(descs)
	if a.total > 0 && a.total <= b.c.cfg.BatchTriples {
		if err := b.c.Update(ctx, joinOps(b.ops(a))); err == nil || !tooBig(err) {
			return a, err
		}
	}
	return a, b.post(ctx, a)
}

// Query implements graph.Backend for a query that passed graph.Check: it runs on the
// server with the projection as the default graph, at most lim.Rows rows (one more is
// asked for to report TRUNCATED, and Virtuoso's silent cap is detected), within
// lim.Timeout. On Virtuoso, transitive paths with a constant end use its transitive
// option. Errors: QUERY_INVALID, EXECUTION_TIMEOUT, GRAPH_UNAVAILABLE.
func (b *Backend) Query(ctx context.Context, query string, lim graph.Limits) (*graph.Result, error) {
	c, err := graph.Check(query)
	if err != nil {
		return nil, err
	}
	lim = limitsWithDefaults(lim)
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	text := c.Text
	if c.Form == graph.FormDescribe {
		text = c.DescribeSelect()
	}
	if !b.c.st.answered.Load() {
		_ = b.c.Ping(ctx) // learn which server it is before the first query
	}
	if b.c.IsVirtuoso() {
		text = RewriteTransitive(text)
	}
	q := b.withDataset(lim.IncludeDeleted)
	switch c.Form {
	case graph.FormAsk:
		res, _, err := q.Select(ctx, text)
		if err != nil {
			return nil, queryError(err, lim)
		}
		return &graph.Result{Form: graph.FormAsk, Boolean: res.AskResult, Completeness: graph.Complete}, nil
	case graph.FormConstruct:
		return b.construct(ctx, q, text, lim)
	case graph.FormDescribe:
		return b.describe(ctx, q, text, lim)
	}
	lr, err := q.Limited(ctx, text, lim.Rows)
	if err != nil {
		return nil, queryError(err, lim)
	}
	r := &graph.Result{Form: graph.FormSelect, Vars: lr.Result.Vars, Completeness: graph.Completeness(lr.Completeness)}
	for _, row := range lr.Result.Bindings {
		out := make([]graph.Term, len(r.Vars))
		for i, v := range r.Vars {
			out[i] = fromRDF(row[v])
		}
		r.Rows = append(r.Rows, out)
	}
	return r, nil
}

// construct runs a CONSTRUCT with at most lim.Rows+1 solutions and answers at most
// lim.Rows triples, TRUNCATED when there were more.
func (b *Backend) construct(ctx context.Context, q *Client, text string, lim graph.Limits) (*graph.Result, error) {
	limited, err := WithLimit(text, lim.Rows+1)
	if err != nil {
		return nil, graph.Errorf(graph.CodeQueryInvalid, "%s", err.Error())
	}
	g, err := q.Construct(ctx, limited)
	if err != nil {
		return nil, queryError(err, lim)
	}
	r := &graph.Result{Form: graph.FormConstruct, Completeness: graph.Complete}
	for t := range g.Triples(nil, nil, nil) {
		r.Triples = append(r.Triples, graph.Triple{S: fromRDF(t.Subject), P: graph.IRI(t.Predicate.Value()), O: fromRDF(t.Object)})
	}
	sortTriples(r.Triples)
	if len(r.Triples) > lim.Rows {
		r.Triples, r.Completeness = r.Triples[:lim.Rows], graph.Truncated
	}
	return r, nil
}

// describe finds the described resources with the DESCRIBE's SELECT, then answers the
// triples whose subject is one of them (as the embedded store does).
func (b *Backend) describe(ctx context.Context, q *Client, sel string, lim graph.Limits) (*graph.Result, error) {
	lr, err := q.Limited(ctx, sel, lim.Rows)
	if err != nil {
		return nil, queryError(err, lim)
	}
	seen := map[string]bool{}
	var subjects []string
	for _, row := range lr.Result.Bindings {
		for _, t := range row {
			if u, ok := t.(rdf.URIRef); ok && !seen[u.Value()] {
				seen[u.Value()] = true
				subjects = append(subjects, IRI(u.Value()))
			}
		}
	}
	r := &graph.Result{Form: graph.FormDescribe, Completeness: graph.Completeness(lr.Completeness)}
	if len(subjects) == 0 {
		return r, nil
	}
	sort.Strings(subjects)
	tq := "SELECT ?s ?p ?o WHERE { VALUES ?s { " + strings.Join(subjects, " ") + " } ?s ?p ?o }"
	tr, err := q.Limited(ctx, tq, lim.Rows)
	if err != nil {
		return nil, queryError(err, lim)
	}
	for _, row := range tr.Result.Bindings {
		r.Triples = append(r.Triples, graph.Triple{S: fromRDF(row["s"]), P: fromRDF(row["p"]), O: fromRDF(row["o"])})
	}
	if tr.Completeness == Truncated {
		r.Completeness = graph.Truncated
	}
	sortTriples(r.Triples)
	return r, nil
}

// withDataset is a client whose queries name the projection as their default graph.
func (b *Backend) withDataset(includeDeleted bool) *Client {
	graphs := []string{b.live}
	if includeDeleted {
		graphs = append(graphs, b.deleted)
	}
	return b.c.withDefaultGraphs(graphs)
}

// limitsWithDefaults fills and clamps lim as the embedded store does.
func limitsWithDefaults(lim graph.Limits) graph.Limits {
	if lim.Rows <= 0 {
		lim.Rows = graph.DefaultRows
	}
	lim.Rows = min(lim.Rows, graph.MaxRows)
	if lim.Timeout <= 0 {
		lim.Timeout = graph.DefaultTimeout
	}
	lim.Timeout = min(lim.Timeout, graph.MaxTimeout)
	return lim
}

// queryError maps a client error to the graph's stable codes.
func queryError(err error, lim graph.Limits) error {
	var re *RefusedError
	switch {
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return graph.Errorf(graph.CodeTimeout, "the remote store did not answer within %s", lim.Timeout)
	case errors.Is(err, ErrTooLarge):
		return graph.Errorf(graph.CodeLimitExceeded, "the remote store's answer is larger than the output bound; add a LIMIT or select fewer values")
	case errors.As(err, &re) && re.Status == 400:
		return graph.Errorf(graph.CodeQueryInvalid, "the remote store refused the query: %s", re.Message)
	}
	return unavailable(err)
}

// unavailable maps a failed exchange with the server to GRAPH_UNAVAILABLE; the message
// says what failed without any credential.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return graph.Errorf(graph.CodeUnavailable, "the remote SPARQL store failed: %s", err.Error())
}

// toRDFTriple converts a graph triple; false when it is not a valid RDF statement.
func toRDFTriple(t graph.Triple) (rdf.Triple, bool) {
	if t.P.Kind != graph.KindIRI {
		return rdf.Triple{}, false
	}
	var s rdf.Subject
	switch t.S.Kind {
	case graph.KindIRI:
		s = rdf.NewURIRefUnsafe(t.S.Value)
	case graph.KindBlank:
		s = rdf.NewBNode(t.S.Value)
	default:
		return rdf.Triple{}, false
	}
	o, ok := toRDF(t.O)
	if !ok {
		return rdf.Triple{}, false
	}
	return rdf.Triple{Subject: s, Predicate: rdf.NewURIRefUnsafe(t.P.Value), Object: o}, true
}

// toRDF converts a graph term; false for the zero term.
func toRDF(t graph.Term) (rdf.Term, bool) {
	switch t.Kind {
	case graph.KindIRI:
		return rdf.NewURIRefUnsafe(t.Value), true
	case graph.KindBlank:
		return rdf.NewBNode(t.Value), true
	case graph.KindLiteral:
		switch {
		case t.Lang != "":
			return rdf.NewLiteral(t.Value, rdf.WithLang(t.Lang)), true
		case t.Datatype != "" && t.Datatype != xsdString:
			return rdf.NewLiteral(t.Value, rdf.WithDatatype(rdf.NewURIRefUnsafe(t.Datatype))), true
		}
		return rdf.NewLiteral(t.Value), true
	}
	return nil, false
}

// fromRDF converts a goRDFlib term to a graph term (the zero term for nil).
func fromRDF(t rdf.Term) graph.Term {
	switch v := t.(type) {
	case rdf.URIRef:
		return graph.IRI(v.Value())
	case rdf.BNode:
		return graph.Blank(v.Value())
	case rdf.Literal:
		out := graph.Term{Kind: graph.KindLiteral, Value: v.Lexical(), Lang: v.Language()}
		if out.Lang == "" {
			if dt := v.Datatype().Value(); dt != xsdString {
				out.Datatype = dt
			}
		}
		return canonical(out)
	}
	return graph.Term{}
}

// sortTriples orders triples by subject, predicate and object, for stable answers.
func sortTriples(ts []graph.Triple) {
	key := func(t graph.Term) string {
		return fmt.Sprint(t.Kind, "\x00", t.Value, "\x00", t.Datatype, "\x00", t.Lang)
	}
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.S != b.S {
			return key(a.S) < key(b.S)
		}
		if a.P != b.P {
			return key(a.P) < key(b.P)
		}
		return key(a.O) < key(b.O)
	})
}

// dataQuery is the form body of a query with its default graphs.
func dataQuery(query string, defaultGraphs []string) string {
	v := url.Values{"query": {query}}
	for _, g := range defaultGraphs {
		v.Add("default-graph-uri", g)
	}
	return v.Encode()
}

// canonical undoes the lexical changes Virtuoso makes to the literals it stores, so
// that answers match the projection's (and the embedded store's): booleans come back as
// 0 and 1, and date-times with their fraction padded (06:17:13.010Z for 06:17:13.01Z);
// the projection writes them as Go's RFC 3339 with nanoseconds, in UTC.
func canonical(t graph.Term) graph.Term {
	switch t.Datatype {
	case xsdBoolean:
		switch t.Value {
		case "0":
			t.Value = "false"
		case "1":
			t.Value = "true"
		}
	case xsdDateTime:
		if v, err := time.Parse(time.RFC3339Nano, t.Value); err == nil {
			t.Value = v.UTC().Format(time.RFC3339Nano)
		}
	}
	return t
}
