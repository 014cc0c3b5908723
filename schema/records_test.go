package schema

import (
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestRecordSchemasValidateExecutions(t *testing.T) {
	v, err := NewRecords()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(RecordNames(), ","); got != "agentExecution,mcpExecution" {
		t.Fatalf("record names = %s", got)
	}
	id := "0b6f7f4e-58a8-4f0e-9d0e-2c1f4c5a6b7d"
	cases := []struct {
		name string
		doc  meridian.Entity
		want string // "" for valid
	}{
		{"mcpExecution", meridian.Entity{"server": map[string]any{"type": "mcpServer"}, "serverId": id, "timestamp": 1767225600000.0, "status": "Running"}, ""},
		{"mcpExecution", meridian.Entity{"server": map[string]any{"type": "mcpServer"}, "serverId": id, "timestamp": 1767225600000.0, "status": "PartialSuccess"}, "status must be one of"},
		{"mcpExecution", meridian.Entity{"serverId": id, "timestamp": 1767225600000.0, "status": "Running"}, "server is required"},
		{"agentExecution", meridian.Entity{"agent": map[string]any{"type": "aiApplication"}, "agentId": id, "timestamp": 1767225600000.0, "status": "PartialSuccess", "input": "q"}, ""},
		{"agentExecution", meridian.Entity{"agent": map[string]any{"type": "aiApplication"}, "agentId": id, "timestamp": 1767225600000.0, "status": "Success", "input": 5.0}, "input must be a string"},
		{"nope", meridian.Entity{}, "Unknown entity type nope"},
	}
	for _, c := range cases {
		err := v.Validate(c.name, c.doc)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %v: %v", c.name, c.doc, err)
			}
			continue
		}
		if err == nil || !strings.Contains(meridian.ErrorMessage(err), c.want) {
			t.Errorf("%s %v: %v, want %q", c.name, c.doc, err, c.want)
		}
	}
}
