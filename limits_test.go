package meridian

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONSizeIsTheSerializedLength(t *testing.T) {
	for _, s := range []string{`{}`, `{"a":[1,2.5,-3e-7,true,false,null],"b":{"c":"d\"\\\n\u0001é\u2028"}}`,
		`{"columns":[{"name":"id","dataType":"BIGINT","children":[]}],"x":1e21}`} {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		if got, want := JSONSize(v, 0), b.Len()-1; got != want {
			t.Errorf("JSONSize(%s) = %d, want %d", s, got, want)
		}
	}
	if n := JSONSize(map[string]any{"a": strings.Repeat("x", 100)}, 10); n <= 10 || n > 200 {
		t.Errorf("JSONSize with a limit = %d, want just over 10", n)
	}
}

func TestCheckDocumentNamesTheLimit(t *testing.T) {
	cols := func(n int) []any {
		l := make([]any, n)
		for i := range l {
			l[i] = map[string]any{"name": "c"}
		}
		return l
	}
	nested := map[string]any{"columns": cols(MaxColumns - 1)}
	nested["columns"].([]any)[0].(map[string]any)["children"] = cols(2)
	cases := []struct {
		name string
		doc  Entity
		msg  string
	}{
		{"at the limits", Entity{"description": strings.Repeat("x", MaxDocumentBytes-200000), "columns": cols(MaxColumns)}, ""},
		{"too large", Entity{"description": strings.Repeat("x", MaxDocumentBytes)}, "larger than the maximum of 8388608 bytes"},
		{"too many columns", Entity{"columns": cols(MaxColumns + 1)}, "columns has more than the maximum of 10000 items"},
		{"nested columns count", Entity(nested), "more than the maximum of 10000 columns"},
		{"a long array", Entity{"tags": make([]any, MaxArrayItems+1)}, "tags has more than the maximum of 10000 items"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckDocument(c.doc)
			if c.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if ErrorCode(err) != EInvalid || !strings.Contains(ErrorMessage(err), c.msg) {
				t.Fatalf("got %v, want an invalid error containing %q", err, c.msg)
			}
		})
	}
}

func TestScanJSONLimitsRefusesBeforeDecoding(t *testing.T) {
	items := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(`"a,]",`, n), ",") + "]" }
	cases := []struct{ name, body, msg string }{
		{"at the array limit", `{"a":` + items(MaxArrayItems) + `}`, ""},
		{"commas in strings do not count", `["` + strings.Repeat(`,\",`, 3*MaxArrayItems) + `"]`, ""},
		{"over the array limit", `{"a":` + items(MaxArrayItems+1) + `}`, "an array has more than the maximum of 10000 items"},
		{"too many containers", "{" + strings.Repeat(`"k":[{}],`, MaxContainers/2) + `"k":{}}`, "more than the maximum of 100000 JSON objects and arrays"},
		{"too deep", strings.Repeat("[", MaxDepth+1), "deeper than the maximum of 1000 levels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ScanJSONLimits([]byte(c.body))
			if c.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if ErrorCode(err) != EInvalid || !strings.Contains(ErrorMessage(err), c.msg) {
				t.Fatalf("got %v, want an invalid error containing %q", err, c.msg)
			}
		})
	}
}
