package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// FuzzToolCall calls every tool with arbitrary JSON arguments against a small real
// catalog. Whatever the arguments, a call answers; it never panics and never fails
// with an internal (5xx) error.
func FuzzToolCall(f *testing.F) {
	c := catalogtest.New(f)
	table := c.Table(f, "svc", "db", "sch", "orders", 3)
	set := c.Tools
	names := []string{}
	for _, t := range set.Tools() {
		names = append(names, t.Name)
	}
	for i, args := range []string{
		`{"query":"orders","size":"5"}`,
		`{"entityType":"table","fqn":"` + table + `","columnLimit":1,"include":["lineage","quality"]}`,
		`{"entities":["table:` + table + `","bogus","table:"]}`,
		`{"entityType":"table","fqn":"` + table + `","patch":"[{\"op\":\"add\",\"path\":\"/description\",\"value\":\"x\"}]"}`,
		`{"entity_type":"table","fqn":"` + table + `","tags":["No.Such"],"tagsMode":"add"}`,
		`{"fromEntity":{"type":"table","fqn":"` + table + `"},"toEntity":{"type":"table","fqn":"` + table + `"}}`,
		`{"name":"m","metricExpressionLanguage":"SQL","metricExpressionCode":"select 1","metricType":"nope"}`,
		`{"cursor":"!!!","limit":-3}`, `{"":null}`, `{"query":{"nested":[1,2]}}`,
	} {
		f.Add(uint8(i), args)
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil {
			return
		}
		name := names[int(which)%len(names)]
		res, err := set.Call(context.Background(), c.Admin, name, args)
		if err != nil {
			t.Fatalf("%s(%s): %v", name, raw, err)
		}
		if res.IsError && res.StatusCode >= 500 {
			t.Fatalf("%s(%s) failed with %d: %s", name, raw, res.StatusCode, res.Text)
		}
	})
}
