// Package schema holds one JSON Schema per entity kind and validates entity documents
// against them. The schemas are embedded from kinds/<kind>.json; shared definitions live in
// kinds/common.json and are referenced as common.json#/$defs/<Name>.
//
// A kind schema describes the full entity document as the engine holds it when it
// validates: system fields (id, fullyQualifiedName, version, ...) are present, and parent,
// inherited and reference fields are entity reference objects, not FQN strings. The top
// level rejects unknown fields. The same schemas feed OpenAPI and the MCP tool schemas.
//
// Validate accepts a document that quick (quick.go) finds valid, a walk over the
// library's compiled schemas that allocates nothing; everything else, every rejection
// and its message, is the library's.
//
// api.json holds the REST shapes that are not entity documents (errors, pages, change
// events, search answers, lineage, tokens) as $defs; OpenAPI publishes them beside the
// kinds (see API).
package schema

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

//go:embed kinds/*.json
var files embed.FS

//go:embed api.json
var apiSchema []byte

// baseURL is the $id prefix of every embedded schema. Nothing is fetched from it.
const baseURL = "https://meridian.dev/schema/kinds/"

// commonName is the file of shared definitions; it is not a kind.
const commonName = "common"

// maxDepth bounds how deeply nested a document may be.
const maxDepth = 128

// Validator validates entity documents against the embedded kind schemas. It is safe for
// concurrent use. It implements store.Validator.
type Validator struct {
	schemas  map[string]*jsonschema.Schema
	raw      map[string]json.RawMessage
	defaults map[string]map[string]any
	required map[string][]string
	byLoc    map[string]*jsonschema.Schema
	secrets  map[string][]string
}

