package graph

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
)

// Stable error codes of the SPARQL surface. Each error's message starts with its code
// and a colon, so callers can branch on it over REST and MCP alike.
const (
	// CodeQueryInvalid: the text is not a SPARQL query this service can parse.
	CodeQueryInvalid = "QUERY_INVALID"
	// CodeFormNotAllowed: an update, or a SERVICE call, anywhere in the query.
	CodeFormNotAllowed = "QUERY_FORM_NOT_ALLOWED"
	// CodeGraphSelection: FROM, FROM NAMED or GRAPH anywhere in the query.
	CodeGraphSelection = "GRAPH_SELECTION_NOT_ALLOWED"
	// CodeLimitExceeded: a LIMIT, a limit argument or the query text beyond its bound.
	CodeLimitExceeded = "QUERY_LIMIT_EXCEEDED"
	// CodeTimeout: the query ran past its time limit.
	CodeTimeout = "EXECUTION_TIMEOUT"
	// CodeWorkExceeded: the query visited more triples than its work cap.
	CodeWorkExceeded = "QUERY_WORK_EXCEEDED"
	// CodeCapacity: too many queries run at once, globally or for this caller.
	CodeCapacity = "EXECUTION_CAPACITY_EXHAUSTED"
	// CodeFormatInvalid: an answer format this form cannot be written in.
	CodeFormatInvalid = "FORMAT_NOT_SUPPORTED"
	// CodeUnavailable: the remote store did not answer.
	CodeUnavailable = "GRAPH_UNAVAILABLE"
)

// codeStatus maps each stable code to the application error code that sets its HTTP
// status: everything the caller's query causes is a 4xx.
var codeStatus = map[string]string{
	CodeQueryInvalid:   meridian.EInvalid,
	CodeFormNotAllowed: meridian.EInvalid,
	CodeGraphSelection: meridian.EInvalid,
	CodeLimitExceeded:  meridian.EInvalid,
	CodeTimeout:        meridian.EInvalid,
	CodeWorkExceeded:   meridian.EInvalid,
	CodeCapacity:       meridian.ETooManyRequests,
	CodeFormatInvalid:  meridian.EInvalid,
	CodeUnavailable:    meridian.EUnavailable,
}

// Errorf returns the application error of a stable graph code: its Code is the
// matching meridian code and its Message starts with "CODE: ".
func Errorf(code, format string, args ...any) *meridian.Error {
	e := meridian.Errorf(codeStatus[code], format, args...)
	e.Message = code + ": " + e.Message
	return e
}

// GraphCode returns the stable graph code an error's message starts with, or "".
func GraphCode(err error) string {
	msg := meridian.ErrorMessage(err)
	if i := strings.IndexByte(msg, ':'); i > 0 {
		if _, ok := codeStatus[msg[:i]]; ok {
			return msg[:i]
		}
	}
	return ""
}

// maxNesting bounds the nesting of braces, parentheses and brackets: the parser
// descends recursively, and an unbounded depth would exhaust the stack.
const maxNesting = 64

// Checked is a query that passed Check.
type Checked struct {
	Text string
	Form Form
	// Limit is the outer LIMIT of the query, or -1.
	Limit int
	// describe holds, for DESCRIBE, the SELECT that finds the described resources.
	describe string
}

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tokWord   tokKind = iota // a bare word: a keyword, a function name, "a", true/false
	tokPName                 // a prefixed name: ex:thing, :x, ex:
	tokVar                   // ?x or $x
	tokIRI                   // <…>
	tokString                // a quoted string
	tokNumber
	tokPunct
)

type token struct {
	kind       tokKind
	text       string
	start, end int
	depth      int // nesting depth before the token
}

// updateWords are keywords that only SPARQL Update uses.
var updateWords = map[string]bool{"INSERT": true, "DELETE": true, "LOAD": true, "CLEAR": true, "DROP": true,
	"CREATE": true, "ADD": true, "MOVE": true, "COPY": true, "WITH": true, "USING": true}

