package remote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tggo/goRDFlib/sparql"
)

// Completeness of a limited answer.
const (
	Complete  = "COMPLETE"
	Truncated = "TRUNCATED"
)

// MaxQueryBytes bounds the query text the rewriting functions accept.
const MaxQueryBytes = 100_000

// LimitedResult is the answer of Limited.
type LimitedResult struct {
	Result *sparql.Result
	// Completeness is Complete or Truncated.
	Completeness string
}

// Limited runs a SELECT query with an outer row limit: it asks the server for one row
// more than limit (the query's own LIMIT is kept when it is smaller), so that more rows
// than the limit are reported TRUNCATED, and when the server says it capped the answer
// (Virtuoso's ResultSetMaxRows, announced in X-SPARQL-MaxRows) it probes one row past
// the cap before calling the answer complete. At most limit rows are returned. Errors:
// those of Select, and an error for a query whose text cannot carry a limit.
func (c *Client) Limited(ctx context.Context, query string, limit int) (*LimitedResult, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("sparql: limit must be positive")
	}
	own, offset := topLevelInt(query, "LIMIT"), topLevelInt(query, "OFFSET")
	want := limit
	probe := true // our limit binds: ask one more row
	if own >= 0 && own <= limit {
		want, probe = own, false
	}
	ask := want
	if probe {
		ask++
	}
	q, err := WithLimit(query, ask)
	if err != nil {
		return nil, err
	}
	res, raw, err := c.Select(ctx, q)
	if err != nil && ask > want && sortCapped(err) {
		// Virtuoso cannot sort past its cap: ask for the cap, then probe past it.
		ask = c.rowCap()
		if q, err = WithLimit(query, ask); err != nil {
			return nil, err
		}
		res, raw, err = c.Select(ctx, q)
		if err == nil && raw.MaxRows == 0 {
			raw.MaxRows = ask
		}
	}
	if err != nil {
		return nil, err
	}
	completeness := Complete
	n := len(res.Bindings)
	switch {
	case n > want:
		res.Bindings = res.Bindings[:want]
		completeness = Truncated
	case raw.MaxRows > 0 && n >= raw.MaxRows && (n < ask || n == want):
		// The server stopped at its cap: is there a row after it?
		if offset < 0 {
			offset = 0
		}
		more, err := c.rowExistsAt(ctx, query, offset+n)
		if err != nil {
			return nil, err
		}
		if more {
			completeness = Truncated
		}
	}
	return &LimitedResult{Result: res, Completeness: completeness}, nil
}

// virtuosoRowCap is Virtuoso's default ResultSetMaxRows.
const virtuosoRowCap = 10000

// rowCap is the row cap the server announced, or Virtuoso's default.
func (c *Client) rowCap() int {
	if n := c.st.maxRows.Load(); n > 0 {
		return int(n)
	}
	return virtuosoRowCap
}

// sortCapped reports whether err is Virtuoso refusing to sort more rows than its cap
// (SR353).
func sortCapped(err error) bool {
	return errors.Is(err, ErrRefused) && strings.Contains(err.Error(), "SR353")
}

// rowExistsAt reports whether query has a solution at position at (0-based). The
// query's top-level ORDER BY is dropped: order does not change how many rows there are,
// and Virtuoso cannot sort past its cap.
func (c *Client) rowExistsAt(ctx context.Context, query string, at int) (bool, error) {
	q, err := withModifier(withoutOrderBy(query), "OFFSET", at)
	if err != nil {
		return false, err
	}
	if q, err = WithLimit(q, 1); err != nil {
		return false, err
	}
	res, _, err := c.Select(ctx, q)
	if err != nil {
		return false, err
	}
	return len(res.Bindings) > 0, nil
}

// WithLimit returns query with its top-level LIMIT set to limit: an existing top-level
// LIMIT is replaced, otherwise one is added after the solution modifiers (before a
// trailing VALUES block). Nested sub-queries are left alone.
func WithLimit(query string, limit int) (string, error) {
	return withModifier(query, "LIMIT", limit)
}

