package meridian

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Document limits. Every verb that writes an entity (POST, PUT, PATCH, every MCP write
// tool) checks them in the store's before-write sequence, and the REST edge checks the
// array and container bounds on the raw body before decoding it, so that a request's
// memory stays within a small multiple of its body. Each refusal is EInvalid with a
// message that names the limit.
const (
	// MaxDocumentBytes is the largest entity document, serialized as JSON.
	MaxDocumentBytes = 8 << 20
	// MaxColumns is the most columns one document holds, nested children included.
	MaxColumns = 10000
	// MaxArrayItems is the most items of any one array in a document.
	MaxArrayItems = 10000
	// MaxContainers is the most JSON objects and arrays in one document.
	MaxContainers = 100000
	// MaxDepth is the deepest nesting of JSON objects and arrays in one document.
	MaxDepth = 1000
)

// CheckDocument checks e against MaxDocumentBytes, MaxColumns, MaxArrayItems and
// MaxDepth. It
// stops as soon as a limit is passed. Errors: EInvalid.
func CheckDocument(e Entity) error {
	if n := JSONSize(map[string]any(e), MaxDocumentBytes); n > MaxDocumentBytes {
		return Errorf(EInvalid, "The document is larger than the maximum of %d bytes (serialized as JSON)", MaxDocumentBytes)
	}
	c := docCheck{}
	return c.walk(map[string]any(e), "", 1, false)
}

// docCheck walks a document for CheckDocument, counting columns: the items of every
// columns array and of the children arrays of columns.
type docCheck struct{ columns int }

func (c *docCheck) walk(v any, key string, depth int, inColumn bool) error {
	switch t := v.(type) {
	case Entity:
		return c.walk(map[string]any(t), key, depth, inColumn)
	case map[string]any:
		if depth > MaxDepth {
			return Errorf(EInvalid, "The document nests deeper than the maximum of %d levels", MaxDepth)
		}
		for k, x := range t {
			if err := c.walk(x, k, depth+1, inColumn); err != nil {
				return err
			}
		}
	case []any:
		if depth > MaxDepth {
			return Errorf(EInvalid, "The document nests deeper than the maximum of %d levels", MaxDepth)
		}
		if len(t) > MaxArrayItems {
			return Errorf(EInvalid, "%s has more than the maximum of %d items", key, MaxArrayItems)
		}
		columns := key == "columns" || (key == "children" && inColumn)
		if columns {
			if c.columns += len(t); c.columns > MaxColumns {
				return Errorf(EInvalid, "The document has more than the maximum of %d columns", MaxColumns)
			}
		}
		for _, x := range t {
			if err := c.walk(x, key, depth+1, columns); err != nil {
				return err
			}
		}
	}
	return nil
}

// JSONSize returns the length of v serialized as JSON without HTML escaping, counting
// only up to limit: once the count passes limit it stops and returns a value above
// limit. A limit of 0 or less counts everything. v holds JSON values as encoding/json
// decodes them (maps, slices, strings, float64, bools, nil, Entity); other values count
// as their Go string form, an estimate.
func JSONSize(v any, limit int) int {
	s := sizer{limit: limit}
	s.add(v)
	return s.n
}

type sizer struct{ n, limit int }

func (s *sizer) over() bool { return s.limit > 0 && s.n > s.limit }

func (s *sizer) add(v any) {
	if s.over() {
		return
	}
	switch t := v.(type) {
	case nil:
		s.n += 4
	case bool:
		if t {
			s.n += 4
		} else {
			s.n += 5
		}
	case string:
		s.n += stringSize(t)
	case float64:
		s.n += floatSize(t)
	case Entity:
		s.add(map[string]any(t))
	case map[string]any:
		s.n += 2 + 2*len(t) // braces, colons and commas
		if len(t) > 0 {
			s.n--
		}
		for k, x := range t {
			if s.n += stringSize(k); s.over() {
				return
			}
			s.add(x)
		}
	case []any:
		s.n += 2 + len(t)
		if len(t) > 0 {
			s.n--
		}
		for _, x := range t {
			if s.add(x); s.over() {
				return
			}
		}
	default:
		s.n += 16
	}
}

// floatSize is the length of f as encoding/json writes it.
func floatSize(f float64) int {
	var buf [32]byte
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			return n - 1 // e-07 is written e-7
		}
		return len(b)
	}
	return len(strconv.AppendFloat(buf[:0], f, 'f', -1, 64))
}

// stringSize is the length of s as a JSON string: quotes, escapes of control
// characters, quote and backslash, and U+FFFD for invalid UTF-8.
func stringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += w
		}
		i += w
	}
	return n
}

// ScanJSONLimits checks a raw JSON text against MaxArrayItems and MaxContainers without
// decoding it, so that an oversized body is refused before it costs memory. It does
// not check the syntax; a decoder does that next. Errors: EInvalid.
func ScanJSONLimits(b []byte) error {
	var (
		items      []int // items seen in each open array (-1 for an object)
		containers int
		inString   bool
		escaped    bool
	)
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '}', ']':
			if len(items) > 0 {
				items = items[:len(items)-1]
			}
			continue
		case ',':
			if len(items) > 0 && items[len(items)-1] > 0 {
				if items[len(items)-1]++; items[len(items)-1] > MaxArrayItems {
					return Errorf(EInvalid, "Invalid request format: an array has more than the maximum of %d items", MaxArrayItems)
				}
			}
			continue
		}
		// A value (or an object key) starts here.
		if len(items) > 0 && items[len(items)-1] == 0 {
			items[len(items)-1] = 1
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if containers++; containers > MaxContainers {
				return Errorf(EInvalid, "Invalid request format: the document has more than the maximum of %d JSON objects and arrays", MaxContainers)
			}
			if len(items) >= MaxDepth {
				return Errorf(EInvalid, "Invalid request format: the document nests deeper than the maximum of %d levels", MaxDepth)
			}
			if c == '[' {
				items = append(items, 0)
			} else {
				items = append(items, -1)
			}
		}
	}
	return nil
}
