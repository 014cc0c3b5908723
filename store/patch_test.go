package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

func patchTarget() meridian.Entity {
	return meridian.Entity{"id": "6f1c1a52-8f3e-4c39-9a53-0c1f0b9d3a11", "name": "orders", "description": "d",
		"tags": []any{}, "columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}},
		"extension": map[string]any{"a/b": 1.0, "c~d": 2.0}}
}

func TestApplyPatchFollowsRFC6902(t *testing.T) {
	cases := []struct {
		name, patch, path string
		want              any
	}{
		{"replace", `[{"op":"replace","path":"/description","value":"x"}]`, "description", "x"},
		{"replace of a missing member adds it", `[{"op":"replace","path":"/displayName","value":"Orders"}]`, "displayName", "Orders"},
		{"append to array", `[{"op":"add","path":"/tags/-","value":{"tagFQN":"A.b"}}]`, "tags", []any{map[string]any{"tagFQN": "A.b"}}},
		{"escaped pointer", `[{"op":"remove","path":"/extension/a~1b"},{"op":"remove","path":"/extension/c~0d"}]`, "extension", map[string]any{}},
		{"remove", `[{"op":"remove","path":"/description"}]`, "description", nil},
		{"test then copy", `[{"op":"test","path":"/name","value":"orders"},{"op":"copy","from":"/name","path":"/displayName"}]`, "displayName", "orders"},
		{"href is ignored", `[{"op":"replace","path":"/href","value":"x"}]`, "href", nil},
		{"insert at an index", `[{"op":"add","path":"/columns/0","value":{"name":"a"}}]`, "columns",
			[]any{map[string]any{"name": "a"}, map[string]any{"name": "id", "dataType": "BIGINT"}}},
		{"add at the end index", `[{"op":"add","path":"/columns/1","value":{"name":"a"}}]`, "columns",
			[]any{map[string]any{"name": "id", "dataType": "BIGINT"}, map[string]any{"name": "a"}}},
		{"add replaces a member", `[{"op":"add","path":"/name","value":"x"},{"op":"copy","from":"/name","path":"/displayName"}]`, "displayName", "x"},
		{"nested add", `[{"op":"add","path":"/columns/0/description","value":"k"}]`, "columns",
			[]any{map[string]any{"name": "id", "dataType": "BIGINT", "description": "k"}}},
		{"remove from an array", `[{"op":"add","path":"/tags/-","value":1},{"op":"add","path":"/tags/-","value":2},{"op":"remove","path":"/tags/0"}]`, "tags", []any{2.0}},
		{"move into an array", `[{"op":"move","from":"/description","path":"/tags/0"}]`, "tags", []any{"d"}},
		{"move to itself", `[{"op":"move","from":"/description","path":"/description"}]`, "description", "d"},
		{"copy is deep", `[{"op":"copy","from":"/columns/0","path":"/columns/-"},{"op":"replace","path":"/columns/1/name","value":"b"}]`, "columns",
			[]any{map[string]any{"name": "id", "dataType": "BIGINT"}, map[string]any{"name": "b", "dataType": "BIGINT"}}},
		{"test compares JSON values", `[{"op":"test","path":"/extension","value":{"c~d":2,"a/b":1.0}},{"op":"remove","path":"/extension"}]`, "extension", nil},
		{"empty key", `[{"op":"add","path":"/extension/","value":3}]`, "extension", map[string]any{"a/b": 1.0, "c~d": 2.0, "": 3.0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, err := ParsePatch([]byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ApplyPatch(context.Background(), patchTarget(), ops)
			if err != nil {
				t.Fatal(err)
			}
			if g := encodeChange(got[c.path]); g != encodeChange(c.want) {
				t.Fatalf("%s = %v, want %v", c.path, g, encodeChange(c.want))
			}
		})
	}
}

func TestParsePatchRejectsMalformedPatches(t *testing.T) {
	for _, p := range []string{``, `{}`, `[1]`, `[{"op":"add"}]`, `[{"op":"add","path":"x","value":1}]`,
		`[{"op":"nope","path":"/a"}]`, `[{"op":"add","path":"/a"}]`, `[{"op":"move","path":"/a"}]`,
		`[{"op":"add","path":"/a~2","value":1}]`, `[{"op":"add","path":"","value":{}}]`, `[{"op":5,"path":"/a"}]`,
		`[{"op":"add","path":"/a","value":1,"extra":true}]`} {
		if _, err := ParsePatch([]byte(p)); meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("ParsePatch(%s) = %v, want an invalid error", p, err)
		}
	}
}

