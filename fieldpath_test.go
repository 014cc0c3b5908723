package meridian

import (
	"strings"
	"testing"
)

func TestParseFieldPathReadsDotNotation(t *testing.T) {
	tests := []struct {
		in      string
		columns []string
		field   string
	}{
		{"description", nil, "description"},
		{"tags", nil, "tags"},
		{"columns.zip.description", []string{"zip"}, "description"},
		{"columns.zip.tags", []string{"zip"}, "tags"},
		{`columns."a.b".description`, []string{"a.b"}, "description"},
		{"columns.address.street.description", []string{"address", "street"}, "description"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParseFieldPath(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Field != tc.field || strings.Join(p.Columns, "|") != strings.Join(tc.columns, "|") {
				t.Fatalf("got %+v", p)
			}
			if p.String() != tc.in {
				t.Fatalf("String() = %q, want %q", p.String(), tc.in)
			}
		})
	}
}

func TestParseFieldPathRefusesWhatItCannotApply(t *testing.T) {
	for _, in := range []string{"", "  ", "name", "columns", "columns.description", "owners.description",
		"columns..description", `columns."unterminated.description`, "columns.zip.dataType",
		strings.Repeat("a", MaxFieldPathBytes+1), "columns." + strings.Repeat("c.", MaxFieldPathDepth+1) + "description"} {
		if _, err := ParseFieldPath(in); ErrorCode(err) != EInvalid {
			t.Errorf("%.40q: got %v, want EInvalid", in, err)
		}
	}
}

func TestFieldPathFindsNestedColumns(t *testing.T) {
	e := Entity{"columns": []any{map[string]any{"name": "address", "children": []any{map[string]any{"name": "street"}}}}}
	p, _ := ParseFieldPath("columns.address.street.description")
	if c, ok := p.Column(e); !ok || c["name"] != "street" {
		t.Fatalf("got %v %v", c, ok)
	}
	p, _ = ParseFieldPath("columns.address.zip.description")
	if _, ok := p.Column(e); ok {
		t.Fatal("found a column that does not exist")
	}
}

// FuzzParseFieldPath checks that any input parses or is EInvalid, without panicking, and
// that a parsed path writes back to a path that parses to the same value.
func FuzzParseFieldPath(f *testing.F) {
	for _, s := range []string{"description", "columns.zip.description", `columns."a.b".tags`, "columns..x", `"`, "columns.\x00.tags"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseFieldPath(s)
		if err != nil {
			if ErrorCode(err) != EInvalid {
				t.Fatalf("%q: %v is not EInvalid", s, err)
			}
			return
		}
		again, err := ParseFieldPath(p.String())
		if err != nil || again.String() != p.String() || again.Field != p.Field || len(again.Columns) != len(p.Columns) {
			t.Fatalf("%q → %q does not round-trip: %+v, %v", s, p.String(), again, err)
		}
	})
}
