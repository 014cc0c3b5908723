package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
)

// Trimming limits, as OpenMetadata's McpResponseTrim applies them.
const (
	// DescriptionLimit is the longest description returned whole; a longer one is cut
	// to DescriptionCut characters plus "..." and flagged descriptionTruncated.
	DescriptionLimit = 500
	DescriptionCut   = 450
	// SQLLimit caps SQL and DDL fields (schemaDefinition, sql, …), flagged
	// <field>Truncated.
	SQLLimit = 30000
)

// sqlFields are the long SQL/DDL text fields capped at SQLLimit wherever they appear.
var sqlFields = map[string]bool{"schemaDefinition": true, "sql": true, "rawSql": true, "sqlQuery": true, "queryText": true}

// hinted is an error with a fix hint for the caller.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

// withHint attaches a hint to an error; the meridian code of err still decides the
// statusCode.
func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hinted{err: err, hint: hint}
}

// WithHint is withHint for tools written outside this package's files.
func WithHint(err error, hint string) error { return withHint(err, hint) }

// defaultHints are the hints of errors that carry none.
var defaultHints = map[string]string{
	meridian.EInvalid:            "Check the arguments against the tool's input schema and retry",
	meridian.EUnauthorized:       "Send a valid Bearer token (a bot token or a personal access token)",
	meridian.EForbidden:          "The calling principal lacks the role or ownership this needs; ask a catalog admin, or act on an entity you own",
	meridian.ENotFound:           "Check entityType and fqn; search_metadata finds an entity's exact fullyQualifiedName",
	meridian.EConflict:           "It already exists: read it with get_entity_details, or change it with update_entity or patch_entity",
	meridian.EPreconditionFailed: "The entity changed meanwhile; read it again and retry",
	meridian.ETooManyRequests:    "Wait a moment and retry",
	meridian.EUnavailable:        "The catalog's database is briefly unavailable and nothing was written; retry",
	meridian.EInternal:           "Retry later; if it keeps failing, report it to the catalog's administrators",
}

// ErrorBody is the JSON text of a failed tool call.
type ErrorBody struct {
	Error      string `json:"error"`
	StatusCode int    `json:"statusCode"`
	Hint       string `json:"hint,omitempty"`
}

// errorResult maps an error to an isError result: the meridian code decides the
// statusCode (meridian.HTTPStatus); internal details never reach the caller.
func errorResult(err error) Result {
	code := meridian.ErrorCode(err)
	body := ErrorBody{Error: meridian.ErrorMessage(err), StatusCode: meridian.HTTPStatus(code)}
	var h *hinted
	if errors.As(err, &h) && h.hint != "" {
		body.Hint = h.hint
	} else {
		body.Hint = defaultHints[code]
	}
	return Result{Text: string(marshal(body)), IsError: true, StatusCode: body.StatusCode}
}

// ErrorResult is errorResult for transports that refuse a call before a tool runs.
func ErrorResult(err error) Result { return errorResult(err) }

// marshal encodes v as compact JSON without HTML escaping.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{}`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// unmarshalInto decodes JSON text into v.
func unmarshalInto(text string, v any) error { return json.Unmarshal([]byte(text), v) }

// jsonLen is the length of v's JSON text.
func jsonLen(v any) int { return len(marshal(v)) }

// lengths measures JSON texts as jsonLen does, reusing one buffer and encoder across
// calls. The zero value is ready to use.
type lengths struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func (l *lengths) jsonLen(v any) int {
	if l.enc == nil {
		l.enc = json.NewEncoder(&l.buf)
		l.enc.SetEscapeHTML(false)
	}
	l.buf.Reset()
	if err := l.enc.Encode(v); err != nil {
		return len(`{}`)
	}
	return len(bytes.TrimRight(l.buf.Bytes(), "\n"))
}

// toMap turns any JSON-marshalable value into a generic JSON object.
func toMap(v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	if e, ok := v.(meridian.Entity); ok {
		return map[string]any(e), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("result is not a JSON object")
	}
	return m, nil
}

