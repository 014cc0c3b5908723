package rest

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestHrefsAreAbsoluteAndBelieveForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	f := newFixture(t)
	created := f.call(http.MethodPost, "/api/v1/services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`).json(t)
	id := created["id"].(string)
	if href := created["href"]; href != f.srv.URL+"/api/v1/services/databaseServices/"+id {
		t.Errorf("create answer href = %v, want the absolute URL", href)
	}
	forwarded := []string{"X-Forwarded-Host: catalog.example.com", "X-Forwarded-Proto: https"}
	get := "/api/v1/services/databaseServices/" + id

	if href := f.call(http.MethodGet, get, "", forwarded...).json(t)["href"]; !strings.HasPrefix(href.(string), f.srv.URL+"/") {
		t.Errorf("untrusted peer: href = %v, want the Host the client used (forwarded headers ignored)", href)
	}

	trusting := httptest.NewServer(New(Config{Entities: f.ents, Auth: f.auth,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}}))
	t.Cleanup(trusting.Close)
	f.srv, trusting = trusting, f.srv
	defer func() { f.srv = trusting }()
	want := "https://catalog.example.com" + get
	if href := f.call(http.MethodGet, get, "", forwarded...).json(t)["href"]; href != want {
		t.Errorf("trusted proxy: href = %v, want %s", href, want)
	}
	list := f.call(http.MethodGet, "/api/v1/services/databaseServices", "", forwarded...).json(t)
	if href := list["data"].([]any)[0].(map[string]any)["href"]; href != want {
		t.Errorf("trusted proxy, list: href = %v, want %s", href, want)
	}
}
