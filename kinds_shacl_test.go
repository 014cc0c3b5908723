package meridian

import (
	"strings"
	"testing"
)

func TestParseShaclShapesChecksTheTurtle(t *testing.T) {
	const ok = `@prefix sh: <http://www.w3.org/ns/shacl#> .
<urn:s> a sh:NodeShape ; sh:targetClass <urn:B>, <urn:A> ; sh:property [ sh:path <urn:p> ; sh:minCount 1 ] .`
	tests := []struct {
		name, in string
		valid    bool
		targets  string
	}{
		{"a node shape", ok, true, "urn:A urn:B"},
		{"a property shape only", `<urn:x> <http://www.w3.org/ns/shacl#path> <urn:p> .`, true, ""},
		{"empty", "  ", false, ""},
		{"not Turtle", "@prefix sh: <", false, ""},
		{"no shape", "<urn:a> <urn:b> <urn:c> .", false, ""},
		{"too long", strings.Repeat("#", MaxShaclShapes+1), false, ""},
		{"invalid UTF-8", "<urn:a> <urn:b> \"\xff\" .", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, targets, err := ParseShaclShapes(tt.in)
			if (err == nil) != tt.valid {
				t.Fatalf("err = %v, want valid %v", err, tt.valid)
			}
			if err != nil && ErrorCode(err) != EInvalid {
				t.Fatalf("code %s, want %s", ErrorCode(err), EInvalid)
			}
			if got := strings.Join(targets, " "); got != tt.targets {
				t.Fatalf("targets %q, want %q", got, tt.targets)
			}
		})
	}
}

// FuzzParseShaclShapes: arbitrary text never panics and is either shapes or EInvalid.
func FuzzParseShaclShapes(f *testing.F) {
	f.Add(`@prefix sh: <http://www.w3.org/ns/shacl#> . <urn:s> a sh:NodeShape .`)
	f.Add(`<a> <b> "c`)
	f.Add(`[ [ [ [`)
	f.Add(`@base <x> . <#a> <#b> ( 1 2 ( 3 ) ) .`)
	f.Fuzz(func(t *testing.T, s string) {
		if _, _, err := ParseShaclShapes(s); err != nil && ErrorCode(err) != EInvalid {
			t.Fatalf("code %s", ErrorCode(err))
		}
	})
}