// shape turns a handler's value into the result: trimmed, within the budget, as
// structured content and the same JSON as text.
func (s *Set) shape(t *Tool, v any) Result {
	m, err := toMap(v)
	if err != nil {
		s.env.Logger.Error("tool result is not an object", "tool", t.Name, "error", err.Error())
		return errorResult(meridian.Errorf(meridian.EInternal, "internal error"))
	}
	// Structured content is plain JSON values (float64 numbers, []any, map[string]any),
	// as a JSON round trip gives them. plainCopy makes that copy directly when it can
	// tell the round trip would give the same values; otherwise the round trip runs.
	plain, ok := plainObject(m)
	if !ok {
		if err := json.Unmarshal(marshal(m), &plain); err != nil {
			return errorResult(meridian.Errorf(meridian.EInternal, "internal error"))
		}
	}
	Trim(plain)
	text := marshal(plain)
	if len(text) > s.env.Budget {
		// Tools page their lists within the budget; reaching this means one item alone
		// is too large. Say so rather than answer a data-less "truncated" success.
		return errorResult(withHint(meridian.Errorf(meridian.EInvalid,
			"The result of %s is %d characters, over the budget of %d", t.Name, len(text), s.env.Budget),
			"Ask for less: fewer entities, a smaller size or columnLimit, or fewer fields"))
	}
	return Result{Structured: plain, Text: string(text), StatusCode: 200}
}

// plainObject returns a deep copy of m made of plain JSON values, equal to what
// unmarshalling m's JSON text gives, and false when it cannot be sure of that (a value
// of another type, a string that is not valid UTF-8, a number a float64 does not hold
// exactly), in which case the caller makes the JSON round trip itself.
func plainObject(m map[string]any) (map[string]any, bool) {
	if m == nil {
		return nil, false
	}
	v, ok := plainCopy(m)
	if !ok {
		return nil, false
	}
	return v.(map[string]any), true
}

// maxExactInt is the largest integer magnitude every float64 at or below holds exactly.
const maxExactInt = 1 << 53

