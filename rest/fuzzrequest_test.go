package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzJSONRequest sends a fuzzed JSON request to url with the bearer token and fails t when the
// server answers 5xx. A request Go cannot build is not sent.
func fuzzJSONRequest(t *testing.T, h http.Handler, token, method, url, body string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s %q: %d %s", method, url, body, rec.Code, rec.Body)
	}
}
