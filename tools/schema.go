package tools

import "sort"

// Schema is a JSON Schema node, kept as a plain map so that it marshals with sorted
// keys (a stable tools/list) and can be walked by the argument binder and by the
// portability check. Tool schemas use a portable subset: every node has a single
// "type" string, objects list their "properties", arrays their "items"; there are no
// $ref, no nullable unions and no anyOf/oneOf.
type Schema map[string]any

// Props are an object's properties by name.
type Props map[string]Schema

// Object returns an object schema with the given properties and required names.
// Unknown properties are refused (additionalProperties false), as tool inputs are.
func Object(props Props, required ...string) Schema {
	s := Schema{"type": "object", "properties": propsMap(props), "additionalProperties": false}
	if len(required) > 0 {
		r := append([]string(nil), required...)
		sort.Strings(r)
		s["required"] = r
	}
	return s
}

// OpenObject returns an object schema that documents some properties and allows
// others, for entity documents whose fields depend on the kind.
func OpenObject(desc string, props Props) Schema {
	s := Schema{"type": "object", "properties": propsMap(props), "additionalProperties": true}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

func propsMap(props Props) map[string]any {
	m := make(map[string]any, len(props))
	for k, v := range props {
		m[k] = v
	}
	return m
}

// String returns a string schema.
func String(desc string) Schema { return Schema{"type": "string", "description": desc} }

// Enum returns a string schema restricted to values. Arguments match case-insensitively
// and are normalized to the listed spelling.
func Enum(desc string, values ...string) Schema {
	return Schema{"type": "string", "description": desc, "enum": append([]string(nil), values...)}
}

// Integer returns an integer schema.
func Integer(desc string) Schema { return Schema{"type": "integer", "description": desc} }

// Number returns a number schema.
func Number(desc string) Schema { return Schema{"type": "number", "description": desc} }

// Boolean returns a boolean schema.
func Boolean(desc string) Schema { return Schema{"type": "boolean", "description": desc} }

// Array returns an array schema of items.
func Array(desc string, items Schema) Schema {
	return Schema{"type": "array", "description": desc, "items": items}
}

// Strings returns an array-of-strings schema.
func Strings(desc string) Schema { return Array(desc, Schema{"type": "string"}) }

// Default sets the default value.
func (s Schema) Default(v any) Schema { s["default"] = v; return s }

// Min sets the minimum (numbers) or minItems (arrays).
func (s Schema) Min(n int) Schema {
	if s["type"] == "array" {
		s["minItems"] = n
	} else {
		s["minimum"] = n
	}
	return s
}

// Max sets the maximum (numbers; larger arguments are clamped) or maxItems (arrays).
func (s Schema) Max(n int) Schema {
	if s["type"] == "array" {
		s["maxItems"] = n
	} else {
		s["maximum"] = n
	}
	return s
}

func (s Schema) typ() string { t, _ := s["type"].(string); return t }

func (s Schema) properties() map[string]any { p, _ := s["properties"].(map[string]any); return p }

func (s Schema) prop(name string) (Schema, bool) {
	v, ok := s.properties()[name]
	if !ok {
		return nil, false
	}
	return asSchema(v), true
}

func (s Schema) items() Schema { return asSchema(s["items"]) }

func (s Schema) required() []string {
	switch r := s["required"].(type) {
	case []string:
		return r
	case []any:
		out := make([]string, 0, len(r))
		for _, x := range r {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func (s Schema) enum() []string {
	switch e := s["enum"].(type) {
	case []string:
		return e
	case []any:
		out := make([]string, 0, len(e))
		for _, x := range e {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func asSchema(v any) Schema {
	switch t := v.(type) {
	case Schema:
		return t
	case map[string]any:
		return Schema(t)
	}
	return nil
}

func intValue(v any) (int, bool) {
	switch t := v.(type) {
	case int:
		return t, true
	case float64:
		return int(t), true
	}
	return 0, false
}
