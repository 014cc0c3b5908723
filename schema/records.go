package schema

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Records are JSON Schemas of documents that are not entities but records kept beside
// them (MCP and agent executions). They live in records/<name>.json and are validated
// with the same messages as the kinds.

//go:embed records/*.json
var recordFiles embed.FS

// RecordNames returns the names of the embedded record schemas, sorted.
func RecordNames() []string {
	entries, err := recordFiles.ReadDir("records")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// NewRecords compiles the embedded record schemas into a Validator whose "kinds" are
// the record names: Validate(name, doc) checks a record, Schema(name) returns its raw
// schema. It is safe for concurrent use.
func NewRecords() (*Validator, error) {
	c := newCompiler()
	v := &Validator{
		schemas:  map[string]*jsonschema.Schema{},
		raw:      map[string]json.RawMessage{},
		defaults: map[string]map[string]any{},
		required: map[string][]string{},
		byLoc:    map[string]*jsonschema.Schema{},
		secrets:  map[string][]string{},
	}
	for _, name := range RecordNames() {
		b, err := recordFiles.ReadFile("records/" + name + ".json")
		if err != nil {
			return nil, fmt.Errorf("record schema %s: %w", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("record schema %s: %w", name, err)
		}
		url := baseURL + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("record schema %s: %w", name, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("record schema %s: %w", name, err)
		}
		v.raw[name] = json.RawMessage(b)
		v.schemas[name] = sch
		v.index(sch)
		var top struct {
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(b, &top); err != nil {
			return nil, fmt.Errorf("record schema %s: %w", name, err)
		}
		v.required[name] = top.Required
	}
	return v, nil
}