func TestApplyPatchRejectsInapplicableOperations(t *testing.T) {
	for _, p := range []string{`[{"op":"remove","path":"/nope"}]`, `[{"op":"replace","path":"/columns/7","value":1}]`,
		`[{"op":"test","path":"/name","value":"other"}]`, `[{"op":"add","path":"/a/b/c","value":1}]`,
		`[{"op":"replace","path":"/columns/-1","value":1}]`, `[{"op":"replace","path":"/columns/-","value":1}]`,
		`[{"op":"add","path":"/columns/2","value":1}]`, `[{"op":"add","path":"/columns/01","value":1}]`,
		`[{"op":"move","from":"/columns","path":"/columns/0/children"}]`, `[{"op":"add","path":"/name/x","value":1}]`,
		`[{"op":"test","path":"/tags/0","value":null}]`, `[{"op":"copy","from":"/nope","path":"/x"}]`} {
		ops, err := ParsePatch([]byte(p))
		if err != nil {
			t.Fatalf("ParsePatch(%s): %v", p, err)
		}
		if _, err := ApplyPatch(context.Background(), patchTarget(), ops); meridian.ErrorCode(err) != meridian.EInvalid ||
			!strings.HasPrefix(meridian.ErrorMessage(err), "Invalid JSON Patch") {
			t.Errorf("ApplyPatch(%s) = %v, want an invalid error", p, err)
		}
	}
}

func TestPatchesAreBoundedAsAWhole(t *testing.T) {
	big := `"` + strings.Repeat("x", 1<<20) + `"`
	copies := func(n int) string {
		ops := []string{`{"op":"add","path":"/description","value":` + big + `}`}
		for i := 0; i < n; i++ {
			ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"/description","path":"/c%d"}`, i))
		}
		return "[" + strings.Join(ops, ",") + "]"
	}
	noops := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/name","value":"orders"},`, MaxPatchOps+1), ",") + "]"
	doubling := `[{"op":"add","path":"/a","value":` + big + `}` + strings.Repeat(`,{"op":"copy","from":"/a","path":"/a2"},{"op":"move","from":"/a2","path":"/a"}`, 20) + "]"
	cases := []struct{ name, patch, msg string }{
		{"too many operations", noops, "more than the maximum of 1000 operations"},
		{"too many bytes", `[{"op":"add","path":"/d","value":"` + strings.Repeat("x", MaxPatchBytes) + `"}]`, "larger than the maximum of 8388608 bytes"},
		{"copies past the document maximum", copies(20), "operation 7 (copy /c6): the copy would make the document larger than the maximum of 8388608 bytes"},
		{"an add past the document maximum", `[{"op":"add","path":"/a","value":` + big + `},{"op":"add","path":"/b","value":"` + strings.Repeat("y", 4<<20) + `"}]`,
			"operation 1 (add /b): the document would be larger than the maximum of 8388608 bytes"},
		{"too much work", doubling, "more than the maximum of 33554432 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, err := ParsePatch([]byte(c.patch))
			if err == nil {
				doc := patchTarget()
				doc["description"] = strings.Repeat("d", 3<<20)
				_, err = ApplyPatch(context.Background(), doc, ops)
			}
			if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(meridian.ErrorMessage(err), c.msg) {
				t.Fatalf("got %v, want an invalid error containing %q", err, c.msg)
			}
		})
	}
	t.Run("seven copies fit", func(t *testing.T) {
		ops, err := ParsePatch([]byte(copies(6)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ApplyPatch(context.Background(), patchTarget(), ops); err != nil {
			t.Fatal(err)
		}
	})
}

func TestApplyPatchStopsWhenTheCallerGivesUp(t *testing.T) {
	ops, err := ParsePatch([]byte(`[{"op":"add","path":"/a","value":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ApplyPatch(ctx, patchTarget(), ops); !errors.Is(err, context.Canceled) {
		t.Fatalf("ApplyPatch after cancel = %v, want context.Canceled", err)
	}
}

func FuzzApplyPatch(f *testing.F) {
	for _, s := range []string{
		`[{"op":"add","path":"/columns/0","value":{"name":"a"}}]`,
		`[{"op":"add","path":"/tags/-","value":1},{"op":"move","from":"/tags/0","path":"/columns/0/x"}]`,
		`[{"op":"copy","from":"/columns/0","path":"/columns/-"},{"op":"remove","path":"/columns/1/name"}]`,
		`[{"op":"replace","path":"/columns/01","value":1}]`,
		`[{"op":"move","from":"/extension","path":"/extension/x"}]`,
		`[{"op":"add","path":"/extension/","value":{}},{"op":"test","path":"/extension/","value":{}}]`,
		`[{"op":"copy","from":"","path":"/x"}]`,
		`[{"op":"add","path":"/columns/99999999999","value":1}]`,
		`[{"op":"add","path":"/description","value":"x"}]`,
		`[{"op":"remove","path":"/columns/0"}]`,
		`[{"op":"move","from":"/name","path":"/displayName"}]`,
		`[{"op":"replace","path":"/extension/a~1b","value":[1,2]}]`,
		`[{"op":"copy","from":"/columns","path":"/columns/0/children"}]`,
		`[{"op":"test","path":"/tags","value":[]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ops, err := ParsePatch(b)
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("ParsePatch error code %q", meridian.ErrorCode(err))
			}
			return
		}
		out, err := ApplyPatch(context.Background(), patchTarget(), ops)
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("ApplyPatch error code %q", meridian.ErrorCode(err))
			}
			return
		}
		if out == nil {
			t.Fatal("nil document without an error")
		}
	})
}
