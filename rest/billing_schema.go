package rest

import (
	"reflect"
	"strings"
)

// typeSchema is the JSON Schema of the JSON encoding of a Go value's type: the shapes
// of the billing answers are documented from the very types the handlers write, so
// the document cannot drift from them. Embedded structs flatten as encoding/json does.
func typeSchema(v any) obj { return schemaOfType(reflect.TypeOf(v)) }

func schemaOfType(t reflect.Type) obj {
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOfType(t.Elem())
	case reflect.Bool:
		return obj{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return obj{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return obj{"type": "number"}
	case reflect.String:
		return obj{"type": "string"}
	case reflect.Slice, reflect.Array:
		return obj{"type": "array", "items": schemaOfType(t.Elem())}
	case reflect.Map:
		return obj{"type": "object", "additionalProperties": schemaOfType(t.Elem())}
	case reflect.Struct:
		props := obj{}
		structProps(t, props)
		return obj{"type": "object", "properties": props}
	}
	return obj{}
}

func structProps(t reflect.Type, props obj) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			structProps(f.Type, props)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = schemaOfType(f.Type)
	}
}
