package collab

import (
	"strings"
	"testing"
)

func TestCheckFiltersNamesTheFilterThatIsWrong(t *testing.T) {
	cases := []struct {
		name, value, want string
	}{
		{"fine", "table", ""},
		{"long", strings.Repeat("x", 9), "long is longer than 8 bytes"},
		{"nul", "a\x00b", "nul must be valid UTF-8 without NUL characters"},
		{"utf8", "\xff", "utf8 must be valid UTF-8 without NUL characters"},
	}
	for _, c := range cases {
		err := CheckFilters(8, map[string]string{c.name: c.value})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) || (c.want == "") != (err == nil) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
