package tools_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const goldenToolsList = "testdata/tools_list.json"

// TestToolsListContract renders tools/list as a client receives it over HTTP and
// compares it with the committed golden file. It also fails on a tool without a title,
// description, schemas or any of the four annotations set explicitly, and on a schema
// the portability rules refuse (what Inspector's --strict flags).
func TestToolsListContract(t *testing.T) {
	f := newFixture(t, tools.Config{})
	srv := httptest.NewServer(rpc.NewHTTP(rpc.Config{Tools: f.set, Auth: f.c.Auth, Version: "test"}))
	defer srv.Close()
	token := f.c.Token(t, f.c.Admin)
	raw := rawCall(t, srv.URL+"/mcp", token, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	var resp struct {
		Result struct {
			Tools      []map[string]any `json:"tools"`
			NextCursor string           `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatalf("tools/list: %v: %s", err, raw)
	}
	listed := resp.Result.Tools
	if len(listed) != len(f.set.Tools()) || resp.Result.NextCursor != "" {
		t.Fatalf("tools/list has %d tools (nextCursor %q), want all %d on one page", len(listed), resp.Result.NextCursor, len(f.set.Tools()))
	}
	for i, tool := range listed {
		name, _ := tool["name"].(string)
		if i > 0 && listed[i-1]["name"].(string) >= name {
			t.Errorf("tools are not in deterministic (sorted) order at %s", name)
		}
		for _, key := range []string{"title", "description"} {
			if s, _ := tool[key].(string); s == "" {
				t.Errorf("%s: no %s", name, key)
			}
		}
		ann, _ := tool["annotations"].(map[string]any)
		for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[hint].(bool); !ok {
				t.Errorf("%s: annotation %s is not set explicitly", name, hint)
			}
		}
		if ann["openWorldHint"] != false {
			t.Errorf("%s: openWorldHint must be false", name)
		}
		if ann["readOnlyHint"] == true && ann["destructiveHint"] == true {
			t.Errorf("%s: a read-only tool can't be destructive", name)
		}
		for _, key := range []string{"inputSchema", "outputSchema"} {
			s, ok := tool[key].(map[string]any)
			if !ok {
				t.Errorf("%s: no %s", name, key)
				continue
			}
			if s["type"] != "object" {
				t.Errorf("%s: %s root is not an object", name, key)
			}
			for _, err := range tools.Portability(s) {
				t.Errorf("%s %s: %v", name, key, err)
			}
		}
		def, ok := f.set.Lookup(name)
		if !ok {
			t.Fatalf("%s listed but not defined", name)
		}
		if def.Write == (ann["readOnlyHint"] == true) {
			t.Errorf("%s: readOnlyHint disagrees with Write", name)
		}
		if def.Write && !strings.Contains(def.Description, "confirm") {
			t.Errorf("%s: a write tool's description must ask the model to confirm with the user", name)
		}
	}

	got, err := json.MarshalIndent(listed, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenToolsList), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenToolsList, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenToolsList)
	if err != nil {
		t.Fatalf("%v (run go test ./tools -run TestToolsListContract -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("tools/list drifted from %s; if the change is intended, run go test ./tools -run TestToolsListContract -update and commit the file.\n%s",
			goldenToolsList, firstDiff(string(want), string(got)))
	}
}

// TestPortabilityRejects shows what the portability check refuses.
func TestPortabilityRejects(t *testing.T) {
	cases := map[string]tools.Schema{
		"nullable union":   {"type": "object", "properties": map[string]any{"a": map[string]any{"type": []any{"null", "array"}, "items": map[string]any{"type": "string"}}}},
		"$ref":             {"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/x"}}},
		"no properties":    {"type": "object"},
		"array no items":   {"type": "object", "properties": map[string]any{"a": map[string]any{"type": "array"}}},
		"anyOf":            {"type": "object", "properties": map[string]any{"a": map[string]any{"anyOf": []any{}}}},
		"missing required": {"type": "object", "properties": map[string]any{}, "required": []any{"x"}},
	}
	for name, s := range cases {
		if errs := tools.Portability(s); len(errs) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

// rawCall posts one JSON-RPC message and returns the JSON response (unwrapping SSE).
func rawCall(t *testing.T, url, token, body string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return []byte(data)
			}
		}
	}
	return b
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return ""
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