// Kinds returns the names of the kinds that have an embedded schema, sorted.
func Kinds() []string {
	entries, err := files.ReadDir("kinds")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		if name != commonName && name != e.Name() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// API returns the embedded api.json: one $defs entry per REST shape that is not an
// entity document. Its references read #/$defs/<Name> (another shape) and
// kinds/common.json#/$defs/<Name> (a shared definition).
func API() json.RawMessage { return append(json.RawMessage(nil), apiSchema...) }

// New compiles every embedded schema once.
func New() (*Validator, error) {
	c := newCompiler()
	v := &Validator{
		schemas:  map[string]*jsonschema.Schema{},
		raw:      map[string]json.RawMessage{},
		defaults: map[string]map[string]any{},
		required: map[string][]string{},
		byLoc:    map[string]*jsonschema.Schema{},
	}
	names := append(Kinds(), commonName)
	for _, name := range names {
		b, err := files.ReadFile("kinds/" + name + ".json")
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource(baseURL+name+".json", doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		v.raw[name] = json.RawMessage(b)
	}
	for _, name := range Kinds() {
		sch, err := c.Compile(baseURL + name + ".json")
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		v.schemas[name] = sch
		v.index(sch)
		d, err := topDefaults(v.raw[name])
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		v.defaults[name] = d
		var top struct {
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(v.raw[name], &top); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		v.required[name] = top.Required
	}
	secrets, err := secretPaths(v.raw)
	if err != nil {
		return nil, err
	}
	v.secrets = secrets
	return v, nil
}

// noLoader refuses every URL that was not added as a resource: schemas never come from
// the network or the file system.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is not embedded", url)
}

// index records every reachable subschema by location, so that error messages can show
// both bounds of a length rule.
func (v *Validator) index(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if _, seen := v.byLoc[s.Location]; seen {
		return
	}
	v.byLoc[s.Location] = s
	v.index(s.Ref)
	v.index(s.Not)
	v.index(s.Items2020)
	v.index(s.Contains)
	for _, x := range s.AllOf {
		v.index(x)
	}
	for _, x := range s.AnyOf {
		v.index(x)
	}
	for _, x := range s.OneOf {
		v.index(x)
	}
	for _, x := range s.PrefixItems {
		v.index(x)
	}
	for _, x := range s.Properties {
		v.index(x)
	}
	if x, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		v.index(x)
	}
}

// topDefaults reads the "default" of each top-level property of a raw kind schema.
func topDefaults(raw json.RawMessage) (map[string]any, error) {
	var doc struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name, prop := range doc.Properties {
		d, ok := prop["default"]
		if !ok {
			continue
		}
		var val any
		if err := json.Unmarshal(d, &val); err != nil {
			return nil, fmt.Errorf("default of %s: %w", name, err)
		}
		out[name] = val
	}
	return out, nil
}

// Schema returns the raw JSON Schema of a kind, or of "common" (the shared definitions).
// References to common.json remain unresolved.
func (v *Validator) Schema(kind string) (json.RawMessage, bool) {
	b, ok := v.raw[kind]
	if !ok {
		return nil, false
	}
	return append(json.RawMessage(nil), b...), true
}

// Required returns the top-level fields a kind's schema requires, in schema order.
func (v *Validator) Required(kind string) []string {
	return append([]string(nil), v.required[kind]...)
}

// Defaults sets each missing (or null) top-level property of e that has a "default" in
// the kind's schema, for example a context plugin's entityStatus "Approved" and tags [].
// Values are deep copies. An unknown kind or a nil document is left alone.
func (v *Validator) Defaults(kind string, e meridian.Entity) {
	if e == nil {
		return
	}
	for name, val := range v.defaults[kind] {
		if cur, ok := e[name]; !ok || cur == nil {
			e[name] = meridian.CloneValue(val)
		}
	}
}

// Validate checks a full entity document against the schema of its kind. It returns nil
// or an *meridian.Error with code EInvalid and one message naming a field: "<field> is
// required", "<field> must be one of [A, B]", "<field> must be a string",
// "Unrecognized field <field>", "<field> size must be between 1 and 256". Nested fields
// are written like columns[0].dataType. When several rules fail, the shallowest field is
// reported. An unknown kind is EInvalid "Unknown entity type X". Object members whose
// value is null count as absent. Validate does not modify e.
func (v *Validator) Validate(kindName string, e meridian.Entity) (err error) {
	sch, ok := v.schemas[kindName]
	if !ok {
		return meridian.Errorf(meridian.EInvalid, "Unknown entity type %s", kindName)
	}
	defer func() {
		if r := recover(); r != nil {
			err = meridian.Errorf(meridian.EInvalid, "Invalid %s document", kindName)
		}
	}()
	var doc any = map[string]any(e)
	if !normal(doc, 0) {
		var nerr error
		if doc, nerr = normalize(doc, nil, 0); nerr != nil {
			return nerr
		}
	}
	if valid, known := quick(sch, doc); known && valid {
		return nil // the library would find nothing to report (quick.go)
	}
	verr := sch.Validate(doc)
	if verr == nil {
		return nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return meridian.Errorf(meridian.EInvalid, "Invalid %s document", kindName)
	}
	return meridian.Errorf(meridian.EInvalid, "%s", v.message(ve, doc))
}

// normal reports whether v is already what normalize would return a copy of: only the
// types encoding/json produces, finite numbers, no null object members, not nested
// too deeply. A decoded request body is, and is then validated as it is.
func normal(v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch t := v.(type) {
	case bool, string:
		return true
	case float64:
		return !math.IsNaN(t) && !math.IsInf(t, 0)
	case map[string]any:
		for _, x := range t {
			if x == nil || !normal(x, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, x := range t {
			if x != nil && !normal(x, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// normalize returns a copy of v made only of the types encoding/json produces
// (map[string]any, []any, string, float64, bool, nil), dropping null object members. It
// rejects values JSON cannot hold (NaN, channels, cycles) with an EInvalid error.
func normalize(v any, at []string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, meridian.Errorf(meridian.EInvalid, "%s is nested too deeply", fieldName(at, "document"))
	}
	switch t := v.(type) {
	case nil, bool, string:
		return t, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, meridian.Errorf(meridian.EInvalid, "%s must be a finite number", fieldName(at, "document"))
		}
		return t, nil
	case float32:
		return normalize(float64(t), at, depth)
	case int:
		return float64(t), nil
	case int64:
		return float64(t), nil
	case int32:
		return float64(t), nil
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return nil, meridian.Errorf(meridian.EInvalid, "%s must be a number", fieldName(at, "document"))
		}
		return normalize(f, at, depth)
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			if x == nil {
				continue
			}
			nx, err := normalize(x, append(at, k), depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = nx
		}
		return m, nil
	case meridian.Entity:
		return normalize(map[string]any(t), at, depth)
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			nx, err := normalize(x, append(at, "["+strconv.Itoa(i)+"]"), depth+1)
			if err != nil {
				return nil, err
			}
			s[i] = nx
		}
		return s, nil
	}
	// Any other Go value ([]string, structs, ...): take its JSON form, as the engine
	// would store it.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "%s has a value that is not JSON", fieldName(at, "document"))
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "%s has a value that is not JSON", fieldName(at, "document"))
	}
	return normalize(x, at, depth+1)
}

// fieldName joins path tokens as columns[0].dataType; array indexes are tokens "[i]".
func fieldName(tokens []string, empty string) string {
	var sb strings.Builder
	for _, t := range tokens {
		if strings.HasPrefix(t, "[") || sb.Len() == 0 {
			sb.WriteString(t)
			continue
		}
		sb.WriteByte('.')
		sb.WriteString(t)
	}
	if sb.Len() == 0 {
		return empty
	}
	return sb.String()
}

// failure is one leaf validation error with the field it names.
type failure struct {
	field []string // path tokens of the named field, array indexes as "[i]"
	rank  int
	msg   string
}

// Rank of an error kind when two failures name fields at the same depth: lower wins.
const (
	rankUnknownField = iota
	rankRequired
	rankType
	rankEnum
	rankOther
)

// message picks one leaf error (the shallowest field, then by rank, then by name) and
// words it.
func (v *Validator) message(ve *jsonschema.ValidationError, doc any) string {
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	var best *failure
	for _, l := range leaves {
		f := v.describe(l, doc)
		if best == nil || better(f, best) {
			best = f
		}
	}
	if best == nil {
		return "Invalid document"
	}
	return best.msg
}

func better(a, b *failure) bool {
	if len(a.field) != len(b.field) {
		return len(a.field) < len(b.field)
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.msg < b.msg
}

// describe turns one leaf error into a failure.
func (v *Validator) describe(e *jsonschema.ValidationError, doc any) *failure {
	at := pathTokens(e.InstanceLocation, doc)
	name := fieldName(at, "document")
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		missing := append([]string(nil), k.Missing...)
		if len(missing) == 0 {
			break
		}
		field := append(append([]string(nil), at...), missing[0])
		return &failure{field, rankRequired, fieldName(field, "") + " is required"}
	case *kind.AdditionalProperties:
		props := append([]string(nil), k.Properties...)
		if len(props) == 0 {
			break
		}
		sort.Strings(props)
		field := append(append([]string(nil), at...), props[0])
		return &failure{field, rankUnknownField, "Unrecognized field " + fieldName(field, "")}
	case *kind.FalseSchema:
		return &failure{at, rankUnknownField, "Unrecognized field " + name}
	case *kind.Type:
		want := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			want = append(want, article(w))
		}
		return &failure{at, rankType, name + " must be " + strings.Join(want, " or ")}
	case *kind.Enum:
		vals := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			vals = append(vals, fmt.Sprint(w))
		}
		return &failure{at, rankEnum, name + " must be one of [" + strings.Join(vals, ", ") + "]"}
	case *kind.Const:
		return &failure{at, rankEnum, fmt.Sprintf("%s must be %v", name, k.Want)}
	case *kind.MinLength, *kind.MaxLength:
		return &failure{at, rankOther, name + " size must be " + v.lengthBounds(e.SchemaURL)}
	case *kind.Pattern:
		if k.Want == noColons {
			return &failure{at, rankOther, name + ` must not contain "::"`}
		}
		return &failure{at, rankOther, fmt.Sprintf("%s must match %q", name, k.Want)}
	case *kind.Format:
		what := k.Want
		switch k.Want {
		case "uuid":
			what = "UUID"
		case "email":
			what = "email address"
		}
		return &failure{at, rankOther, name + " must be a valid " + what}
	case *kind.MinItems:
		return &failure{at, rankOther, fmt.Sprintf("%s must have at least %d item%s", name, k.Want, plural(k.Want))}
	case *kind.MaxItems:
		return &failure{at, rankOther, fmt.Sprintf("%s must have at most %d item%s", name, k.Want, plural(k.Want))}
	case *kind.UniqueItems:
		return &failure{at, rankOther, name + " must not hold duplicate items"}
	case *kind.Minimum:
		return &failure{at, rankOther, name + " must be greater than or equal to " + k.Want.RatString()}
	case *kind.Maximum:
		return &failure{at, rankOther, name + " must be less than or equal to " + k.Want.RatString()}
	case *kind.ExclusiveMinimum:
		return &failure{at, rankOther, name + " must be greater than " + k.Want.RatString()}
	case *kind.ExclusiveMaximum:
		return &failure{at, rankOther, name + " must be less than " + k.Want.RatString()}
	}
	return &failure{at, rankOther, name + " is invalid"}
}

// noColons is the Go (RE2) form of OpenMetadata's name pattern ^((?!::).)*$.
const noColons = "^([^:]|:[^:])*:?$"

// lengthBounds words the length rule of the schema at loc: "between 1 and 256", "at
// least 1" or "at most 256".
func (v *Validator) lengthBounds(loc string) string {
	s := v.byLoc[loc]
	switch {
	case s != nil && s.MinLength != nil && s.MaxLength != nil:
		return fmt.Sprintf("between %d and %d", *s.MinLength, *s.MaxLength)
	case s != nil && s.MinLength != nil:
		return fmt.Sprintf("at least %d", *s.MinLength)
	case s != nil && s.MaxLength != nil:
		return fmt.Sprintf("at most %d", *s.MaxLength)
	}
	return "valid"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

// pathTokens converts an instance location to field tokens, writing the index of an
// array element as "[i]" (it walks the document to tell arrays from objects).
func pathTokens(loc []string, doc any) []string {
	out := make([]string, 0, len(loc))
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			out = append(out, "["+tok+"]")
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				cur = nil
				continue
			}
			cur = c[i]
		case map[string]any:
			out = append(out, tok)
			cur = c[tok]
		default:
			out = append(out, tok)
			cur = nil
		}
	}
	return out
}
