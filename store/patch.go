package store

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
)

// PatchOp is one RFC 6902 operation.
type PatchOp struct {
	Op    string           `json:"op"`
	Path  string           `json:"path"`
	From  string           `json:"from,omitempty"`
	Value *json.RawMessage `json:"value,omitempty"`
}

// Patch limits. A patch is bounded as a whole: its operations, its bytes, the size of
// the document it makes (meridian.MaxDocumentBytes, checked after every operation, so
// that copies stop early) and the work it does (bytes of values decoded, copied,
// measured or compared), so that applying one holds the writer for a bounded time.
const (
	MaxPatchOps   = 1000
	MaxPatchBytes = meridian.MaxDocumentBytes
	MaxPatchWork  = 4 * meridian.MaxDocumentBytes
)

// ParsePatch parses and checks a JSON Patch document: an array of operations, each
// with a known op and valid JSON Pointer paths, and a value where the op needs one.
// Operations on paths ending in /href are dropped, as OpenMetadata does. Errors are
// EInvalid.
func ParsePatch(b []byte) ([]PatchOp, error) {
	if len(b) > MaxPatchBytes {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: larger than the maximum of %d bytes", MaxPatchBytes)
	}
	if err := meridian.ScanJSONLimits(b); err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: %s", strings.TrimPrefix(meridian.ErrorMessage(err), "Invalid request format: "))
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: the body must be a JSON array of operations")
	}
	if len(raw) > MaxPatchOps {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: more than the maximum of %d operations", MaxPatchOps)
	}
	ops := make([]PatchOp, 0, len(raw))
	for i, m := range raw {
		var op PatchOp
		str := func(key string) (string, error) {
			v, ok := m[key]
			if !ok {
				return "", nil
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return "", meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: %s must be a string", i, key)
			}
			return s, nil
		}
		var err error
		if op.Op, err = str("op"); err != nil {
			return nil, err
		}
		if op.Path, err = str("path"); err != nil {
			return nil, err
		}
		if op.From, err = str("from"); err != nil {
			return nil, err
		}
		if v, ok := m["value"]; ok {
			op.Value = &v
		}
		for key := range m {
			switch key {
			case "op", "path", "from", "value":
			default:
				return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: unknown member %q", i, key)
			}
		}
		if _, ok := m["path"]; !ok {
			return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: path is required", i)
		}
		if err := checkPointer(op.Path); err != nil {
			return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: %s", i, err.Error())
		}
		switch op.Op {
		case "add", "replace", "test":
			if op.Value == nil {
				return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: %s needs a value", i, op.Op)
			}
		case "remove":
		case "move", "copy":
			if _, ok := m["from"]; !ok {
				return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: %s needs from", i, op.Op)
			}
			if err := checkPointer(op.From); err != nil {
				return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: from: %s", i, err.Error())
			}
		default:
			return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d: op must be one of add, remove, replace, move, copy, test", i)
		}
		if op.Path == "/href" || strings.HasSuffix(op.Path, "/href") {
			continue
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// pointerError is a malformed JSON Pointer.
type pointerError string

func (e pointerError) Error() string { return string(e) }

// checkPointer validates an RFC 6901 JSON Pointer. The whole document ("") may not be
// replaced.
func checkPointer(p string) error {
	if p == "" {
		return pointerError("path must not be empty: the whole document cannot be replaced")
	}
	if p[0] != '/' {
		return pointerError("path " + p + " must start with '/'")
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 >= len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return pointerError("path " + p + " has an invalid escape")
		}
	}
	return nil
}

// ApplyPatch applies checked operations to doc, which it changes in place (pass a copy
// to keep the original), and returns it. The operations work on the decoded document:
// nothing is serialised per operation. A replace of an object member that does not
// exist yet acts as add, so that "replace /description" works on an entity without
// one; everything else follows RFC 6902 (JSON Pointer escapes, "-" to append, move and
// copy, test by JSON equality). A patch that cannot be applied (a missing path, a failed
// test, a bad index) or that passes a limit (MaxPatchWork, meridian.MaxDocumentBytes)
// is EInvalid; ctx is checked between operations, and its error is returned when the
// caller gave up.
func ApplyPatch(ctx context.Context, doc meridian.Entity, ops []PatchOp) (meridian.Entity, error) {
	if doc == nil {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: the document is not a JSON object")
	}
	p := &patcher{root: normalize(map[string]any(doc)).(map[string]any)}
	p.size = meridian.JSONSize(p.root, 0)
	p.work = p.size
	// A document stored before the limit existed may still shrink; the before-write
	// sequence refuses the result if it stays too large.
	p.limit = max(meridian.MaxDocumentBytes, p.size)
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := p.apply(op); err != nil {
			return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d (%s %s): %s", i, op.Op, op.Path, err.Error())
		}
		if p.size > p.limit {
			return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d (%s %s): the document would be larger than the maximum of %d bytes",
				i, op.Op, op.Path, meridian.MaxDocumentBytes)
		}
		if p.work > MaxPatchWork {
			return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d (%s %s): the patch copies, compares or writes more than the maximum of %d bytes",
				i, op.Op, op.Path, MaxPatchWork)
		}
	}
	return meridian.Entity(p.root), nil
}

