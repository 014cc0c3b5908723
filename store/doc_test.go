package store

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// encode, encodeAnswer and decode use a faster codec than encoding/json; stored
// documents and answers must be the same bytes, and read back the same values, as
// encoding/json's.
func TestStoredDocumentsAreWhatEncodingJSONWouldWrite(t *testing.T) {
	tests := []struct {
		name string
		doc  meridian.Entity
	}{
		{"keys sorted at every depth", meridian.Entity{"b": 1.0, "a": map[string]any{"z": "1", "A": "2", "é": "3"}}},
		{"HTML and separators escaped", meridian.Entity{"s": "a<b>&c \u2028 \u2029 \"q\" \\ \x00 \x1f"}},
		{"invalid UTF-8 replaced", meridian.Entity{"s": "bad \xff\xfe end"}},
		{"numbers", meridian.Entity{"n": []any{0.1, 1e20, 1e21, 1e-6, 1e-7, -0.0, 5e-324, math.MaxFloat64, 12345678901234567890.0, 100.0}}},
		{"literals and empty values", meridian.Entity{"t": true, "f": false, "z": nil, "l": []any{}, "m": map[string]any{}}},
		{"unicode", meridian.Entity{"s": "日本語 ✓ 🙂"}},
		{"a value with its own encoding", meridian.Entity{"secret": unreadable("se<a>led")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			if got := encode(tt.doc); string(got) != string(want) {
				t.Fatalf("encode = %s, want %s", got, want)
			}
			var answer bytes.Buffer
			enc := json.NewEncoder(&answer)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tt.doc); err != nil {
				t.Fatal(err)
			}
			if got, err := encodeAnswer(tt.doc); err != nil || string(got) != answer.String() {
				t.Fatalf("encodeAnswer = %s, %v; want %s", got, err, answer.String())
			}
			var wantDoc meridian.Entity
			if err := json.Unmarshal(want, &wantDoc); err != nil {
				t.Fatal(err)
			}
			got, err := decode(want)
			if err != nil || !reflect.DeepEqual(got, wantDoc) {
				t.Errorf("decode = %#v, %v; want %#v", got, err, wantDoc)
			}
		})
	}
}
