package graph

import (
	"sync/atomic"
	"time"

	"github.com/tggo/goRDFlib/store"
	"github.com/tggo/goRDFlib/term"
)

// view is the goRDFlib store one query evaluates over: it reads the Store (whose read
// lock the query holds), hides soft-deleted nodes unless asked, and counts every triple
// it visits against the query's work budget and deadline. goRDFlib cannot be
// cancelled, so once the budget or the deadline is spent the view yields nothing more
// and evaluation winds down on empty iterators; the query then fails with the reason.
type view struct {
	s              *Store
	includeDeleted bool
	budget         int64
	deadline       time.Time
	cancel         *atomic.Bool // set by the caller to stop at once
	used           int64
	stopped        stopReason
	// yieldCap, when not 0, ends iteration after that many triples were yielded: a
	// single-pattern query needs no more (LIMIT short-circuit).
	yieldCap, yielded int
	ns                map[string]term.URIRef
}

// yieldShare is the part of the work budget a query may yield as solutions (1/4).
const yieldShare = 4

type stopReason uint8

const (
	notStopped stopReason = iota
	stoppedWork
	stoppedTime
)

var _ store.Store = (*view)(nil)
var _ store.QueryableStore = (*view)(nil)

// spend counts one visited triple and reports whether the query may go on.
func (v *view) spend() bool {
	if v.stopped != notStopped {
		return false
	}
	v.used++
	if v.used > v.budget {
		v.stopped = stoppedWork
		return false
	}
	if v.used&1023 == 0 && (time.Now().After(v.deadline) || v.cancel.Load()) {
		v.stopped = stoppedTime
		return false
	}
	return true
}

// candidates returns the shortest index list among the bound positions of the pattern,
// whether the pattern can match at all, and the ids of the bound positions (0 = free).
func (v *view) candidates(p term.TriplePattern) (list []uint32, all bool, sid, pid, oid uint32, ok bool) {
	s := v.s
	if p.Subject != nil {
		if sid = s.lookup(p.Subject); sid == 0 {
			return nil, false, 0, 0, 0, false
		}
	}
	if p.Predicate != nil {
		if pid = s.lookup(*p.Predicate); pid == 0 {
			return nil, false, 0, 0, 0, false
		}
	}
	if p.Object != nil {
		if oid = s.lookup(p.Object); oid == 0 {
			return nil, false, 0, 0, 0, false
		}
	}
	best := -1
	pick := func(id uint32, index termIndex) {
		if id == 0 {
			return
		}
		l := index.of(id)
		if best < 0 || len(l) < best {
			best, list = len(l), l
		}
	}
	if sid != 0 && pid != 0 {
		l := s.subjectPredicate(sid, pid)
		best, list = len(l), l
	} else {
		pick(sid, s.byS)
	}
	pick(oid, s.byO)
	pick(pid, s.byP)
	return list, best < 0, sid, pid, oid, true
}

// each calls f for every visible triple matching p until f returns false or the budget
// ends.
func (v *view) each(p term.TriplePattern, f func(r *tripleRec) bool) {
	list, all, sid, pid, oid, ok := v.candidates(p)
	if !ok {
		return
	}
	s := v.s
	match := func(r *tripleRec) bool {
		if r.refs == 0 || (sid != 0 && r.s != sid) || (pid != 0 && r.p != pid) || (oid != 0 && r.o != oid) {
			return false
		}
		if !v.includeDeleted && len(s.hidden) > 0 && (s.hidden[r.s] || s.hidden[r.o]) {
			return false
		}
		return true
	}
	if all {
		for id := 1; id < len(s.triples); id++ {
			if !v.spend() {
				return
			}
			if r := &s.triples[id]; match(r) && !f(r) {
				return
			}
		}
		return
	}
	for _, id := range list {
		if !v.spend() {
			return
		}
		if r := &s.triples[id]; match(r) && !f(r) {
			return
		}
	}
}

func (v *view) triple(r *tripleRec) term.Triple {
	s := v.s
	subj, _ := s.terms[r.s].(term.Subject)
	pred, _ := s.terms[r.p].(term.URIRef)
	return term.Triple{Subject: subj, Predicate: pred, Object: s.terms[r.o]}
}

// Triples yields the visible triples matching the pattern.
func (v *view) Triples(p term.TriplePattern, _ term.Term) store.TripleIterator {
	return func(yield func(term.Triple) bool) {
		v.each(p, func(r *tripleRec) bool {
			if v.yieldCap > 0 && v.yielded >= v.yieldCap {
				return false
			}
			// Every triple yielded becomes a solution the engine keeps in memory: a
			// quarter of the work budget bounds them.
			if v.yielded++; int64(v.yielded) > v.budget/yieldShare {
				v.stopped = stoppedWork
				return false
			}
			return yield(v.triple(r))
		})
	}
}

// TriplesWithLimit yields at most limit (0: any number) matching triples after
// skipping offset, so a single-pattern LIMIT stops early.
func (v *view) TriplesWithLimit(p term.TriplePattern, _ term.Term, limit, offset int) store.TripleIterator {
	return func(yield func(term.Triple) bool) {
		n := 0
		v.each(p, func(r *tripleRec) bool {
			if offset > 0 {
				offset--
				return true
			}
			if limit > 0 && n >= limit {
				return false
			}
			n++
			return yield(v.triple(r))
		})
	}
}

// Count counts the visible triples matching the pattern.
func (v *view) Count(p term.TriplePattern, _ term.Term) int {
	n := 0
	v.each(p, func(*tripleRec) bool { n++; return true })
	return n
}

// Exists reports whether a visible triple matches the pattern.
func (v *view) Exists(p term.TriplePattern, _ term.Term) bool {
	found := false
	v.each(p, func(*tripleRec) bool { found = true; return false })
	return found
}

// Len counts the visible triples.
func (v *view) Len(_ term.Term) int { return v.Count(term.TriplePattern{}, nil) }

// The view is read-only: writes during a query are ignored.
func (v *view) Add(term.Triple, term.Term)                  {}
func (v *view) AddN([]term.Quad)                            {}
func (v *view) Remove(term.TriplePattern, term.Term)        {}
func (v *view) Set(term.Triple, term.Term)                  {}
func (v *view) Contexts(*term.Triple) store.TermIterator    { return func(func(term.Term) bool) {} }
func (v *view) ContextAware() bool                          { return false }
func (v *view) TransactionAware() bool                      { return false }
func (v *view) Bind(prefix string, namespace term.URIRef)   { v.ns[prefix] = namespace }
func (v *view) Namespace(prefix string) (term.URIRef, bool) { u, ok := v.ns[prefix]; return u, ok }

// Prefix returns the prefix bound to a namespace.
func (v *view) Prefix(namespace term.URIRef) (string, bool) {
	for p, u := range v.ns {
		if u == namespace {
			return p, true
		}
	}
	return "", false
}

// Namespaces yields the bound prefixes.
func (v *view) Namespaces() store.NamespaceIterator {
	return func(yield func(string, term.URIRef) bool) {
		for p, u := range v.ns {
			if !yield(p, u) {
				return
			}
		}
	}
}
