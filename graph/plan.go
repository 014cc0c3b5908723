package graph

import (
	"strings"

	"github.com/tggo/goRDFlib/paths"
	"github.com/tggo/goRDFlib/sparql"
	"github.com/tggo/goRDFlib/term"
)

// goRDFlib v0.1.5 evaluates a basic graph pattern as nested loops in the order written,
// passing each solution's bindings to the next triple pattern. When a variable already
// bound to a literal stands in the subject position of a later pattern, the engine
// cannot pass a literal as a subject and looks the pattern up as if the variable were
// free, keeping the literal binding: every triple of the pattern's predicate then
// "matches" and the answer gets wrong rows. (Its MemoryStore does the same; the fault
// is in the engine, not in the store.) The common way to get there is a property path
// with both ends free written first, `?t skos:broader* ?top . ?top dct:identifier "X"`:
// its zero-length step pairs every node of the graph with itself, literals included,
// and the literal ?top then "has" the identifier "X".
//
// plan rewrites the parsed query, in place, before evaluation, so the engine is never
// in that state for a plain triple pattern:
//
//   - in each basic graph pattern, a property path whose two ends are both free is
//     moved after the first pattern that binds one of its ends (a join is commutative,
//     so the answer is the same, and the path is then evaluated from a bound end, which
//     also saves reading the whole graph);
//
//   - before a plain triple pattern whose subject variable is bound by an earlier
//     pattern of the same group (or by the group it is joined to) and may hold a
//     literal, a guard `?s (<urn:meridian:never>)? ?s` is inserted: for a bound IRI or
//     blank node it yields the one solution it was given, at no cost (the predicate is
//     not in the store); for a literal it yields nothing, as a correct engine would for
//     the pattern it guards.
//
//   - every property path is evaluated by literalSafePath rather than goRDFlib's paths
//     package, and a path whose start may be a literal (a literal constant, or a
//     variable an earlier pattern may have bound to one) is turned around (`S P O` is
//     `O ^P S`), since the engine drops a literal start but keeps a literal end; when
//     both ends may be literals, the start is guarded as above (a path between two
//     literals then finds nothing, where zero length would pair equal literals);
//
//   - the pattern of each EXISTS and NOT EXISTS is planned with the variables of the
//     filtered pattern taken as bound, since the engine evaluates it with each
//     solution's bindings.
func plan(q *sparql.ParsedQuery) {
	if q == nil {
		return
	}
	q.Where = planPattern(q.Where, nil)
}

// neverIRI is the predicate of the literal guard: no triple uses it.
const neverIRI = "urn:meridian:never"

// planPattern rewrites p; outer are the variables every solution reaching p binds
// (those of the pattern it is joined to), which may hold literals.
func planPattern(p sparql.Pattern, outer map[string]bool) sparql.Pattern {
	switch x := p.(type) {
	case *sparql.BGP:
		x.Triples = planBGP(x.Triples, outer)
	case *sparql.JoinPattern:
		x.Left = planPattern(x.Left, outer)
		x.Right = planPattern(x.Right, union(outer, certainVars(x.Left)))
	case *sparql.OptionalPattern:
		x.Main = planPattern(x.Main, outer)
		x.Optional = planPattern(x.Optional, union(outer, certainVars(x.Main)))
	case *sparql.UnionPattern:
		x.Left = planPattern(x.Left, nil)
		x.Right = planPattern(x.Right, nil)
	case *sparql.FilterPattern:
		x.Pattern = planPattern(x.Pattern, nil)
		planExists(x.Expr, union(outer, certainVars(x.Pattern)))
	case *sparql.BindPattern:
		x.Pattern = planPattern(x.Pattern, nil)
		planExists(x.Expr, union(outer, certainVars(x.Pattern)))
	case *sparql.MinusPattern:
		x.Left = planPattern(x.Left, nil)
		x.Right = planPattern(x.Right, nil)
	case *sparql.GraphPattern:
		x.Pattern = planPattern(x.Pattern, nil)
	case *sparql.SubqueryPattern:
		plan(x.Query)
	}
	return p
}

// planExists plans the patterns of the EXISTS and NOT EXISTS in e. The engine
// evaluates such a pattern once per solution of the filtered pattern, with that
// solution's bindings when the pattern is a basic graph pattern (bound, the variables
// of outer, which may hold literals) and without them otherwise.
func planExists(e sparql.Expr, outer map[string]bool) {
	switch x := e.(type) {
	case *sparql.ExistsExpr:
		if _, ok := x.Pattern.(*sparql.BGP); !ok {
			outer = nil
		}
		x.Pattern = planPattern(x.Pattern, outer)
	case *sparql.BinaryExpr:
		planExists(x.Left, outer)
		planExists(x.Right, outer)
	case *sparql.UnaryExpr:
		planExists(x.Arg, outer)
	case *sparql.FuncExpr:
		for _, a := range x.Args {
			planExists(a, outer)
		}
	}
}