func plainCopy(v any) (any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, true
	case string:
		return t, utf8.ValidString(t)
	case bool:
		return t, true
	case float64:
		// NaN and infinities do not marshal; the round trip reports that.
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	case int:
		return float64(t), t <= maxExactInt && t >= -maxExactInt
	case int64:
		return float64(t), t <= maxExactInt && t >= -maxExactInt
	case map[string]any:
		if t == nil {
			return nil, true // null
		}
		return plainMap(t)
	case meridian.Entity:
		if t == nil {
			return nil, true
		}
		return plainMap(t)
	case []any:
		if t == nil {
			return nil, true
		}
		out := make([]any, len(t))
		for i, x := range t {
			c, ok := plainCopy(x)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case []map[string]any:
		if t == nil {
			return nil, true
		}
		out := make([]any, len(t))
		for i, x := range t {
			c, ok := plainCopy(x)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case []string:
		if t == nil {
			return nil, true
		}
		out := make([]any, len(t))
		for i, x := range t {
			if !utf8.ValidString(x) {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	}
	return nil, false
}

func plainMap(m map[string]any) (any, bool) {
	out := make(map[string]any, len(m))
	for k, x := range m {
		if !utf8.ValidString(k) {
			return nil, false
		}
		c, ok := plainCopy(x)
		if !ok {
			return nil, false
		}
		out[k] = c
	}
	return out, true
}

// Trim shortens long descriptions (flag descriptionTruncated) and SQL/DDL fields (flag
// <field>Truncated) anywhere in a JSON value, in place. It is idempotent, so tools may
// trim rows before measuring them against the budget.
func Trim(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if str, ok := x.(string); ok {
				switch {
				case k == "description" && utf8.RuneCountInString(str) > DescriptionLimit:
					t[k] = cut(str, DescriptionCut) + "..."
					t["descriptionTruncated"] = true
				case sqlFields[k] && utf8.RuneCountInString(str) > SQLLimit:
					t[k] = cut(str, SQLLimit) + "..."
					t[k+"Truncated"] = true
				}
				continue
			}
			Trim(x)
		}
	case meridian.Entity:
		Trim(map[string]any(t))
	case []any:
		for _, x := range t {
			Trim(x)
		}
	}
}

// TrimText caps a free-text field of m at limit characters, flagging <field>Truncated.
func TrimText(m map[string]any, field string, limit int) {
	if s, ok := m[field].(string); ok && utf8.RuneCountInString(s) > limit {
		m[field] = cut(s, limit) + "..."
		m[field+"Truncated"] = true
	}
}

func cut(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// cursor is the decoded form of an opaque cursor: an offset into the full result.
type cursor struct {
	O int `json:"o"`
}

// EncodeCursor returns the opaque cursor of an offset.
func EncodeCursor(offset int) string {
	b, _ := json.Marshal(cursor{O: offset})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor made by EncodeCursor. A cursor that does not decode is
// EInvalid (400): silently restarting at the first page would repeat rows.
func DecodeCursor(s string) (int, error) {
	bad := withHint(meridian.Errorf(meridian.EInvalid, "Invalid cursor %q", shorten(s, 40)),
		"Pass back the nextCursor of the previous result unchanged, or omit cursor to start at the first page")
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(s), "="))
	if err != nil {
		return 0, bad
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c cursor
	if err := dec.Decode(&c); err != nil || c.O < 0 {
		return 0, bad
	}
	return c.O, nil
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return cut(s, n) + "..."
}

// offsetOf returns the starting offset of a page: the cursor's when one is given,
// else the offset argument.
func offsetOf(a Args, offsetArg string) (int, error) {
	if c := strings.TrimSpace(a.String("cursor")); c != "" {
		return DecodeCursor(c)
	}
	return a.Int(offsetArg), nil
}

// fitRows returns how many rows, from the first, fit in room characters of JSON, and
// at least one when there are rows: a page always makes progress.
func fitRows(rows []any, room int) int {
	used := 2 // the brackets
	var lm lengths
	for i, r := range rows {
		n := lm.jsonLen(r) + 1 // the comma
		if used+n > room && i > 0 {
			return i
		}
		used += n
	}
	return len(rows)
}

// setPage records the paging contract on a result: truncated, total, returned,
// hasMore and, when more rows follow, an opaque nextCursor that advances by the rows
// returned (not requested).
func setPage(m map[string]any, offset, returned, total int) {
	more := offset+returned < total
	m["total"] = total
	m["returned"] = returned
	m["truncated"] = more
	m["hasMore"] = more
	if more {
		m["nextCursor"] = EncodeCursor(offset + returned)
	} else {
		delete(m, "nextCursor")
	}
}

// pageProps are the output schema properties of setPage.
func pageProps(p Props) Props {
	p["total"] = Integer("Total number of rows matching.")
	p["returned"] = Integer("Rows in this result.")
	p["truncated"] = Boolean("True when this result is a partial page: more rows follow through nextCursor.")
	p["hasMore"] = Boolean("Same as truncated.")
	p["nextCursor"] = String("Opaque cursor of the next page; pass it back as cursor. Absent on the last page.")
	return p
}

// Cursor is the schema of the cursor argument.
func Cursor() Schema {
	return String("Opaque cursor from a previous result's nextCursor, to read the next page.")
}

// Portability checks a tool schema against the rules portable clients need (what MCP
// Inspector's --strict and the Gemini/OpenAPI 3.0 subsets accept): every node has one
// "type" string (no nullable unions such as ["null","array"]), no $ref or $defs, no
// anyOf/oneOf/allOf/not, objects list their properties, arrays their items, required
// names exist, enums fit their type. It returns every problem found.
func Portability(s Schema) []error {
	var errs []error
	portability(s, "#", &errs)
	return errs
}

func portability(s Schema, at string, errs *[]error) {
	fail := func(format string, args ...any) {
		*errs = append(*errs, fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...)))
	}
	if s == nil {
		fail("not a schema object")
		return
	}
	for _, k := range []string{"$ref", "$defs", "definitions", "anyOf", "oneOf", "allOf", "not", "nullable",
		"patternProperties", "prefixItems", "if", "then", "else", "dependentSchemas"} {
		if _, ok := s[k]; ok {
			fail("uses %s", k)
		}
	}
	t, ok := s["type"].(string)
	if !ok {
		fail("type must be a single string, got %v", s["type"])
		return
	}
	switch t {
	case "object":
		props, ok := s["properties"].(map[string]any)
		if !ok {
			fail("object without properties")
			return
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			portability(asSchema(props[name]), at+"/properties/"+name, errs)
		}
		for _, r := range s.required() {
			if _, ok := props[r]; !ok {
				fail("required %q is not a property", r)
			}
		}
		if ap, ok := s["additionalProperties"]; ok {
			if _, isBool := ap.(bool); !isBool {
				portability(asSchema(ap), at+"/additionalProperties", errs)
			}
		}
	case "array":
		items := s.items()
		if items == nil {
			fail("array without items")
			return
		}
		portability(items, at+"/items", errs)
	case "string", "integer", "number", "boolean":
		if e, ok := s["enum"]; ok {
			if t != "string" || len(s.enum()) == 0 {
				fail("enum %v does not fit type %s", e, t)
			}
		}
	default:
		fail("unsupported type %q", t)
	}
}
