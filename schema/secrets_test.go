package schema

import (
	"slices"
	"testing"
)

func TestSecretsAreDerivedFromFormatPassword(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		kind       string
		want, lack []string
	}{
		{"databaseService", []string{"connection/config/password", "connection/config/pwd", "connection/config/bearer",
			"connection/config/headers/*"}, []string{"connection/config/dsn", "connection/config/username"}},
		{"llmService", []string{"connection/config/apiKey"}, nil},
		{"mcpService", []string{"connection/config/environment/*", "connection/config/headers/*"}, nil},
		{"mcpServer", []string{"deployment/environment/*", "deployment/headers/*", "security/token"}, nil},
		{"contextPlugin", []string{"connectionConfig/password", "connectionConfig/clientSecret"}, nil},
		{"table", nil, []string{"columns/*/name"}},
	}
	for _, tt := range tests {
		got := v.Secrets(tt.kind)
		for _, p := range tt.want {
			if !slices.Contains(got, p) {
				t.Errorf("%s: secrets %v lack %s", tt.kind, got, p)
			}
		}
		for _, p := range tt.lack {
			if slices.Contains(got, p) {
				t.Errorf("%s: %s is not a secret", tt.kind, p)
			}
		}
	}
	if got := v.Secrets("table"); len(got) != 0 {
		t.Errorf("table has secrets %v", got)
	}
}
