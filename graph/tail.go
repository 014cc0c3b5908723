package graph

import (
	"strings"
	"unicode/utf8"
)

// checkTail refuses text after the end of the query: anything after the query's
// pattern other than its solution modifiers (GROUP BY, HAVING, ORDER BY, LIMIT and
// OFFSET) and a final VALUES block, in SPARQL's order, each once. The embedded
// engine's parser stops after the last clause it knows and ignores what follows, so
// without this `… } LIMT 5` or `… } LIMIT 5 ORDER BY ?x` would run as if the words were
// not there, while a remote store refuses them. toks are lex's, at is the index of the
// form keyword. It returns the digits of the outer LIMIT, "" when there is none.
// Errors: QUERY_INVALID.
func checkTail(toks []token, at int, form Form) (limit string, err error) {
	i, err := patternEnd(toks, at, form)
	if err != nil {
		return "", err
	}
	stage := 0 // the last clause seen: 1 GROUP BY, 2 HAVING, 3 ORDER BY, 4 LIMIT/OFFSET
	seen := map[string]bool{}
	for i < len(toks) {
		w := keyword(toks[i])
		switch {
		case (w == "GROUP" || w == "ORDER") && stage < clauseStage[w] && keyword(at1(toks, i+1)) == "BY":
			stage = clauseStage[w]
			if i, err = conditions(toks, i+2, w+" BY"); err != nil {
				return "", err
			}
		case w == "HAVING" && stage < clauseStage[w]:
			stage = clauseStage[w]
			if i, err = conditions(toks, i+1, w); err != nil {
				return "", err
			}
		case (w == "LIMIT" || w == "OFFSET") && stage <= clauseStage[w] && !seen[w]:
			stage, seen[w] = clauseStage[w], true
			n := at1(toks, i+1)
			if n.kind != tokNumber || strings.Trim(n.text, "0123456789") != "" {
				return "", Errorf(CodeQueryInvalid, "%s must be followed by a whole number", w)
			}
			if w == "LIMIT" {
				limit = n.text
			}
			i += 2
		case w == "VALUES":
			return limit, valuesEnd(toks, i+1)
		default:
			return "", Errorf(CodeQueryInvalid, "unexpected %q after the query's pattern at offset %d; only GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET and a final VALUES block may follow it, in that order",
				clip(toks[i].text), toks[i].start)
		}
	}
	return limit, nil
}

// clauseStage orders the solution modifiers as SPARQL's grammar does.
var clauseStage = map[string]int{"GROUP": 1, "HAVING": 2, "ORDER": 3, "LIMIT": 4, "OFFSET": 4}

// patternEnd is the index of the first token after the query's pattern: the first
// group at the top level, or, for a CONSTRUCT whose first group is its template, the
// group after it. A DESCRIBE without a pattern ends after the resources it names.
func patternEnd(toks []token, at int, form Form) (int, error) {
	i, where := at+1, false
	for ; i < len(toks) && !opens(toks[i], "{"); i++ {
		if keyword(toks[i]) == "WHERE" {
			where = true
		}
		if form == FormDescribe && !where && !describes(toks[i]) {
			return i, nil
		}
	}
	if i == len(toks) {
		if form == FormDescribe {
			return i, nil
		}
		return 0, Errorf(CodeQueryInvalid, "the query has no pattern in braces")
	}
	i = skipGroup(toks, i)
	if form == FormConstruct && !where {
		// The group was the template: the pattern follows, after an optional WHERE.
		if keyword(at1(toks, i)) == "WHERE" {
			i++
		}
		if !opens(at1(toks, i), "{") {
			return 0, Errorf(CodeQueryInvalid, "CONSTRUCT's template must be followed by a pattern in braces")
		}
		i = skipGroup(toks, i)
	}
	return i, nil
}

// describes reports whether t can stand between DESCRIBE and its pattern.
func describes(t token) bool {
	return t.depth == 0 && (t.kind == tokVar || t.kind == tokIRI || t.kind == tokPName || t.text == "*")
}

// conditions skips the conditions of a GROUP BY, HAVING or ORDER BY clause from i (at
// least one) and returns the index after them.
func conditions(toks []token, i int, clause string) (int, error) {
	start := i
loop:
	for i < len(toks) {
		t := toks[i]
		switch w := keyword(t); {
		case opens(t, "("):
			i = skipGroup(toks, i)
		case t.kind == tokVar && clause != "HAVING":
			i++
		case (w == "ASC" || w == "DESC") && clause == "ORDER BY" && opens(at1(toks, i+1), "("):
			i = skipGroup(toks, i+1)
		case (t.kind == tokWord && clauseStage[w] == 0 && w != "VALUES" || t.kind == tokPName || t.kind == tokIRI) &&
			opens(at1(toks, i+1), "("): // a function call
			i = skipGroup(toks, i+1)
		default:
			break loop
		}
	}
	if i == start {
		return 0, Errorf(CodeQueryInvalid, "%s must be followed by at least one condition", clause)
	}
	return i, nil
}

// valuesEnd checks a final VALUES block from i, just after the keyword: one variable
// or a parenthesised list of them, then one group, then the end of the text.
func valuesEnd(toks []token, i int) error {
	switch t := at1(toks, i); {
	case t.kind == tokVar:
		i++
	case opens(t, "("):
		i = skipGroup(toks, i)
	default:
		return Errorf(CodeQueryInvalid, "VALUES must be followed by a variable or a list of variables")
	}
	if !opens(at1(toks, i), "{") {
		return Errorf(CodeQueryInvalid, "VALUES must be followed by its values in braces")
	}
	if i = skipGroup(toks, i); i < len(toks) {
		return Errorf(CodeQueryInvalid, "unexpected %q after the final VALUES block at offset %d", clip(toks[i].text), toks[i].start)
	}
	return nil
}

// skipGroup returns the index after the group whose opening bracket is toks[i]. lex
// has checked that every bracket is closed.
func skipGroup(toks []token, i int) int {
	inner := toks[i].depth + 1
	for j := i + 1; j < len(toks); j++ {
		if toks[j].depth == inner && toks[j].kind == tokPunct && strings.ContainsAny(toks[j].text, "})]") {
			return j + 1
		}
	}
	return len(toks)
}

// at1 is toks[i], or a zero token past the end.
func at1(toks []token, i int) token {
	if i < len(toks) {
		return toks[i]
	}
	return token{depth: -1}
}

// opens reports whether t is the bracket b at the top level.
func opens(t token, b string) bool { return t.depth == 0 && t.kind == tokPunct && t.text == b }

// keyword is t's text in upper case when t is a bare word at the top level, else "".
func keyword(t token) string {
	if t.kind != tokWord || t.depth != 0 {
		return ""
	}
	return strings.ToUpper(t.text)
}

// clip shortens a token quoted in a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	n := 40
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
