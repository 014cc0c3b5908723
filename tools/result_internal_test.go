package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// plainObject must give exactly what the JSON round trip gives, or refuse.
func TestPlainObjectEqualsTheJSONRoundTrip(t *testing.T) {
	type ref struct {
		ID string `json:"id"`
	}
	var nilMap map[string]any
	var nilList []any
	cases := []struct {
		name string
		in   map[string]any
		ok   bool
	}{
		{"scalars", map[string]any{"s": "a<b>&c\u2028", "f": 1.5, "neg": -0.0, "i": 20, "i64": int64(-7), "b": true, "n": nil}, true},
		{"nested", map[string]any{"e": meridian.Entity{"name": "x", "tags": []any{}}, "l": []any{map[string]any{"k": []string{"a", "b"}}},
			"rows": []map[string]any{{"a": 1}}, "nilMap": nilMap, "nilList": nilList, "empty": map[string]any{}}, true},
		{"big int", map[string]any{"i": int64(1) << 60}, false},
		{"float32", map[string]any{"f": float32(0.1)}, false},
		{"invalid UTF-8 value", map[string]any{"s": "a\xffb"}, false},
		{"invalid UTF-8 key", map[string]any{"a\xffb": 1}, false},
		{"struct", map[string]any{"r": ref{ID: "1"}}, false},
		{"pointer", map[string]any{"r": &ref{ID: "1"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := plainObject(tc.in)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			var want map[string]any
			if err := json.Unmarshal(marshal(tc.in), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("plainObject = %#v\nround trip = %#v", got, want)
			}
			if string(marshal(got)) != string(marshal(want)) {
				t.Fatalf("texts differ: %s / %s", marshal(got), marshal(want))
			}
		})
	}
	in := map[string]any{"l": []any{map[string]any{"k": "v"}}}
	got, _ := plainObject(in)
	got["l"].([]any)[0].(map[string]any)["k"] = "changed"
	if in["l"].([]any)[0].(map[string]any)["k"] != "v" {
		t.Fatal("plainObject shares values with its input")
	}
}

// lengths.jsonLen must measure what jsonLen measures.
func TestLengthsMeasureLikeJSONLen(t *testing.T) {
	var l lengths
	for _, v := range []any{map[string]any{"a": "<&>", "b": []any{1.0, "x\n"}}, "s", nil, []any{}, map[string]any{"bad": func() {}}, 3.25} {
		if got, want := l.jsonLen(v), jsonLen(v); got != want {
			t.Errorf("lengths.jsonLen(%v) = %d, want %d", v, got, want)
		}
	}
}