// certainVars returns the variables bound in every solution of p (a subset is
// enough: it only decides where guards go).
func certainVars(p sparql.Pattern) map[string]bool {
	out := map[string]bool{}
	switch x := p.(type) {
	case *sparql.BGP:
		for _, t := range x.Triples {
			for _, v := range []string{t.Subject, t.Object} {
				if isVar(v) {
					out[v] = true
				}
			}
			if t.PredicatePath == nil && isVar(t.Predicate) {
				out[t.Predicate] = true
			}
		}
	case *sparql.ValuesPattern:
		// A variable may be UNDEF in some rows: a guard on it is then slower, not wrong.
		for _, v := range x.Vars {
			out["?"+strings.TrimPrefix(v, "?")] = true
		}
	case *sparql.JoinPattern:
		return union(certainVars(x.Left), certainVars(x.Right))
	case *sparql.OptionalPattern:
		return certainVars(x.Main)
	case *sparql.FilterPattern:
		return certainVars(x.Pattern)
	}
	return out
}

func union(a, b map[string]bool) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func isVar(s string) bool { return strings.HasPrefix(s, "?") }

// planBGP orders a basic graph pattern's triples (free-ended paths after a pattern
// binding an end) and guards the subjects that may hold literals.
func planBGP(ts []sparql.Triple, outer map[string]bool) []sparql.Triple {
	for i := range ts {
		if ts[i].PredicatePath != nil {
			ts[i].PredicatePath = literalSafePath{ts[i].PredicatePath}
		}
	}
	bound := map[string]bool{}
	for v := range outer {
		bound[v] = true
	}
	// maybeLiteral: bound variables that may hold a literal (bound in an object
	// position, by a path, or outside this pattern).
	maybeLiteral := map[string]bool{}
	for v := range outer {
		maybeLiteral[v] = true
	}
	free := func(v string) bool { return isVar(v) && !bound[v] }
	rest := append([]sparql.Triple(nil), ts...)
	out := make([]sparql.Triple, 0, len(ts)+1)
	for len(rest) > 0 {
		pick := 0
		for i, t := range rest {
			if t.PredicatePath != nil && free(t.Subject) && free(t.Object) && boundLater(t, i, rest) {
				continue
			}
			pick = i
			break
		}
		t := rest[pick]
		rest = append(rest[:pick], rest[pick+1:]...)
		mayBeLiteral := func(v string) bool { return isLiteralTerm(v) || (isVar(v) && bound[v] && maybeLiteral[v]) }
		if t.PredicatePath != nil && mayBeLiteral(t.Subject) && !isLiteralTerm(t.Object) {
			// The engine drops a literal start: start from the other end instead.
			t = invert(t)
		}
		if isVar(t.Subject) && bound[t.Subject] && maybeLiteral[t.Subject] {
			out = append(out, literalGuard(t.Subject))
			delete(maybeLiteral, t.Subject)
		}
		out = append(out, t)
		if isVar(t.Subject) && !bound[t.Subject] {
			bound[t.Subject] = true
			if t.PredicatePath != nil {
				maybeLiteral[t.Subject] = true
			}
		}
		if t.PredicatePath == nil && isVar(t.Predicate) {
			bound[t.Predicate] = true
		}
		if isVar(t.Object) && !bound[t.Object] {
			bound[t.Object] = true
			maybeLiteral[t.Object] = true
		}
	}
	return out
}

// boundLater reports whether a pattern of rest other than the i-th mentions an end of
// t, so that evaluating it first binds that end.
func boundLater(t sparql.Triple, i int, rest []sparql.Triple) bool {
	for j, u := range rest {
		if j == i {
			continue
		}
		for _, end := range []string{t.Subject, t.Object} {
			if end == u.Subject || end == u.Object || (u.PredicatePath == nil && end == u.Predicate) {
				return true
			}
		}
	}
	return false
}

// invert returns the path triple `S P O` as `O ^P S`, the same pattern.
func invert(t sparql.Triple) sparql.Triple {
	return sparql.Triple{Subject: t.Object, Predicate: "^(" + t.Predicate + ")", Object: t.Subject,
		PredicatePath: literalSafePath{paths.Inv(t.PredicatePath)}}
}

// isLiteralTerm reports whether a pattern term is a literal constant: quoted, a
// number or a boolean.
func isLiteralTerm(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '"' || c == '\'':
		return true
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		return true
	}
	return s == "true" || s == "false"
}

// literalGuard is `?v (<urn:meridian:never>)? ?v`: one solution for a bound IRI or
// blank node, none for a literal.
func literalGuard(v string) sparql.Triple {
	return sparql.Triple{Subject: v, Predicate: "<" + neverIRI + ">?", Object: v,
		PredicatePath: paths.ZeroOrOne(paths.AsPath(term.NewURIRefUnsafe(neverIRI)))}
}
