package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/tools"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// fixture is a tool set over a real SQLite catalog.
type fixture struct {
	c   *catalogtest.Catalog
	set *tools.Set
}

// newFixture opens a catalog whose tools have cfg's Budget and ReadOnly.
func newFixture(t *testing.T, cfg tools.Config) *fixture {
	t.Helper()
	c := catalogtest.Open(t, app.Config{Budget: cfg.Budget, ReadOnly: cfg.ReadOnly})
	return &fixture{c: c, set: c.Tools}
}

// call runs a tool and checks the result's invariants: success has structured content
// and the same JSON as text; failure has none, and a JSON {error, statusCode, hint}.
func (f *fixture) call(t *testing.T, p *meridian.Principal, name string, args map[string]any) tools.Result {
	t.Helper()
	res, err := f.set.Call(context.Background(), p, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		if res.Structured != nil {
			t.Fatalf("%s: error result carries structured content", name)
		}
		var body tools.ErrorBody
		if err := json.Unmarshal([]byte(res.Text), &body); err != nil || body.Error == "" || body.StatusCode == 0 || body.Hint == "" {
			t.Fatalf("%s: error text is not {error, statusCode, hint}: %s", name, res.Text)
		}
		if body.StatusCode != res.StatusCode {
			t.Fatalf("%s: statusCode %d in text, %d in result", name, body.StatusCode, res.StatusCode)
		}
		return res
	}
	var text map[string]any
	if err := json.Unmarshal([]byte(res.Text), &text); err != nil {
		t.Fatalf("%s: text is not JSON: %v", name, err)
	}
	a, _ := json.Marshal(text)
	b, _ := json.Marshal(res.Structured)
	if string(a) != string(b) {
		t.Fatalf("%s: text and structured content differ:\n%s\n%s", name, a, b)
	}
	if err := outputSchema(t, f.set, name).Validate(any(res.Structured)); err != nil {
		t.Fatalf("%s: structured content does not conform to the output schema: %v", name, err)
	}
	return res
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[string]*jsonschema.Schema{}
)

// outputSchema compiles a tool's declared output schema, as clients validate with it.
func outputSchema(t *testing.T, set *tools.Set, name string) *jsonschema.Schema {
	t.Helper()
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[name]; ok {
		return s
	}
	tool, _ := set.Lookup(name)
	raw, _ := json.Marshal(tool.Output)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "mem://" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s output schema: %v", name, err)
	}
	schemaCache[name] = s
	return s
}

// ok runs a tool that must succeed and returns its structured content.
func (f *fixture) ok(t *testing.T, p *meridian.Principal, name string, args map[string]any) map[string]any {
	t.Helper()
	res := f.call(t, p, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, res.Text)
	}
	return res.Structured
}

// fail runs a tool that must fail and returns its error body.
func (f *fixture) fail(t *testing.T, p *meridian.Principal, name string, args map[string]any) tools.ErrorBody {
	t.Helper()
	res := f.call(t, p, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want an error: %s", name, args, res.Text)
	}
	var body tools.ErrorBody
	_ = json.Unmarshal([]byte(res.Text), &body)
	return body
}

func list(v any) []any { l, _ := v.([]any); return l }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func num(v any) int { f, _ := v.(float64); return int(f) }