// patcher applies operations to one decoded document. size is the document's JSON size
// as meridian.JSONSize counts it, kept up to date by every operation, and limit the
// most it may reach; work counts the bytes of values decoded, copied, measured and
// compared so far.
type patcher struct {
	root              map[string]any
	size, limit, work int
}

// patchError is why an operation cannot be applied.
type patchError string

func (e patchError) Error() string { return string(e) }

func (p *patcher) apply(op PatchOp) error {
	path := splitPointer(op.Path)
	switch op.Op {
	case "add", "replace":
		v, n, err := p.decode(op.Value)
		if err != nil {
			return err
		}
		if op.Op == "add" {
			return p.add(path, v, n)
		}
		return p.replace(path, v, n)
	case "remove":
		_, _, err := p.remove(path)
		return err
	case "test":
		v, _, err := p.decode(op.Value)
		if err != nil {
			return err
		}
		cur, err := p.get(path)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(cur, v) {
			return patchError("test failed: the value at " + op.Path + " differs")
		}
		return nil
	case "move":
		if op.From == op.Path {
			_, err := p.get(path)
			return err
		}
		if strings.HasPrefix(op.Path, op.From+"/") {
			return patchError("cannot move " + op.From + " into one of its own children")
		}
		v, n, err := p.remove(splitPointer(op.From))
		if err != nil {
			return err
		}
		return p.add(path, v, n)
	case "copy":
		v, err := p.get(splitPointer(op.From))
		if err != nil {
			return err
		}
		// Measure before copying, and only as far as the document may still grow.
		room := max(p.limit-p.size, 1)
		n := p.measure(v, room)
		if n > room {
			return patchError("the copy would make the document larger than the maximum of " +
				strconv.Itoa(meridian.MaxDocumentBytes) + " bytes")
		}
		p.work += n
		return p.add(path, meridian.CloneValue(v), n)
	}
	return patchError("unknown op " + op.Op)
}

// decode decodes an operation's value, counting its bytes as work.
func (p *patcher) decode(raw *json.RawMessage) (any, int, error) {
	if raw == nil {
		return nil, 0, patchError("the operation needs a value")
	}
	var v any
	if err := json.Unmarshal(*raw, &v); err != nil {
		return nil, 0, patchError("the value is not valid JSON")
	}
	p.work += len(*raw)
	return v, meridian.JSONSize(v, 0), nil
}

// measure returns v's JSON size, up to limit (0: all of it), counting it as work.
func (p *patcher) measure(v any, limit int) int {
	n := meridian.JSONSize(v, limit)
	p.work += n
	return n
}

// slot is where a pointer leads: the last token in its parent container, and how to
// put a changed parent back (an array that grows or shrinks is a new slice).
type slot struct {
	parent any // map[string]any or []any
	key    string
	set    func(any)
}

// locate walks to the parent of the location path names.
func (p *patcher) locate(path []string) (slot, error) {
	var cur any = p.root
	set := func(any) {} // the root is an object and never replaced
	for _, tok := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return slot{}, patchError("member " + strconv.Quote(tok) + " does not exist")
			}
			key := tok
			set = func(v any) { c[key] = v }
			cur = v
		case []any:
			i, err := index(tok, len(c)-1)
			if err != nil {
				return slot{}, err
			}
			set = func(v any) { c[i] = v }
			cur = c[i]
		default:
			return slot{}, patchError(strconv.Quote(tok) + " is inside a value that is not an object or array")
		}
	}
	switch cur.(type) {
	case map[string]any, []any:
	default:
		return slot{}, patchError("the parent of the path is not an object or array")
	}
	return slot{parent: cur, key: path[len(path)-1], set: set}, nil
}

