package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestsNeverFailInternally sends arbitrary methods, paths, query strings and
// bodies, with the admin token, to the whole REST handler over a real catalog. Bad
// input gets a 4xx; nothing answers 5xx and nothing panics.
func FuzzRequestsNeverFailInternally(f *testing.F) {
	fx := newFixture(f)
	h := fx.srv.Config.Handler
	seeds := []struct{ method, path, body string }{
		{"POST", "/api/v1/services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
		{"POST", "/api/v1/databases", `{"name":"db","service":"svc"}`},
		{"GET", "/api/v1/tables?limit=abc&fields=columns,nope&include=x", ""},
		{"PATCH", "/api/v1/databases/name/svc.db", `[{"op":"replace","path":"/description","value":"x"}]`},
		{"PUT", "/api/v1/tables/restore", `{"id":"not-a-uuid"}`},
		{"GET", "/api/v1/search/query?q=a&query_filter=%7B%22bool%22%3A%7B%7D%7D&size=-1", ""},
		{"PUT", "/api/v1/lineage", `{"edge":{"fromEntity":{"type":"table"},"toEntity":{}}}`},
		{"GET", "/api/v1/events?timestamp=x&limit=0", ""},
		{"DELETE", "/api/v1/databases/name/svc.db?hardDelete=true&recursive=maybe", ""},
		{"PUT", "/api/v1/dataQuality/testCases/a.b.c/testCaseResult", `{"timestamp":1,"testCaseStatus":"Nope"}`},
		{"GET", "/api/v1/tables/name/%22a.b%22.c", ""},
		{"GET", "/api/v1/rdf/sparql?query=SELECT+*+WHERE+%7B+%3Fs+%3Fp+%3Fo+%7D+LIMIT+3&format=tsv", ""},
		{"POST", "/api/v1/rdf/sparql?limit=0", "query=ASK+%7B+GRAPH+%3Fg+%7B%7D+%7D"},
		{"GET", "/api/v1/rdf/entity/table/00000000-0000-0000-0000-000000000000", ""},
		{"POST", "/api/v1/rdf/rebuild", ""},
		{"POST", "/api/v1/tasks", `{"type":"Suggestion","about":"<#E::table::svc.db.sch.t>","payload":{"fieldPath":"columns.\"a.b\".description","suggestionType":"SuggestDescription","suggestedValue":"x"}}`},
		{"GET", "/api/v1/tasks?startTs=1&endTs=2&about=%3C%23E%3A%3Atable%3A%3Ax%3E&assignee=a", ""},
		{"POST", "/api/v1/tasks/bulk", `{"operation":"Approve","about":"svc.db"}`},
		{"POST", "/api/v1/feed", `{"message":"m","about":"<#E::databaseService::svc>","type":"Task","taskDetails":{"type":"UpdateTag","assignees":["admin"],"suggestion":"[{}]"}}`},
		{"GET", "/api/v1/feed?type=Task&after=MXx4&limit=5", ""},
		{"PUT", "/api/v1/feed/tasks/1/resolve", `{"newValue":"x"}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
		default:
			return
		}
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		req, err := http.NewRequest(method, "http://meridian"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+fx.admin)
		ct := "application/json"
		if method == "PATCH" {
			ct = "application/json-patch+json"
		}
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q answered %d: %s", method, path, body, rec.Code, rec.Body.String())
		}
	})
}
