package store

import (
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, err := ParsePatch([]byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ApplyPatch(patchTarget(), ops)
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
		`[{"op":"replace","path":"/columns/-1","value":1}]`} {
		ops, err := ParsePatch([]byte(p))
		if err != nil {
			t.Fatalf("ParsePatch(%s): %v", p, err)
		}
		if _, err := ApplyPatch(patchTarget(), ops); meridian.ErrorCode(err) != meridian.EInvalid ||
			!strings.HasPrefix(meridian.ErrorMessage(err), "Invalid JSON Patch") {
			t.Errorf("ApplyPatch(%s) = %v, want an invalid error", p, err)
		}
	}
}

func FuzzApplyPatch(f *testing.F) {
	for _, s := range []string{
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
		out, err := ApplyPatch(patchTarget(), ops)
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
