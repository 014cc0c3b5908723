package schema

import (
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// newCompiler returns the compiler every validator of this package compiles with:
// draft 2020-12, formats asserted, no remote references, and patterns by
// compilePattern.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(compilePattern)
	return c
}

// codedPatterns are schema patterns matched by code instead of by a regular
// expression, each exactly as its expression would match. They are checked on every
// write, on the entity's name and on each column's, and Go's regexp package steps
// through their alternations one character at a time: the entity name's pattern
// alone was 3.5% of the CPU of a bulk ingest.
var codedPatterns = map[string]func(string) bool{
	// An entity name (common.json#/$defs/entityName): no "::" anywhere, since a name
	// may end with one colon but never hold two in a row.
	`^([^:]|:[^:])*:?$`: func(s string) bool { return !strings.Contains(s, "::") },
}

// compilePattern is the compiler's regexp engine: a coded pattern when there is one,
// else Go's regexp (RE2 syntax, as the library's default engine).
func compilePattern(expr string) (jsonschema.Regexp, error) {
	if match, ok := codedPatterns[expr]; ok {
		return codedPattern{expr: expr, match: match}, nil
	}
	return regexp.Compile(expr)
}

// codedPattern is a pattern of codedPatterns, as a jsonschema.Regexp.
type codedPattern struct {
	expr  string
	match func(string) bool
}

func (p codedPattern) String() string            { return p.expr }
func (p codedPattern) MatchString(s string) bool { return p.match(s) }
