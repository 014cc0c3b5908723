package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzBillingRequests sends arbitrary billing paths, query strings and bodies (budgets,
// credit alerts) with the admin token to the REST handler with the billing service.
// Bad input gets a 4xx; nothing answers 5xx and nothing panics.
func FuzzBillingRequests(f *testing.F) {
	fx := newBillingFixture(f)
	h := fx.srv.Config.Handler
	seeds := []struct{ method, path, body string }{
		{"PUT", "/api/v1/billing/budgets", `{"budgets":[{"window":"HOURLY","credits":3,"scope":"user"}]}`},
		{"PUT", "/api/v1/billing/budgets", `{"budgets":[{"window":"GLOBAL","credits":1e308}]}`},
		{"PUT", "/api/v1/billing/creditAlert", `{"rules":[{"type":"dailySpike","multiplier":3,"minAbsolute":10,"thresholds":[1,2]}],"destinations":[{"type":"Email","config":{"receivers":["a@b"]}}]}`},
		{"GET", "/api/v1/billing/adoption/users?page=99999999&pageSize=100&sort=credits&direction=desc&search=%FF", ""},
		{"GET", "/api/v1/billing/credits/apps/history?startTs=9223372036854775807", ""},
		{"GET", "/api/v1/billing/mcp/usage/history?startTs=1&endTs=9223372036854775807", ""},
		{"GET", "/api/v1/billing/credits/breakdown/users/%00/agents?app=MCP", ""},
		{"GET", "/api/v1/billing/adoption?weeks=104&days=366", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		switch method {
		case "GET", "PUT", "POST", "DELETE":
		default:
			return
		}
		if !strings.HasPrefix(path, "/api/v1/billing") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		req, err := http.NewRequest(method, "http://meridian"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+fx.admin)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q answered %d: %s", method, path, body, rec.Code, rec.Body.String())
		}
	})
}
