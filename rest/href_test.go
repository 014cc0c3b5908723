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

func TestRebasePutsTheBaseBeforeEveryPathHref(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no href", `{"name":"a"}`, `{"name":"a"}`},
		{"one", `{"href":"/api/v1/tables/1"}`, `{"href":"http://h:1/api/v1/tables/1"}`},
		{"at the end and nested", `{"a":{"href":"/api/x"},"href":"/api/`, `{"a":{"href":"http://h:1/api/x"},"href":"http://h:1/api/`},
		{"adjacent", `"href":"/api/"href":"/api/`, `"href":"http://h:1/api/"href":"http://h:1/api/`},
		{"an absolute href is left alone", `{"href":"https://x/api/y"}`, `{"href":"https://x/api/y"}`},
		{"a value that only looks like one", `{"d":"\"href\":\"/api/"}`, `{"d":"\"href\":\"/api/"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(rebase([]byte(tc.in), "http://h:1")); got != tc.want {
				t.Errorf("rebase(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func BenchmarkRebaseATableAnswer(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"id":"x","name":"t","href":"/api/v1/tables/x","service":{"id":"s","type":"databaseService","href":"/api/v1/services/databaseServices/s"},"columns":[`)
	for i := 0; i < 20; i++ {
		sb.WriteString(`{"name":"customer_email","dataType":"VARCHAR","dataLength":255,"description":"The customer email.","fullyQualifiedName":"svc.db.sch.t.customer_email","tags":[]},`)
	}
	sb.WriteString(`{}]}`)
	doc := []byte(sb.String())
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		_ = rebase(doc, "http://127.0.0.1:8585")
	}
}
