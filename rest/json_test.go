package rest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// marshal and decodeJSON use a faster codec than encoding/json; answers must be the
// bytes encoding/json would write (without HTML escaping), and bodies must decode to
// what it would decode, with its wording of what is wrong.
func TestAnswersAreWhatEncodingJSONWouldWrite(t *testing.T) {
	type page struct {
		Data   []any          `json:"data"`
		Paging map[string]any `json:"paging,omitempty"`
		Total  *int           `json:"total"`
		Note   string         `json:"note,omitempty"`
	}
	tests := []struct {
		name string
		v    any
	}{
		{"document", map[string]any{"b": 1e21, "a": "x<y>&z \u2028", "c": []any{0.1, nil, true}}},
		{"struct with empty fields", page{}},
		{"struct with values", page{Data: []any{map[string]any{"z": 1.0, "a": "é"}}, Note: "<b>"}},
		{"invalid UTF-8", "bad \xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tt.v); err != nil {
				t.Fatal(err)
			}
			got, err := marshal(tt.v)
			if err != nil || string(got) != want.String() {
				t.Errorf("marshal = %q, %v; want %q", got, err, want.String())
			}
		})
	}
}

func TestBodiesDecodeAsEncodingJSONWould(t *testing.T) {
	tests := []struct {
		name, body string
		problem    string // the error's message, "" for none
	}{
		{"object", `{"name":"t","columns":[{"name":"c","dataLength":32}],"x":null,"y":true}`, ""},
		{"duplicate key: the last wins", `{"a":1,"a":2}`, ""},
		{"escapes and invalid UTF-8", "{\"s\":\"\\u00e9\\ud800 \xff\"}", ""},
		{"array", `[1,"2",{"k":[]}]`, ""},
		{"syntax error", `{"a":1,}`, "Invalid request format: invalid character '}' looking for beginning of object key string at offset 8"},
		{"cut short", `{"a":`, "Invalid request format: unexpected end of JSON input at offset 5"},
		{"number out of range", `{"n":1e400}`, "Invalid request format: json: cannot unmarshal number 1e400 into Go value of type float64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeJSON([]byte(tt.body))
			if tt.problem != "" {
				if err == nil || err.Error() != tt.problem {
					t.Fatalf("error = %v, want %q", err, tt.problem)
				}
				return
			}
			var want any
			if err := json.Unmarshal([]byte(tt.body), &want); err != nil {
				t.Fatal(err)
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("decodeJSON = %#v, %v; want %#v", got, err, want)
			}
		})
	}
}

// FuzzBodiesDecodeAsEncodingJSONWould checks decodeJSON against encoding/json on any
// input within the body limits: the same bodies are accepted, to the same values.
func FuzzBodiesDecodeAsEncodingJSONWould(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":[true,null,"x\u00e9"]}`, `[1e21,-0,0.1]`, "{\"s\":\"\xff\"}", `{"a":1} x`, `{"a":01}`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeJSON(body)
		var want any
		werr := json.Unmarshal(body, &want)
		if err != nil {
			if werr == nil && len(bytes.TrimSpace(body)) > 0 && !limited(body) {
				t.Fatalf("decodeJSON refused %q: %v; encoding/json took it", body, err)
			}
			return
		}
		if werr != nil {
			t.Fatalf("decodeJSON took %q; encoding/json refused it: %v", body, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeJSON(%q) = %#v, encoding/json %#v", body, got, want)
		}
	})
}

// limited reports whether body breaks the documented body limits, which decodeJSON
// checks before decoding.
func limited(body []byte) bool {
	return meridian.ScanJSONLimits(body) != nil
}
