package rest

import (
	"net/http"
	"testing"
)

func TestSystemVersionAnswersWithoutToken(t *testing.T) {
	f := newFixture(t)
	r := f.do(http.MethodGet, "/api/v1/system/version", "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("status = %d: %s", r.status, r.body)
	}
	v := r.json(t)
	if v["version"] != "test" {
		t.Errorf("version = %v, want the server's version", v["version"])
	}
	if _, ok := v["revision"].(string); !ok {
		t.Errorf("revision = %v, want a string", v["revision"])
	}
	if _, ok := v["timestamp"].(float64); !ok {
		t.Errorf("timestamp = %v, want a number", v["timestamp"])
	}
}
