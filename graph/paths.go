package graph

import (
	"github.com/tggo/goRDFlib/graph"
	"github.com/tggo/goRDFlib/paths"
	"github.com/tggo/goRDFlib/term"
)

// literalSafePath is a parsed property path that Meridian evaluates itself instead of
// goRDFlib v0.1.5's paths package. That package takes a path's start as a
// term.Subject, so a literal start (a constant, a variable bound to a literal, or the
// middle of a sequence such as dct:identifier/^dct:identifier) is dropped and the step
// is evaluated as if its start were free: `"B" ^dct:identifier ?t` answered every
// entity with an identifier instead of the one whose identifier is "B", and p* never
// paired a literal end with itself. Here both ends are terms, literals included, as
// SPARQL 1.1 defines path evaluation (a forward step from a literal finds nothing; an
// inverse step from one finds the subjects pointing at it; a zero-length path pairs
// any term with itself).
//
// The engine still passes the start as a term.Subject, so plan rewrites a path triple
// whose start may be a literal into its inverse (`S P O` is `O ^P S`), which puts the
// literal at the end, where it survives. The embedded path keeps its text form.
type literalSafePath struct{ paths.Path }

// Eval implements paths.Path.
func (p literalSafePath) Eval(g *graph.Graph, subj term.Subject, obj term.Term) func(yield func(term.Term, term.Term) bool) {
	var s term.Term
	if subj != nil {
		s = subj
	}
	return func(yield func(term.Term, term.Term) bool) { evalPath(g, p.Path, s, obj, yield) }
}

// evalPath yields the (start, end) pairs of p from s to o, each nil when free. It
// reports false when yield asked to stop.
func evalPath(g *graph.Graph, p paths.Path, s, o term.Term, yield func(s, o term.Term) bool) bool {
	switch x := p.(type) {
	case literalSafePath:
		return evalPath(g, x.Path, s, o, yield)
	case paths.URIRefPath:
		return step(g, &x.URI, nil, s, o, yield)
	case *paths.URIRefPath:
		return step(g, &x.URI, nil, s, o, yield)
	case *paths.NegatedPath:
		return step(g, nil, x.Excluded, s, o, yield)
	case *paths.InvPath:
		return evalPath(g, x.Arg, o, s, func(a, b term.Term) bool { return yield(b, a) })
	case *paths.AlternativePath:
		for _, alt := range x.Args {
			if !evalPath(g, alt, s, o, yield) {
				return false
			}
		}
		return true
	case *paths.SequencePath:
		return sequence(g, x.Args, s, o, yield)
	case *paths.MulPath:
		return repeat(g, x, s, o, yield)
	}
	// A path type this version does not know: goRDFlib's own evaluation, which is
	// right for any start but a literal (that finds nothing here).
	subj, ok := s.(term.Subject)
	if s != nil && !ok {
		return true
	}
	more := true
	p.Eval(g, subj, o)(func(a, b term.Term) bool {
		more = yield(a, b)
		return more
	})
	return more
}

// step yields the triples of predicate pred (any predicate but excluded when pred is
// nil) from s to o. A literal is never a subject, so a literal start finds nothing.
func step(g *graph.Graph, pred *term.URIRef, excluded []term.URIRef, s, o term.Term, yield func(s, o term.Term) bool) bool {
	var subj term.Subject
	if s != nil {
		var ok bool
		if subj, ok = s.(term.Subject); !ok {
			return true
		}
	}
	more := true
	g.Triples(subj, pred, o)(func(t term.Triple) bool {
		for _, x := range excluded {
			if t.Predicate == x {
				return true
			}
		}
		more = yield(t.Subject, t.Object)
		return more
	})
	return more
}

// sequence yields the pairs of args[0]/args[1]/…, walking from whichever end is bound
// (the start when both are or neither is).
func sequence(g *graph.Graph, args []paths.Path, s, o term.Term, yield func(s, o term.Term) bool) bool {
	switch len(args) {
	case 0:
		return true
	case 1:
		return evalPath(g, args[0], s, o, yield)
	}
	if s == nil && o != nil {
		last, rest := args[len(args)-1], args[:len(args)-1]
		return evalPath(g, last, nil, o, func(mid, end term.Term) bool {
			return sequence(g, rest, nil, mid, func(start, _ term.Term) bool { return yield(start, end) })
		})
	}
	return evalPath(g, args[0], s, nil, func(start, mid term.Term) bool {
		return sequence(g, args[1:], mid, o, func(_, end term.Term) bool { return yield(start, end) })
	})
}

// repeat yields the distinct pairs of p*, p+ or p?: a walk from the bound end (every
// node of the graph, literals included, when neither is), each node visited once.
func repeat(g *graph.Graph, p *paths.MulPath, s, o term.Term, yield func(s, o term.Term) bool) bool {
	if s == nil && o != nil {
		return walk(g, p, o, s, true, func(end, start term.Term) bool { return yield(start, end) })
	}
	if s != nil {
		return walk(g, p, s, o, false, yield)
	}
	for _, n := range g.AllNodes() {
		if !walk(g, p, n, nil, false, yield) {
			return false
		}
	}
	return true
}

// walk yields (from, n) for every node n that p's repetition reaches from `from`,
// forward or (backward) against the steps, keeping only n = to when to is bound.
func walk(g *graph.Graph, p *paths.MulPath, from, to term.Term, backward bool, yield func(from, n term.Term) bool) bool {
	seen := map[string]bool{}
	match := func(n term.Term) bool { return to == nil || term.TermKey(n) == term.TermKey(to) }
	if p.Zero {
		seen[term.TermKey(from)] = true
		if match(from) && !yield(from, from) {
			return false
		}
	}
	frontier := []term.Term{from}
	for len(frontier) > 0 {
		var next []term.Term
		for _, n := range frontier {
			ok := true
			visit := func(m term.Term) bool {
				if k := term.TermKey(m); !seen[k] {
					seen[k] = true
					next = append(next, m)
					if match(m) && !yield(from, m) {
						ok = false
						return false
					}
				}
				return true
			}
			if backward {
				evalPath(g, p.Path, nil, n, func(m, _ term.Term) bool { return visit(m) })
			} else {
				evalPath(g, p.Path, n, nil, func(_, m term.Term) bool { return visit(m) })
			}
			if !ok {
				return false
			}
		}
		if !p.More {
			break
		}
		frontier = next
	}
	return true
}