// Check parses the query lexically and checks it at every nesting level: the form
// must be SELECT, ASK, CONSTRUCT or DESCRIBE; no update keyword, no SERVICE, no FROM or
// GRAPH may appear anywhere; nothing but the solution modifiers and a VALUES block may
// follow the pattern; the text and its nesting are bounded, and so is an outer LIMIT
// (at most MaxRows). It does not evaluate anything. Errors: QUERY_INVALID,
// QUERY_FORM_NOT_ALLOWED, GRAPH_SELECTION_NOT_ALLOWED, QUERY_LIMIT_EXCEEDED.
func Check(query string) (*Checked, error) {
	if len(query) > MaxQueryBytes {
		return nil, Errorf(CodeLimitExceeded, "the query is %d bytes long; at most %d are accepted", len(query), MaxQueryBytes)
	}
	if strings.TrimSpace(query) == "" {
		return nil, Errorf(CodeQueryInvalid, "the query is empty")
	}
	if !utf8.ValidString(query) || strings.IndexByte(query, 0) >= 0 {
		return nil, Errorf(CodeQueryInvalid, "the query is not valid UTF-8 text")
	}
	toks, err := lex(query)
	if err != nil {
		return nil, err
	}
	c := &Checked{Text: query, Limit: -1}
	formAt := -1
	for i, t := range toks {
		if t.kind != tokWord {
			continue
		}
		w := strings.ToUpper(t.text)
		switch {
		case updateWords[w]:
			return nil, Errorf(CodeFormNotAllowed, "%s is an update; only SELECT, ASK, CONSTRUCT and DESCRIBE queries are accepted", w)
		case w == "SERVICE":
			return nil, Errorf(CodeFormNotAllowed, "SERVICE (a federated query) is not allowed")
		case w == "FROM" || w == "GRAPH" || w == "NAMED":
			return nil, Errorf(CodeGraphSelection, "%s selects a dataset or a named graph; queries run over the catalog graph only", w)
		}
		if formAt < 0 {
			switch w {
			case "PREFIX", "BASE", "VERSION":
				continue
			case "SELECT", "ASK", "CONSTRUCT", "DESCRIBE":
				c.Form, formAt = Form(w), i
			default:
				return nil, Errorf(CodeQueryInvalid, "expected SELECT, ASK, CONSTRUCT or DESCRIBE, found %q", t.text)
			}
		}
	}
	if formAt < 0 {
		return nil, Errorf(CodeQueryInvalid, "expected SELECT, ASK, CONSTRUCT or DESCRIBE")
	}
	if err := checkPatterns(toks); err != nil {
		return nil, err
	}
	limit, err := checkTail(toks, formAt, c.Form)
	if err != nil {
		return nil, err
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n > MaxRows {
			return nil, Errorf(CodeLimitExceeded, "LIMIT %s is above the maximum of %d rows", limit, MaxRows)
		}
		c.Limit = n
	}
	if c.Form == FormDescribe {
		c.describe = describeSelect(query, toks, formAt)
	}
	return c, nil
}

// maxRegexCalls bounds the REGEX and REPLACE calls of one query.
const maxRegexCalls = 8

// checkPatterns requires the pattern of every REGEX and REPLACE call to be a string
// literal, at most maxRegexCalls of them: the engine compiles and keeps every distinct
// pattern, so a pattern taken from the data would compile one per row. Errors:
// QUERY_INVALID.
func checkPatterns(toks []token) error {
	calls := 0
	for i, t := range toks {
		w := strings.ToUpper(t.text)
		if t.kind != tokWord || (w != "REGEX" && w != "REPLACE") || i+1 >= len(toks) || toks[i+1].text != "(" {
			continue
		}
		if calls++; calls > maxRegexCalls {
			return Errorf(CodeQueryInvalid, "a query may call REGEX and REPLACE at most %d times", maxRegexCalls)
		}
		depth := toks[i+1].depth + 1
		arg := 0
		var pattern []token
		for j := i + 2; j < len(toks) && toks[j].depth >= depth; j++ {
			if toks[j].depth == depth && toks[j].text == "," {
				arg++
				continue
			}
			if toks[j].depth == depth && toks[j].text == ")" {
				break
			}
			if arg == 1 {
				pattern = append(pattern, toks[j])
			}
		}
		if len(pattern) != 1 || pattern[0].kind != tokString {
			return Errorf(CodeQueryInvalid, "the pattern of %s must be a string literal", w)
		}
	}
	return nil
}

// describeSelect rewrites DESCRIBE r1 r2 … [WHERE] {…} as a SELECT binding each
// described resource: variables are projected, constants bound by (term AS ?__dN).
func describeSelect(query string, toks []token, at int) string {
	var proj []string
	j := at + 1
	star := false
	for ; j < len(toks); j++ {
		t := toks[j]
		if t.kind == tokVar {
			proj = append(proj, "?"+t.text[1:])
		} else if t.kind == tokIRI || t.kind == tokPName {
			proj = append(proj, "("+t.text+" AS ?__d"+strconv.Itoa(len(proj))+")")
		} else if t.kind == tokPunct && t.text == "*" {
			star = true
		} else {
			break
		}
	}
	var b strings.Builder
	b.WriteString(query[:toks[at].start])
	b.WriteString("SELECT DISTINCT ")
	if star {
		b.WriteString("*")
	} else {
		b.WriteString(strings.Join(proj, " "))
	}
	b.WriteString(" ")
	if j < len(toks) {
		b.WriteString(query[toks[j].start:])
	} else {
		b.WriteString("WHERE {}")
	}
	return b.String()
}

