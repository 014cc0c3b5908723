package rest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

func TestBulkAnswersEveryElement(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ path, body string }{
		{"/api/v1/services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
		{"/api/v1/databases", `{"name":"db","service":"svc"}`},
		{"/api/v1/databaseSchemas", `{"name":"sch","database":"svc.db"}`},
	} {
		if r := f.call("POST", c.path, c.body); r.status != 201 {
			t.Fatalf("POST %s: %d %s", c.path, r.status, r.body)
		}
	}
	table := func(name, typ string) string {
		return `{"name":"` + name + `","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"` + typ + `"}]}`
	}
	tests := []struct {
		name                 string
		body                 string
		status               string
		passed, failed       int
		firstFailedMessageIn string
	}{
		{"all pass", "[" + table("a", "INT") + "," + table("b", "INT") + "]", "success", 2, 0, ""},
		{"one fails alone", "[" + table("c", "INT") + "," + table("d", "NOPE") + "]", "partialSuccess", 1, 1, "dataType"},
		{"all fail", "[" + table("e", "NOPE") + "]", "failure", 0, 1, "dataType"},
		{"empty", "[]", "success", 0, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.call("PUT", "/api/v1/tables/bulk", tc.body)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			var out bulkResult
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatal(err)
			}
			if out.Status != tc.status || out.NumberOfRowsPassed != tc.passed || out.NumberOfRowsFailed != tc.failed ||
				out.NumberOfRowsProcessed != tc.passed+tc.failed {
				t.Fatalf("answer %s", r.body)
			}
			if tc.failed > 0 && !strings.Contains(out.FailedRequest[0].Message, tc.firstFailedMessageIn) {
				t.Fatalf("failed message %q", out.FailedRequest[0].Message)
			}
			for _, s := range out.SuccessRequest {
				if s.Message != meridian.EventEntityCreated || !strings.HasPrefix(s.Request.(string), "svc.db.sch.") {
					t.Fatalf("success %+v", s)
				}
			}
		})
	}
	if r := f.call("GET", "/api/v1/tables/name/svc.db.sch.c", ""); r.status != 200 {
		t.Fatalf("c was not written: %d", r.status)
	}
	if r := f.call("GET", "/api/v1/tables/name/svc.db.sch.d", ""); r.status != 404 {
		t.Fatalf("the failed d was written: %d", r.status)
	}
}

func TestBulkRefusesBadBodies(t *testing.T) {
	f := newFixture(t)
	many := "[" + strings.Repeat(`{"name":"x"},`, store.MaxBulk) + `{"name":"x"}]`
	reader := f.userToken("reader", []string{meridian.RoleDataConsumer}, false)
	tests := []struct {
		name, body, token string
		status            int
		message           string
	}{
		{"not an array", `{"name":"x"}`, f.admin, 400, "a bulk body must be a JSON array"},
		{"not objects", `[1]`, f.admin, 400, "bulk element 0 is not a JSON object"},
		{"too many", many, f.admin, 400, fmt.Sprintf("at most %d entities", store.MaxBulk)},
		{"malformed", `[`, f.admin, 400, "Invalid request format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do("PUT", "/api/v1/tables/bulk", tc.token, strings.NewReader(tc.body))
			if r.status != tc.status || !strings.Contains(string(r.body), tc.message) {
				t.Fatalf("%d %s, want %d with %q", r.status, r.body, tc.status, tc.message)
			}
		})
	}
	// A caller who may not create gets each element refused, not the request.
	r := f.do("PUT", "/api/v1/glossaries/bulk", reader, strings.NewReader(`[{"name":"g","description":"d"}]`))
	var out bulkResult
	_ = json.Unmarshal(r.body, &out)
	if r.status != 200 || out.Status != "failure" || out.NumberOfRowsFailed != 1 {
		t.Fatalf("%d %s", r.status, r.body)
	}
}
