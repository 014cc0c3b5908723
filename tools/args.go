package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/meridian-catalog/meridian"
)

// Args are a tool call's arguments after binding: aliases resolved to the schema's
// names, values coerced to the schema's types, enums normalized, defaults filled in
// and required arguments checked. Handlers read them with the typed accessors, which
// never fail: binding has already guaranteed the types.
type Args map[string]any

// Has reports whether the argument was given (or has a default).
func (a Args) Has(name string) bool { _, ok := a[name]; return ok }

// String returns a string argument, or "".
func (a Args) String(name string) string { s, _ := a[name].(string); return s }

// Int returns an integer argument, or 0.
func (a Args) Int(name string) int { n, _ := a[name].(int); return n }

// Bool returns a boolean argument, or false.
func (a Args) Bool(name string) bool { b, _ := a[name].(bool); return b }

// Strings returns an array-of-strings argument, or nil.
func (a Args) Strings(name string) []string {
	l, _ := a[name].([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Object returns an object argument, or nil.
func (a Args) Object(name string) map[string]any { m, _ := a[name].(map[string]any); return m }

// aliases are argument names found in Collate's and older OpenMetadata documentation,
// mapped to the names the tools use. They apply only when the tool has the target and
// not the alias itself. snake_case names are also mapped to their camelCase twin.
var aliases = map[string][]string{
	"limit":              {"size", "columnLimit"},
	"q":                  {"query"},
	"type":               {"entityType"},
	"entity":             {"entityType"},
	"offset":             {"from", "columnOffset"},
	"after":              {"cursor"},
	"deleted":            {"includeDeleted"},
	"entityFqn":          {"fqn"},
	"entityFQN":          {"fqn"},
	"FQN":                {"fqn"},
	"fullyQualifiedName": {"fqn"},
}

// bind turns raw call arguments into Args against the tool's input schema. Errors are
// EInvalid with a hint (see hintError).
func (t *Tool) bind(raw map[string]any) (Args, error) {
	in := t.Input
	props := in.properties()
	out := Args{}
	// Canonical names first, so that an alias never overrides an explicit argument.
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		_, ci := props[keys[i]]
		_, cj := props[keys[j]]
		if ci != cj {
			return ci
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		v := raw[k]
		name := k
		if _, ok := props[k]; !ok {
			name = t.resolveAlias(k)
			if name == "" {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Unknown parameter '%s' for tool %s", k, t.Name),
					unknownHint(k, sortedKeys(props)))
			}
			if _, dup := out[name]; dup {
				continue // the canonical argument was given too and wins
			}
		}
		if v == nil {
			continue // null means absent
		}
		ps := asSchema(props[name])
		cv, err := coerce(name, v, ps)
		if err != nil {
			return nil, err
		}
		out[name] = cv
	}
	for name, p := range props {
		if _, ok := out[name]; ok {
			continue
		}
		if d, ok := asSchema(p)["default"]; ok {
			out[name] = cloneDefault(d)
		}
	}
	for _, r := range in.required() {
		v, ok := out[r]
		if s, isStr := v.(string); !ok || (isStr && strings.TrimSpace(s) == "") {
			return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' is required", r),
				fmt.Sprintf("Pass %s: %s", r, describe(asSchema(props[r]))))
		}
	}
	return out, nil
}

// resolveAlias returns the schema name an unknown argument name stands for, or "".
func (t *Tool) resolveAlias(k string) string {
	props := t.Input.properties()
	if target, ok := t.Aliases[k]; ok {
		return target
	}
	for _, target := range aliases[k] {
		if _, ok := props[target]; ok {
			return target
		}
	}
	if c := camel(k); c != k {
		if _, ok := props[c]; ok {
			return c
		}
		if target := t.resolveAlias(c); target != "" {
			return target
		}
	}
	return ""
}

// camel turns entity_type into entityType.
func camel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	parts := strings.Split(s, "_")
	var b strings.Builder
	for i, p := range parts {
		if p == "" {
			continue
		}
		if i > 0 && b.Len() > 0 {
			r := []rune(p)
			r[0] = unicode.ToUpper(r[0])
			p = string(r)
		}
		b.WriteString(p)
	}
	return b.String()
}

