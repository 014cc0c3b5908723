package graph

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	rdflib "github.com/tggo/goRDFlib"
	"github.com/tggo/goRDFlib/sparql"
	"github.com/tggo/goRDFlib/term"
)

// Embedded is the in-process Backend: goRDFlib's SPARQL engine over a Store. A query
// runs in its own goroutine holding the store's read lock; the caller waits until the
// query ends or its deadline passes. A query past its deadline keeps its goroutine (and
// so its concurrency slot, see Service) until the view has stopped it, which takes at
// most a few thousand visited triples.
type Embedded struct {
	store atomic.Pointer[Store]
	// next is the store a rebuild fills (BeginRebuild, Load) while queries read the current
	// one; Commit makes it current. Only the synchroniser touches it, under its lock.
	next *Store
}

var _ Backend = (*Embedded)(nil)

// NewEmbedded returns an Embedded backend over an empty Store.
func NewEmbedded() *Embedded {
	e := &Embedded{}
	e.store.Store(NewStore())
	return e
}

// Store returns the backend's current triple store.
func (e *Embedded) Store() *Store { return e.store.Load() }

// install makes st the current store, dropping a rebuild under way. Only the
// synchroniser calls it, under its lock.
func (e *Embedded) install(st *Store) {
	e.next = nil
	e.store.Store(st)
}

// Apply implements Backend, on the current store (and on a rebuild's, if one is under
// way).
func (e *Embedded) Apply(_ context.Context, d Delta) error {
	if e.next != nil {
		e.next.Apply(d)
	}
	e.Store().Apply(d)
	return nil
}

// Reset implements Backend: it empties the current store.
func (e *Embedded) Reset(context.Context) error {
	e.next = nil
	e.Store().Reset()
	return nil
}

// BeginRebuild implements Rebuilder: it starts a new store, which Load fills and
// Commit makes current, so queries keep answering from the old one meanwhile.
func (e *Embedded) BeginRebuild(context.Context) error {
	e.next = NewStore()
	return nil
}

// Load implements Backend.
func (e *Embedded) Load(_ context.Context, descs []Description) error {
	if e.next != nil {
		e.next.Load(descs)
		return nil
	}
	e.Store().Load(descs)
	return nil
}

// Commit implements Rebuilder: the store a rebuild filled becomes current.
func (e *Embedded) Commit(context.Context) error {
	if e.next != nil {
		e.store.Store(e.next)
		e.next = nil
	}
	return nil
}

// Query implements Backend; q must have passed Check. Errors: QUERY_INVALID,
// EXECUTION_TIMEOUT, QUERY_WORK_EXCEEDED.
func (e *Embedded) Query(ctx context.Context, q string, lim Limits) (*Result, error) {
	c, err := Check(q)
	if err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	text := c.Text
	if c.Form == FormDescribe {
		text = c.describe
	}
	deadline := time.Now().Add(lim.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	stop, evaluating := &atomic.Bool{}, &atomic.Bool{}
	done := make(chan struct{})
	var res *Result
	var qerr error
	go func() {
		defer close(done)
		parsed, err := parse(text)
		if err != nil {
			res, qerr = nil, err
			return
		}
		evaluating.Store(true)
		res, qerr = e.run(c.Form, parsed, lim, deadline, stop)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
		return res, qerr
	case <-ctx.Done():
	case <-timer.C:
	}
	// The evaluation stops at the view's next check; wait for it, so the caller's
	// concurrency slot is held until the work really ends. (A parse, which the view
	// cannot stop, is left to finish on its own.)
	stop.Store(true)
	if evaluating.Load() {
		<-done
	}
	if ctx.Err() != nil {
		return nil, Errorf(CodeTimeout, "the query was cancelled")
	}
	return nil, Errorf(CodeTimeout, "the query ran longer than %s; narrow its patterns or add a LIMIT", lim.Timeout)
}

// parse parses a checked query with goRDFlib, turning a panic into QUERY_INVALID.
func parse(text string) (q *sparql.ParsedQuery, err error) {
	defer func() {
		if r := recover(); r != nil {
			q, err = nil, Errorf(CodeQueryInvalid, "the query could not be parsed")
		}
	}()
	q, err = sparql.Parse(text)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "sparql parse error: ")
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return nil, Errorf(CodeQueryInvalid, "%s", msg)
	}
	return q, nil
}