// get returns the value at path.
func (p *patcher) get(path []string) (any, error) {
	s, err := p.locate(path)
	if err != nil {
		return nil, err
	}
	switch c := s.parent.(type) {
	case map[string]any:
		v, ok := c[s.key]
		if !ok {
			return nil, patchError("member " + strconv.Quote(s.key) + " does not exist")
		}
		return v, nil
	default:
		l := c.([]any)
		i, err := index(s.key, len(l)-1)
		if err != nil {
			return nil, err
		}
		return l[i], nil
	}
}

// add puts v, whose JSON size is n, at path: it sets an object member or inserts into
// an array ("-" appends).
func (p *patcher) add(path []string, v any, n int) error {
	s, err := p.locate(path)
	if err != nil {
		return err
	}
	switch c := s.parent.(type) {
	case map[string]any:
		if old, ok := c[s.key]; ok {
			p.size -= p.measure(old, 0) + 1 + stringSizeOf(s.key)
		}
		c[s.key] = v
		p.size += n + 1 + stringSizeOf(s.key)
	default:
		l := c.([]any)
		i := len(l)
		if s.key != "-" {
			if i, err = index(s.key, len(l)); err != nil {
				return err
			}
		}
		l = append(l, nil)
		copy(l[i+1:], l[i:])
		l[i] = v
		s.set(l)
		p.size += n + 1
	}
	return nil
}

// replace sets the value at path, which must exist, except that a missing object
// member is added.
func (p *patcher) replace(path []string, v any, n int) error {
	s, err := p.locate(path)
	if err != nil {
		return err
	}
	if l, ok := s.parent.([]any); ok {
		i, err := index(s.key, len(l)-1)
		if err != nil {
			return err
		}
		p.size += n - p.measure(l[i], 0)
		l[i] = v
		return nil
	}
	return p.add(path, v, n)
}

// remove takes the value at path out of the document and returns it with its size.
func (p *patcher) remove(path []string) (any, int, error) {
	s, err := p.locate(path)
	if err != nil {
		return nil, 0, err
	}
	var v any
	switch c := s.parent.(type) {
	case map[string]any:
		var ok bool
		if v, ok = c[s.key]; !ok {
			return nil, 0, patchError("member " + strconv.Quote(s.key) + " does not exist")
		}
		delete(c, s.key)
		p.size -= 1 + stringSizeOf(s.key)
	default:
		l := c.([]any)
		i, err := index(s.key, len(l)-1)
		if err != nil {
			return nil, 0, err
		}
		v = l[i]
		copy(l[i:], l[i+1:])
		l[len(l)-1] = nil
		s.set(l[:len(l)-1])
		p.size--
	}
	n := p.measure(v, 0)
	p.size -= n
	return v, n, nil
}

// stringSizeOf is the JSON size of an object key.
func stringSizeOf(k string) int { return meridian.JSONSize(k, 0) }

// index reads an array index token: "0" or digits without a leading zero, at most max.
func index(tok string, max int) (int, error) {
	bad := tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0')
	n := 0
	for i := 0; i < len(tok) && !bad; i++ {
		if tok[i] < '0' || tok[i] > '9' {
			bad = true
		}
		n = n*10 + int(tok[i]-'0')
	}
	if bad {
		return 0, patchError("array index " + strconv.Quote(tok) + " is not a number")
	}
	if n > max {
		return 0, patchError("array index " + tok + " is out of range")
	}
	return n, nil
}

// splitPointer splits a checked JSON Pointer into its unescaped tokens.
func splitPointer(p string) []string {
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = unescapePointer(t)
	}
	return toks
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// normalize makes v hold only the types encoding/json decodes to, in place: nested
// Entity maps become plain maps, and any other Go value (a typed slice or struct) is
// re-decoded from its JSON.
func normalize(v any) any {
	switch t := v.(type) {
	case nil, bool, string, float64:
		return v
	case meridian.Entity:
		return normalize(map[string]any(t))
	case map[string]any:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