// coerce converts v to the type of schema s: numeric strings to numbers, "true" and
// "false" to booleans, a JSON array given as a string (or a single value) to an array,
// a JSON object given as a string to an object. Enums match case-insensitively.
// Integers above the schema's maximum are clamped, as OpenMetadata clamps size.
func coerce(name string, v any, s Schema) (any, error) {
	bad := func(want, example string) error {
		return withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' must be %s, got %s", name, want, show(v)),
			fmt.Sprintf("Pass %s as %s, for example %s", name, want, example))
	}
	switch s.typ() {
	case "string":
		var str string
		switch t := v.(type) {
		case string:
			str = t
		case float64, int, bool, json.Number:
			str = fmt.Sprint(t)
		case []any, map[string]any:
			b, _ := json.Marshal(t) // a JSON Patch sent as an array, for example
			str = string(b)
		default:
			return nil, bad("a string", `"text"`)
		}
		if e := s.enum(); len(e) > 0 {
			for _, allowed := range e {
				if strings.EqualFold(strings.TrimSpace(str), allowed) {
					return allowed, nil
				}
			}
			return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' must be one of %s, got %q", name, strings.Join(e, ", "), str),
				unknownHint(str, e))
		}
		return str, nil
	case "integer", "number":
		var f float64
		switch t := v.(type) {
		case float64:
			f = t
		case int:
			f = float64(t)
		case json.Number:
			x, err := t.Float64()
			if err != nil {
				return nil, bad("a number", "10")
			}
			f = x
		case string:
			x, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
			if err != nil {
				if s.typ() == "integer" {
					return nil, bad("an integer", "10")
				}
				return nil, bad("a number", "0.5")
			}
			f = x
		default:
			if s.typ() == "integer" {
				return nil, bad("an integer", "10")
			}
			return nil, bad("a number", "0.5")
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("a finite number", "10")
		}
		if s.typ() == "number" {
			if min, ok := s["minimum"]; ok {
				if m, _ := intValue(min); f < float64(m) {
					return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' must be at least %d, got %v", name, m, f), "")
				}
			}
			return f, nil
		}
		if f != math.Trunc(f) || math.Abs(f) > 1e15 {
			return nil, bad("an integer", "10")
		}
		n := int(f)
		if min, ok := s["minimum"]; ok {
			if m, _ := intValue(min); n < m {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' must be at least %d, got %d", name, m, n),
					fmt.Sprintf("Pass %s: %s", name, describe(s)))
			}
		}
		if max, ok := s["maximum"]; ok {
			if m, _ := intValue(max); n > m {
				n = m
			}
		}
		return n, nil
	case "boolean":
		switch t := v.(type) {
		case bool:
			return t, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(t)) {
			case "true", "1", "yes":
				return true, nil
			case "false", "0", "no", "":
				return false, nil
			}
		case float64:
			if t == 0 || t == 1 {
				return t == 1, nil
			}
		}
		return nil, bad("a boolean", "true")
	case "array":
		var list []any
		switch t := v.(type) {
		case []any:
			list = t
		case []string:
			for _, x := range t {
				list = append(list, x)
			}
		case string:
			trimmed := strings.TrimSpace(t)
			switch {
			case strings.HasPrefix(trimmed, "["):
				if err := json.Unmarshal([]byte(trimmed), &list); err != nil {
					return nil, bad("an array", `["a", "b"]`)
				}
			case trimmed == "":
				list = []any{}
			case len(s.items().enum()) > 0:
				for _, part := range strings.Split(trimmed, ",") {
					if p := strings.TrimSpace(part); p != "" {
						list = append(list, p)
					}
				}
			default:
				list = []any{trimmed}
			}
		default:
			list = []any{v}
		}
		items := s.items()
		out := make([]any, 0, len(list))
		for i, x := range list {
			if items == nil {
				out = append(out, x)
				continue
			}
			cx, err := coerce(fmt.Sprintf("%s[%d]", name, i), x, items)
			if err != nil {
				return nil, err
			}
			out = append(out, cx)
		}
		if min, ok := s["minItems"]; ok {
			if m, _ := intValue(min); len(out) < m {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' needs at least %d item(s)", name, m),
					fmt.Sprintf("Pass %s: %s", name, describe(s)))
			}
		}
		if max, ok := s["maxItems"]; ok {
			if m, _ := intValue(max); len(out) > m {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' takes at most %d items, got %d", name, m, len(out)),
					"Split the request into several calls")
			}
		}
		return out, nil
	case "object":
		switch t := v.(type) {
		case map[string]any:
			return t, nil
		case string:
			var m map[string]any
			if err := json.Unmarshal([]byte(t), &m); err == nil && m != nil {
				return m, nil
			}
		}
		return nil, bad("an object", `{"key": "value"}`)
	}
	return v, nil
}

// show renders a bad value for an error message, shortened.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	kind := "a string"
	switch v.(type) {
	case float64, int, json.Number:
		kind = "a number"
	case bool:
		kind = "a boolean"
	case []any:
		kind = "an array"
	case map[string]any:
		kind = "an object"
	}
	return kind + " " + s
}

// describe says what a schema expects, for hints.
func describe(s Schema) string {
	if s == nil {
		return "a value"
	}
	d, _ := s["description"].(string)
	want := s.typ()
	if e := s.enum(); len(e) > 0 {
		want = "one of " + strings.Join(e, ", ")
	}
	if d == "" {
		return want
	}
	return want + " (" + d + ")"
}

func cloneDefault(v any) any {
	switch t := v.(type) {
	case []any:
		return append([]any(nil), t...)
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unknownHint suggests the closest of candidates to got.
func unknownHint(got string, candidates []string) string {
	if best := closest(got, candidates); best != "" {
		return fmt.Sprintf("Did you mean '%s'? Accepted: %s", best, strings.Join(candidates, ", "))
	}
	return "Accepted: " + strings.Join(candidates, ", ")
}

// closest returns the candidate nearest to s by edit distance (case-insensitive), or ""
// when none is near enough to be a plausible typo.
func closest(s string, candidates []string) string {
	best, bestD := "", math.MaxInt
	ls := strings.ToLower(s)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(ls, lc)
		if strings.HasPrefix(lc, ls) || strings.HasPrefix(ls, lc) {
			d = min(d, 1)
		}
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	limit := max(2, len([]rune(s))/3)
	if bestD <= limit {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