// lex splits a query into tokens, tracking the nesting depth. Errors: QUERY_INVALID
// for an unterminated string or IRI, unbalanced or too deep nesting.
func lex(q string) ([]token, error) {
	var toks []token
	depth := 0
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			continue
		}
		start := i
		t := token{start: start, depth: depth}
		switch {
		case c == '"' || c == '\'':
			end, ok := scanString(q, i)
			if !ok {
				return nil, Errorf(CodeQueryInvalid, "unterminated string at offset %d", i)
			}
			t.kind, i = tokString, end
		case c == '<':
			if end, ok := scanIRI(q, i); ok {
				t.kind, i = tokIRI, end
			} else {
				t.kind, i = tokPunct, i+1
				if i < len(q) && q[i] == '=' {
					i++
				}
			}
		case c == '?' || c == '$':
			i++
			for i < len(q) && isNameByte(q, i) {
				_, w := utf8.DecodeRuneInString(q[i:])
				i += w
			}
			if i == start+1 {
				t.kind = tokPunct // a property path's ? modifier
			} else {
				t.kind = tokVar
			}
		case c >= '0' && c <= '9':
			for i < len(q) && (q[i] >= '0' && q[i] <= '9' || q[i] == '.' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9' || q[i] == 'e' || q[i] == 'E') {
				i++
			}
			t.kind = tokNumber
		case isNameStart(q, i) || c == ':':
			pname := false
			for i < len(q) && (isNameByte(q, i) || q[i] == ':' || q[i] == '-' || (q[i] == '.' && i+1 < len(q) && isNameByte(q, i+1)) || q[i] == '%' || q[i] == '\\') {
				if q[i] == ':' {
					pname = true
				}
				if q[i] == '\\' && i+1 < len(q) {
					i += 2
					continue
				}
				_, w := utf8.DecodeRuneInString(q[i:])
				i += w
			}
			t.kind = tokWord
			if pname {
				t.kind = tokPName
			}
		default:
			switch c {
			case '{', '(', '[':
				depth++
				if depth > maxNesting {
					return nil, Errorf(CodeQueryInvalid, "the query nests deeper than %d levels", maxNesting)
				}
			case '}', ')', ']':
				depth--
				if depth < 0 {
					return nil, Errorf(CodeQueryInvalid, "unbalanced %q at offset %d", string(c), i)
				}
			}
			_, w := utf8.DecodeRuneInString(q[i:])
			t.kind, i = tokPunct, i+w
		}
		t.end = i
		t.text = q[start:i]
		toks = append(toks, t)
	}
	if depth != 0 {
		return nil, Errorf(CodeQueryInvalid, "unbalanced braces or parentheses")
	}
	return toks, nil
}

func isNameStart(q string, i int) bool {
	r, _ := utf8.DecodeRuneInString(q[i:])
	return r == '_' || unicode.IsLetter(r)
}

func isNameByte(q string, i int) bool {
	r, _ := utf8.DecodeRuneInString(q[i:])
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\u00B7'
}

// scanString returns the end of the string literal starting at i.
func scanString(q string, i int) (int, bool) {
	quote := q[i]
	long := strings.HasPrefix(q[i:], strings.Repeat(string(quote), 3))
	if long {
		i += 3
		for i < len(q) {
			if q[i] == '\\' {
				i += 2
				continue
			}
			if strings.HasPrefix(q[i:], strings.Repeat(string(quote), 3)) {
				return i + 3, true
			}
			i++
		}
		return 0, false
	}
	i++
	for i < len(q) {
		switch q[i] {
		case '\\':
			i += 2
			continue
		case quote:
			return i + 1, true
		case '\n', '\r':
			return 0, false
		}
		i++
	}
	return 0, false
}

// scanIRI returns the end of the IRI reference starting at i, if one starts there
// (otherwise '<' is the less-than operator).
func scanIRI(q string, i int) (int, bool) {
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '>':
			return j + 1, true
		case ' ', '\t', '\n', '\r', '<', '"', '{', '}', '|', '^', '`', '\\':
			return 0, false
		}
	}
	return 0, false
}
