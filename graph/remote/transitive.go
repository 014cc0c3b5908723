package remote

import (
	"regexp"
	"strconv"
	"strings"
)

// transitivePattern matches a triple pattern whose predicate is one IRI (or prefixed
// name) under + or *, with a constant IRI or prefixed name at one end: S P+ O.
var transitivePattern = regexp.MustCompile(
	`(<[^<>"{}|^\x60\\\s]*>|[A-Za-z][\w.-]*:[\w.-]*|[?$]\w+)\s+(<[^<>"{}|^\x60\\\s]*>|[A-Za-z][\w-]*:[\w.-]*|a)([+*])\s+(<[^<>"{}|^\x60\\\s]*>|[A-Za-z][\w.-]*:[\w.-]*|[?$]\w+)`)

// RewriteTransitive rewrites the transitive property paths of query that Virtuoso
// evaluates badly into Virtuoso's own transitive option: a pattern `S P+ O` (or `P*`)
// with a constant at one end becomes `S P O OPTION (TRANSITIVE, t_distinct, t_min(1))`
// (t_min(0) for `*`). Over a dense lineage graph Virtuoso's evaluation of a plain
// `prov:wasDerivedFrom+` exhausts its transitive memory; the option answers in
// milliseconds. Patterns with variables at both ends, and text inside string literals,
// are left alone. Only for a Virtuoso endpoint: the option is not standard SPARQL.
func RewriteTransitive(query string) string {
	if len(query) > MaxQueryBytes || !strings.ContainsAny(query, "+*") {
		return query
	}
	// Rewrite only outside string literals and comments.
	var b strings.Builder
	last := 0
	for _, span := range codeSpans(query) {
		b.WriteString(query[last:span[0]])
		b.WriteString(rewriteSpan(query[span[0]:span[1]]))
		last = span[1]
	}
	b.WriteString(query[last:])
	return b.String()
}

// subLimit keeps Virtuoso from inlining the closure's sub-query into the enclosing
// group (a sub-query with a LIMIT is evaluated on its own); it is far above any closure
// a bounded answer can use.
const subLimit = "LIMIT 1000000"

// rewriteSpan rewrites the transitive patterns of one stretch of code. A pattern with
// a variable end becomes a sub-query naming the closure's start (t_in, bound by a
// FILTER to the constant end) and its end (t_out), with a LIMIT: inlined in a larger
// group, Virtuoso (its own property paths too) starts the closure from whichever end a
// join binds first and misses nodes.
func rewriteSpan(s string) string {
	var b strings.Builder
	last, n := 0, 0
	for _, m := range transitivePattern.FindAllStringSubmatchIndex(s, -1) {
		subj, pred, op, obj := s[m[2]:m[3]], s[m[4]:m[5]], s[m[6]:m[7]], s[m[8]:m[9]]
		rest := strings.TrimLeft(s[m[1]:], " \t\r\n")
		ends := rest == "" || rest[0] == '.' || rest[0] == '}'
		if (isVar(subj) && isVar(obj)) || !ends {
			continue
		}
		minimum := "1"
		if op == "*" {
			minimum = "0"
		}
		pattern := subj + " " + pred + " " + obj + " OPTION (TRANSITIVE, t_distinct, t_min(" + minimum + "))"
		start := "?__t" + strconv.Itoa(n)
		n++
		switch {
		case isVar(obj):
			// From the subject to the objects.
			pattern = "{ SELECT " + obj + " WHERE { " + start + " " + pred + " " + obj + " OPTION (TRANSITIVE, t_distinct, t_in(" +
				start + "), t_out(" + obj + "), t_min(" + minimum + ")) . FILTER (" + start + " = " + subj + ") } " + subLimit + " }"
		case isVar(subj):
			// From the object back to the subjects.
			pattern = "{ SELECT " + subj + " WHERE { " + subj + " " + pred + " " + start + " OPTION (TRANSITIVE, t_distinct, t_in(" +
				start + "), t_out(" + subj + "), t_min(" + minimum + ")) . FILTER (" + start + " = " + obj + ") } " + subLimit + " }"
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(pattern)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// isVar reports whether a term is a variable.
func isVar(t string) bool { return strings.HasPrefix(t, "?") || strings.HasPrefix(t, "$") }

// codeSpans are the [start, end) stretches of q outside string literals and comments.
func codeSpans(q string) [][2]int {
	var spans [][2]int
	start := 0
	i := 0
	for i < len(q) {
		switch q[i] {
		case '"', '\'':
			spans = append(spans, [2]int{start, i})
			i, _ = skipString(q, i)
			start = i
		case '#':
			// A '#' inside an IRI is no comment.
			if inIRI(q, i) {
				i++
				continue
			}
			spans = append(spans, [2]int{start, i})
			for i < len(q) && q[i] != '\n' {
				i++
			}
			start = i
		case '<':
			j := i + 1
			for j < len(q) && q[j] != '>' && q[j] != ' ' && q[j] != '\n' && q[j] != '\t' {
				j++
			}
			if j < len(q) && q[j] == '>' {
				i = j + 1
			} else {
				i++
			}
		default:
			i++
		}
	}
	spans = append(spans, [2]int{start, len(q)})
	return spans
}

// inIRI reports whether position i of q is inside an <IRI>.
func inIRI(q string, i int) bool {
	open := strings.LastIndexAny(q[:i], "<> \t\n")
	return open >= 0 && q[open] == '<'
}
