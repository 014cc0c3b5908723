package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/tools"
)

func TestSearchMetadataRefusesCostlyArgumentsWithAHint(t *testing.T) {
	f := newFixture(t, tools.Config{})
	must := make([]string, 1000)
	for i := range must {
		must[i] = fmt.Sprintf(`{"term":{"owners.name":"u%d"}}`, i)
	}
	cases := []struct {
		name string
		args map[string]any
		msg  string
	}{
		{"10,000 words", map[string]any{"query": strings.Repeat("word ", 10000)}, "q is longer than the maximum of 1000 characters"},
		{"33 words", map[string]any{"query": strings.Repeat("w ", 33)}, "more than the maximum of 32 words"},
		{"1,000 bool.must terms", map[string]any{"query": "*", "queryFilter": `{"query":{"bool":{"must":[` + strings.Join(must, ",") + `]}}}`},
			"query_filter"},
		{"a huge fields list", map[string]any{"query": "*", "fields": strings.Repeat("columns,", 1000)}, "fields is longer than the maximum of 1000 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := f.call(t, f.c.Admin, "search_metadata", c.args)
			if !res.IsError || res.StatusCode != 400 || !strings.Contains(res.Text, c.msg) {
				t.Fatalf("got %s, want isError 400 containing %q", res.Text, c.msg)
			}
		})
	}
}
