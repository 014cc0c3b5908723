package meridian

import "strings"

// MaxFieldPathBytes bounds a suggestion's fieldPath.
const MaxFieldPathBytes = 4096

// MaxFieldPathDepth bounds how many nested columns a fieldPath may name.
const MaxFieldPathDepth = 64

// FieldPath is a parsed task field path in dot notation: the entity's own description
// or tags ("description", "tags"), or a column's ("columns.<name>.description",
// "columns.<parent>.<child>.tags" for a nested column). A column name holding a dot is
// quoted as in fully qualified names: columns."a.b".description.
type FieldPath struct {
	// Columns are the column names from the top-level column down; empty for the
	// entity's own field.
	Columns []string
	// Field is "description" or "tags".
	Field string
}

// Field path targets.
const (
	FieldDescription = "description"
	FieldTags        = "tags"
)

// ParseFieldPath parses a dot-notation field path. Errors: EInvalid naming the path and
// what is wrong (empty, too long, unbalanced quotes, an unknown field, a column path
// without a column, too deep).
func ParseFieldPath(s string) (FieldPath, error) {
	bad := func(why string) (FieldPath, error) {
		shown := s
		if len(shown) > 200 {
			shown = shown[:200] + "…"
		}
		return FieldPath{}, Errorf(EInvalid, "payload.fieldPath %q: %s", shown, why)
	}
	if strings.TrimSpace(s) == "" {
		return bad("it must not be empty")
	}
	if len(s) > MaxFieldPathBytes {
		return bad("it is longer than 4096 bytes")
	}
	parts, err := SplitFQN(s)
	if err != nil {
		return bad("it is not a dot-separated path (" + ErrorMessage(err) + ")")
	}
	for _, p := range parts {
		if p == "" {
			return bad("it has an empty segment")
		}
	}
	last := parts[len(parts)-1]
	if last != FieldDescription && last != FieldTags {
		return bad("it must end with description or tags")
	}
	if len(parts) == 1 {
		return FieldPath{Field: last}, nil
	}
	if parts[0] != "columns" {
		return bad("only description, tags and columns.<column>.(description|tags) can be suggested")
	}
	cols := parts[1 : len(parts)-1]
	if len(cols) == 0 {
		return bad("columns.<column> must name a column")
	}
	if len(cols) > MaxFieldPathDepth {
		return bad("it names more than 64 nested columns")
	}
	return FieldPath{Columns: cols, Field: last}, nil
}

// String writes the path back in dot notation, quoting names that need it.
func (f FieldPath) String() string {
	if len(f.Columns) == 0 {
		return f.Field
	}
	parts := []string{"columns"}
	for _, c := range f.Columns {
		parts = append(parts, QuoteName(c))
	}
	return strings.Join(append(parts, f.Field), ".")
}

// Column finds the column the path names in an entity document's columns (nested
// columns are in "children"), and returns it as the document holds it (changing it
// changes the document). ok is false when the path names no column or the column does
// not exist.
func (f FieldPath) Column(e Entity) (map[string]any, bool) {
	list := listOf(e["columns"])
	var col map[string]any
	for _, name := range f.Columns {
		col = nil
		for _, c := range list {
			m, _ := c.(map[string]any)
			if n, _ := m["name"].(string); m != nil && n == name {
				col = m
				break
			}
		}
		if col == nil {
			return nil, false
		}
		list = listOf(col["children"])
	}
	return col, col != nil
}
