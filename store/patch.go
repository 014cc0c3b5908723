package store

import (
	"encoding/json"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/meridian-catalog/meridian"
)

// PatchOp is one RFC 6902 operation.
type PatchOp struct {
	Op    string           `json:"op"`
	Path  string           `json:"path"`
	From  string           `json:"from,omitempty"`
	Value *json.RawMessage `json:"value,omitempty"`
}

// MaxPatchOps bounds the operations in one patch.
const MaxPatchOps = 10000

// ParsePatch parses and checks a JSON Patch document: an array of operations, each
// with a known op and valid JSON Pointer paths, and a value where the op needs one.
// Operations on paths ending in /href are dropped, as OpenMetadata does. Errors are
// EInvalid.
func ParsePatch(b []byte) ([]PatchOp, error) {
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: the body must be a JSON array of operations")
	}
	if len(raw) > MaxPatchOps {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: more than %d operations", MaxPatchOps)
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

// ApplyPatch applies checked operations to a copy of a document, one at a time. A
// replace of an object member that does not exist yet acts as add, so that "replace
// /description" works on an entity without one; everything else follows RFC 6902. A
// patch that cannot be applied (a missing path, a failed test, a bad index) is EInvalid.
func ApplyPatch(doc meridian.Entity, ops []PatchOp) (meridian.Entity, error) {
	cur, _ := json.Marshal(doc)
	opts := &jsonpatch.ApplyOptions{AccumulatedCopySizeLimit: 16 << 20}
	for i, op := range ops {
		next, err := applyOne(cur, op, opts)
		if err != nil && op.Op == "replace" && memberMissing(cur, op.Path) {
			op.Op = "add"
			next, err = applyOne(cur, op, opts)
		}
		if err != nil {
			return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: operation %d (%s %s): %s", i, op.Op, op.Path, err.Error())
		}
		cur = next
	}
	e, err := meridian.DecodeEntity(cur)
	if err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid JSON Patch: the result is not a JSON object")
	}
	return e, nil
}

func applyOne(doc []byte, op PatchOp, opts *jsonpatch.ApplyOptions) ([]byte, error) {
	b, _ := json.Marshal([]PatchOp{op})
	patch, err := jsonpatch.DecodePatch(b)
	if err != nil {
		return nil, err
	}
	return patch.ApplyWithOptions(doc, opts)
}

// memberMissing reports whether path names an absent member of an existing object.
func memberMissing(doc []byte, path string) bool {
	i := strings.LastIndexByte(path, '/')
	parent, key := path[:i], unescapePointer(path[i+1:])
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return false
	}
	if parent != "" {
		for _, tok := range strings.Split(parent[1:], "/") {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			v = m[unescapePointer(tok)]
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, present := m[key]
	return !present
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