// run evaluates the parsed query over a view of the store.
func (e *Embedded) run(form Form, parsed *sparql.ParsedQuery, lim Limits, deadline time.Time, stop *atomic.Bool) (res *Result, err error) {
	st := e.Store()
	st.mu.RLock()
	defer st.mu.RUnlock()
	v := &view{s: st, includeDeleted: lim.IncludeDeleted, budget: lim.Work, deadline: deadline, cancel: stop,
		ns: map[string]term.URIRef{}}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, Errorf(CodeQueryInvalid, "the query could not be evaluated")
		}
	}()
	plan(parsed)
	v.yieldCap = yieldCap(form, parsed, lim)
	g := rdflib.NewGraph(rdflib.WithStore(v))
	out, qerr := sparql.EvalQuery(g, parsed, nil)
	switch v.stopped {
	case stoppedWork:
		return nil, Errorf(CodeWorkExceeded, "the query visited more than %d triples; narrow its patterns (put the most selective first)", lim.Work)
	case stoppedTime:
		return nil, Errorf(CodeTimeout, "the query ran longer than %s; narrow its patterns or add a LIMIT", lim.Timeout)
	}
	if qerr != nil {
		return nil, Errorf(CodeQueryInvalid, "%s", qerr.Error())
	}
	switch form {
	case FormAsk:
		return &Result{Form: FormAsk, Boolean: out.AskResult, Completeness: Complete}, nil
	case FormConstruct:
		r := &Result{Form: FormConstruct, Completeness: Complete}
		if out.Graph != nil {
			out.Graph.Triples(nil, nil, nil)(func(t term.Triple) bool {
				if len(r.Triples) >= lim.Rows {
					r.Completeness = Truncated
					return false
				}
				r.Triples = append(r.Triples, Triple{S: fromRDF(t.Subject), P: IRI(t.Predicate.Value()), O: fromRDF(t.Object)})
				return true
			})
		}
		sortTriples(r.Triples)
		return r, nil
	case FormDescribe:
		return e.describe(v, out, lim)
	}
	r := &Result{Form: FormSelect, Vars: out.Vars, Completeness: Complete}
	if len(r.Vars) == 0 && len(out.Bindings) > 0 {
		r.Vars = varsOf(out.Bindings)
	}
	for _, b := range out.Bindings {
		if len(r.Rows) >= lim.Rows {
			r.Completeness = Truncated
			break
		}
		row := make([]Term, len(r.Vars))
		for i, name := range r.Vars {
			row[i] = fromRDF(b[name])
		}
		r.Rows = append(r.Rows, row)
	}
	return r, nil
}

// yieldCap returns how many triples a query whose WHERE is a single triple pattern
// (no path, no modifier that needs every solution) can need: its OFFSET plus its LIMIT
// or the row limit plus one (to tell a truncated answer), one for ASK; 0 when the
// query needs every match.
func yieldCap(form Form, q *sparql.ParsedQuery, lim Limits) int {
	bgp, ok := q.Where.(*sparql.BGP)
	if !ok || len(bgp.Triples) != 1 || bgp.Triples[0].PredicatePath != nil || len(q.OrderBy) > 0 || q.Distinct ||
		len(q.GroupBy) > 0 || q.Having != nil || len(q.ProjectExprs) > 0 {
		return 0
	}
	switch form {
	case FormAsk:
		return 1
	case FormSelect, FormConstruct:
		n := lim.Rows + 1
		if q.Limit >= 0 {
			n = min(n, q.Limit)
		}
		return max(q.Offset, 0) + n
	}
	return 0
}

// describe answers DESCRIBE: every visible triple whose subject is a described
// resource.
func (e *Embedded) describe(v *view, out *sparql.Result, lim Limits) (*Result, error) {
	r := &Result{Form: FormDescribe, Completeness: Complete}
	seen := map[string]bool{}
	for _, b := range out.Bindings {
		names := make([]string, 0, len(b))
		for n := range b {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			t := b[n]
			subj, ok := t.(term.Subject)
			if !ok || seen[term.TermKey(t)] {
				continue
			}
			seen[term.TermKey(t)] = true
			v.each(term.TriplePattern{Subject: subj}, func(rec *tripleRec) bool {
				if len(r.Triples) >= lim.Rows {
					r.Completeness = Truncated
					return false
				}
				tr := v.triple(rec)
				r.Triples = append(r.Triples, Triple{S: fromRDF(tr.Subject), P: IRI(tr.Predicate.Value()), O: fromRDF(tr.Object)})
				return true
			})
		}
	}
	if v.stopped == stoppedWork {
		return nil, Errorf(CodeWorkExceeded, "the query visited more than %d triples", lim.Work)
	}
	sortTriples(r.Triples)
	return r, nil
}

func varsOf(rows []map[string]rdflib.Term) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		for k := range r {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// withDefaults fills the zero fields of lim and clamps the others to their bounds.
func (lim Limits) withDefaults() Limits {
	if lim.Rows <= 0 {
		lim.Rows = DefaultRows
	}
	lim.Rows = min(lim.Rows, MaxRows)
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
	lim.Timeout = min(lim.Timeout, MaxTimeout)
	if lim.Work <= 0 {
		lim.Work = DefaultWork
	}
	return lim
}

// sortTriples orders triples by subject, predicate and object, for stable answers.
func sortTriples(ts []Triple) {
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.S != b.S {
			return termLess(a.S, b.S)
		}
		if a.P != b.P {
			return termLess(a.P, b.P)
		}
		return termLess(a.O, b.O)
	})
}

func termLess(a, b Term) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Value != b.Value {
		return a.Value < b.Value
	}
	return fmt.Sprint(a.Datatype, a.Lang) < fmt.Sprint(b.Datatype, b.Lang)
}