// withModifier sets the top-level solution modifier kw (LIMIT or OFFSET) to n.
func withModifier(query, kw string, n int) (string, error) {
	if len(query) > MaxQueryBytes {
		return "", fmt.Errorf("sparql: query longer than %d bytes", MaxQueryBytes)
	}
	toks := scanTopLevel(query)
	switch {
	case toks.unbalanced:
		return "", fmt.Errorf("sparql: unbalanced braces")
	case toks.openString:
		return "", fmt.Errorf("sparql: a string literal is not closed")
	}
	for _, t := range toks.words {
		if strings.EqualFold(t.text, kw) {
			// Replace the integer after it.
			rest := query[t.end:]
			trimmed := strings.TrimLeft(rest, " \t\r\n")
			skip := len(rest) - len(trimmed)
			j := 0
			for j < len(trimmed) && trimmed[j] >= '0' && trimmed[j] <= '9' {
				j++
			}
			if j == 0 {
				return "", fmt.Errorf("sparql: %s without a number", kw)
			}
			start := t.end + skip
			return query[:start] + strconv.Itoa(n) + query[start+j:], nil
		}
	}
	at := len(query)
	for _, t := range toks.words {
		if strings.EqualFold(t.text, "VALUES") {
			at = t.start
			break
		}
	}
	sep := " "
	if at == len(query) && toks.openComment {
		sep = "\n" // a comment runs to the end of its line
	}
	return query[:at] + sep + kw + " " + strconv.Itoa(n) + " " + query[at:], nil
}

// topLevelInt is the integer after the top-level keyword kw, -1 when there is none.
func topLevelInt(query, kw string) int {
	if len(query) > MaxQueryBytes {
		return -1
	}
	for _, t := range scanTopLevel(query).words {
		if strings.EqualFold(t.text, kw) {
			rest := strings.TrimLeft(query[t.end:], " \t\r\n")
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' && j < 10 {
				j++
			}
			if v, err := strconv.Atoi(rest[:j]); err == nil {
				return v
			}
			return -1
		}
	}
	return -1
}

// word is a bare word of the query text outside braces, strings, IRIs and comments.
type word struct {
	text       string
	start, end int
}

// topLevel is what scanTopLevel finds.
type topLevel struct {
	words      []word // bare words at brace depth 0 after the first group opened
	unbalanced bool
	// openString and openComment report a text that ends inside a string literal or
	// inside a comment (no line break after it).
	openString, openComment bool
}

// scanTopLevel scans query for the bare words at brace depth 0 that come after the
// query's first group: the solution modifiers and a trailing VALUES. Strings (single,
// double and triple quoted), IRIs, and comments are skipped.
func scanTopLevel(q string) topLevel {
	var out topLevel
	depth := 0
	seenGroup := false
	i := 0
	for i < len(q) {
		ch := q[i]
		switch {
		case ch == '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			out.openComment = i == len(q)
		case ch == '"' || ch == '\'':
			var closed bool
			i, closed = skipString(q, i)
			out.openString = !closed
		case ch == '<':
			// An IRI has no spaces up to its '>'; a '<' operator is followed by one.
			j := i + 1
			for j < len(q) && q[j] != '>' && q[j] != ' ' && q[j] != '\n' && q[j] != '\t' && q[j] != '{' && q[j] != '}' {
				j++
			}
			if j < len(q) && q[j] == '>' {
				i = j + 1
			} else {
				i++
			}
		case ch == '{':
			depth++
			seenGroup = true
			i++
		case ch == '}':
			depth--
			if depth < 0 {
				out.unbalanced = true
				return out
			}
			i++
		case isWordByte(ch):
			j := i
			for j < len(q) && (isWordByte(q[j]) || q[j] == ':' || q[j] == '-' || q[j] == '.') {
				j++
			}
			if depth == 0 && seenGroup {
				out.words = append(out.words, word{text: q[i:j], start: i, end: j})
			}
			i = j
		default:
			i++
		}
	}
	out.unbalanced = depth != 0
	return out
}

// skipString returns the index after the string literal that starts at i, and whether
// the literal is closed before the text ends (a line break closes a short one).
func skipString(q string, i int) (int, bool) {
	quote := q[i]
	if strings.HasPrefix(q[i:], strings.Repeat(string(quote), 3)) {
		end := strings.Index(q[i+3:], strings.Repeat(string(quote), 3))
		if end < 0 {
			return len(q), false
		}
		return i + 3 + end + 3, true
	}
	j := i + 1
	for j < len(q) {
		switch q[j] {
		case '\\':
			j += 2
			continue
		case quote, '\n':
			return j + 1, true
		}
		j++
	}
	return len(q), false
}

// isWordByte reports whether b can be part of a bare word or variable.
func isWordByte(b byte) bool {
	return b == '_' || b == '?' || b == '$' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b >= 0x80
}

// withoutOrderBy drops the top-level ORDER BY clause of query.
func withoutOrderBy(query string) string {
	if len(query) > MaxQueryBytes {
		return query
	}
	words := scanTopLevel(query).words
	for i, w := range words {
		if !strings.EqualFold(w.text, "ORDER") {
			continue
		}
		end := len(query)
		for _, x := range words[i+1:] {
			switch strings.ToUpper(x.text) {
			case "LIMIT", "OFFSET", "VALUES":
				end = x.start
			default:
				continue
			}
			break
		}
		return query[:w.start] + " " + query[end:]
	}
	return query
}
