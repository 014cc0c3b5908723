package schema

import (
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxQuickSteps bounds how many schemas one quick check visits along one path through
// the document and its references; a longer path (a reference cycle that never
// descends into the value) is left to the library, which reports it.
const maxQuickSteps = 4 * maxDepth

// quick checks v against the compiled schema as the library's Validate would, without
// its error reporting, and so without allocating. It walks the same schemas the library
// walks for v and applies the same keywords, with the library's own compiled patterns
// and format checks. known is false when it meets a keyword or a value it does not
// handle (the combinators, conditionals, dependencies, unevaluated* and content
// keywords, uniqueItems and contains, exclusive bounds, multipleOf, a draft before
// 2020-12, a value of a Go type that decoding JSON does not produce): the library must
// then decide. When known is true, valid is the library's verdict;
// TestQuickAgreesWithTheLibrary and FuzzQuickAgreesWithTheLibrary hold it to that.
func quick(sch *jsonschema.Schema, v any) (valid, known bool) {
	return quickAt(sch, v, 0)
}

func quickAt(s *jsonschema.Schema, v any, steps int) (valid, known bool) {
	if steps > maxQuickSteps || s.DraftVersion < 2020 || !quickKeywords(s) {
		return false, false
	}
	if s.Bool != nil {
		return *s.Bool, true
	}
	t, ok := jsonTypeOf(v)
	if !ok {
		return false, false
	}
	// A keyword that fails decides: the library reports it, whatever the others say.
	if s.Types != nil && !s.Types.IsEmpty() && !typeMatches(*s.Types, t, v) {
		return false, true
	}
	if s.Const != nil {
		if eq, ok := quickEquals(v, *s.Const); !ok || !eq {
			return false, ok
		}
	}
	if s.Enum != nil {
		if eq, ok := quickIn(v, s.Enum.Values); !ok || !eq {
			return false, ok
		}
	}
	if s.Format != nil {
		if s.Format.Name == "regex" { // the library checks it with its regexp engine
			return false, false
		}
		if s.Format.Validate(v) != nil {
			return false, true
		}
	}
	if s.Ref != nil {
		if ok, known := quickAt(s.Ref, v, steps+1); !ok || !known {
			return false, known
		}
	}
	switch t {
	case typeObject:
		return quickObject(s, v.(map[string]any), steps)
	case typeArray:
		return quickArray(s, v.([]any), steps)
	case typeString:
		return quickString(s, v.(string)), true
	case typeNumber:
		return quickNumber(s, v.(float64))
	}
	return true, true
}

// quickKeywords reports whether every assertion s carries is one quick applies.
func quickKeywords(s *jsonschema.Schema) bool {
	return s.RecursiveRef == nil && s.DynamicRef == nil && s.Not == nil && s.AllOf == nil && s.AnyOf == nil &&
		s.OneOf == nil && s.If == nil && s.Then == nil && s.Else == nil && s.PropertyNames == nil &&
		s.Dependencies == nil && s.DependentRequired == nil && s.DependentSchemas == nil &&
		s.UnevaluatedProperties == nil && s.UnevaluatedItems == nil && !s.UniqueItems && s.Contains == nil &&
		s.MinContains == nil && s.MaxContains == nil && s.Items == nil && s.AdditionalItems == nil &&
		s.PrefixItems == nil && s.ContentEncoding == nil && s.ContentMediaType == nil && s.ContentSchema == nil &&
		s.ExclusiveMaximum == nil && s.ExclusiveMinimum == nil && s.MultipleOf == nil && s.Extensions == nil
}

// The JSON types as the library's Types holds them.
var (
	typeNull, typeBoolean, typeNumber, typeInteger = typeNamed("null"), typeNamed("boolean"), typeNamed("number"), typeNamed("integer")
	typeString, typeArray, typeObject              = typeNamed("string"), typeNamed("array"), typeNamed("object")
)

func typeNamed(name string) jsonschema.Types {
	var t jsonschema.Types
	t.Add(name)
	return t
}

// jsonTypeOf is the JSON type of a value as decoding JSON into any makes it.
func jsonTypeOf(v any) (jsonschema.Types, bool) {
	switch t := v.(type) {
	case nil:
		return typeNull, true
	case bool:
		return typeBoolean, true
	case float64:
		return typeNumber, !math.IsNaN(t) && !math.IsInf(t, 0)
	case string:
		return typeString, true
	case []any:
		return typeArray, true
	case map[string]any:
		return typeObject, true
	}
	return 0, false
}

// typeMatches reports whether a value of JSON type t is one of types; a whole number
// is an integer too.
func typeMatches(types, t jsonschema.Types, v any) bool {
	if types&t != 0 {
		return true
	}
	f, ok := v.(float64)
	return ok && types&typeInteger != 0 && f == math.Trunc(f)
}

// quickIn reports whether v equals one of the items, as quickEquals compares them.
func quickIn(v any, items []any) (found, ok bool) {
	for _, item := range items {
		eq, ok := quickEquals(v, item)
		if !ok {
			return false, false
		}
		if eq {
			return true, true
		}
	}
	return false, true
}

// quickEquals compares a value with a const or enum item as the library does, for
// scalars; ok is false for an array or an object on either side.
func quickEquals(v, item any) (eq, ok bool) {
	if !isScalar(v) || !isScalar(item) {
		return false, false
	}
	switch a := v.(type) {
	case nil:
		return item == nil, true
	case bool:
		b, is := item.(bool)
		return is && a == b, true
	case string:
		b, is := item.(string)
		return is && a == b, true
	case float64:
		return sameNumber(a, item), true
	}
	return false, false
}

func isScalar(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}

// sameNumber compares a number with an item as the library does: as the exact
// rationals of their printed forms (false when the item is no number).
func sameNumber(a float64, b any) bool {
	ra, ok1 := printedRat(a)
	rb, ok2 := printedRat(b)
	return ok1 && ok2 && ra.Cmp(rb) == 0
}

// printedRat is the exact rational of v's printed form, as the library reads numbers;
// ok is false when that form is no number.
func printedRat(v any) (*big.Rat, bool) {
	return new(big.Rat).SetString(fmt.Sprint(v))
}

func quickObject(s *jsonschema.Schema, obj map[string]any, steps int) (valid, known bool) {
	if s.MinProperties != nil && len(obj) < *s.MinProperties || s.MaxProperties != nil && len(obj) > *s.MaxProperties {
		return false, true
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return false, true
		}
	}
	for name, pv := range obj {
		evaluated := false
		if ps, ok := s.Properties[name]; ok {
			evaluated = true
			if ok, known := quickAt(ps, pv, steps+1); !ok || !known {
				return false, known
			}
		}
		for re, ps := range s.PatternProperties {
			if re.MatchString(name) {
				evaluated = true
				if ok, known := quickAt(ps, pv, steps+1); !ok || !known {
					return false, known
				}
			}
		}
		if evaluated || s.AdditionalProperties == nil {
			continue
		}
		switch additional := s.AdditionalProperties.(type) {
		case bool:
			if !additional {
				return false, true
			}
		case *jsonschema.Schema:
			if ok, known := quickAt(additional, pv, steps+1); !ok || !known {
				return false, known
			}
		default:
			return false, false
		}
	}
	return true, true
}

func quickArray(s *jsonschema.Schema, arr []any, steps int) (valid, known bool) {
	if s.MinItems != nil && len(arr) < *s.MinItems || s.MaxItems != nil && len(arr) > *s.MaxItems {
		return false, true
	}
	if s.Items2020 != nil {
		for _, item := range arr {
			if ok, known := quickAt(s.Items2020, item, steps+1); !ok || !known {
				return false, known
			}
		}
	}
	return true, true
}

func quickString(s *jsonschema.Schema, str string) bool {
	if s.MinLength != nil || s.MaxLength != nil {
		n := utf8.RuneCountInString(str)
		if s.MinLength != nil && n < *s.MinLength || s.MaxLength != nil && n > *s.MaxLength {
			return false
		}
	}
	return s.Pattern == nil || s.Pattern.MatchString(str)
}

func quickNumber(s *jsonschema.Schema, f float64) (valid, known bool) {
	if s.Minimum == nil && s.Maximum == nil {
		return true, true
	}
	n, ok := printedRat(f)
	if !ok {
		return false, false
	}
	return (s.Minimum == nil || n.Cmp(s.Minimum) >= 0) && (s.Maximum == nil || n.Cmp(s.Maximum) <= 0), true
}
