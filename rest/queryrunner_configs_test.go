package rest

import (
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// FuzzQueryRunnerConfigRequests sends arbitrary methods, paths, query strings and
// bodies to the /v1/queryRunner config and saved-query routes of a real catalog, as an
// admin: no request makes the server fail internally. The routes that reach a
// database or a token endpoint (test-connection, accessible-*, refresh-token) are left
// out, so the fuzzer opens no connection to a host it made up.
func FuzzQueryRunnerConfigRequests(f *testing.F) {
	h, token := qrFuzzServer(f, meridian.Entity{"name": "admin", "email": "admin@example.com",
		"roles": []any{meridian.RoleAdmin}}, meridian.RoleAdmin, false)
	for _, s := range []struct{ method, path, body string }{
		{"POST", "/configs", `{"serviceName":"svc","serviceType":"Postgres","enabled":true,"authConfig":{"username":"u","password":"p"},"userConfigurableFields":["database"]}`},
		{"PUT", "/configs?service=svc", `{"querySettings":{"maxResultSize":"x"},"authConfig":{"authType":"OAuth","clientId":"c","tokenUrl":"http://x"}}`},
		{"GET", "/configs?service=svc&limit=-1&after=zz", ""},
		{"POST", "/user-configs", `{"serviceName":"svc","userAuthConfig":{"username":"u","password":"*********","database":"d"}}`},
		{"GET", "/user-configs?userConfigId=00000000-0000-0000-0000-000000000000", ""},
		{"POST", "/team-configs", `{"serviceName":"svc","teamId":"nope","userAuthConfig":{}}`},
		{"GET", "/team-configs?team=x&service=svc", ""},
		{"POST", "/user-configs/update-connection-status?service=svc", `{"workflowId":"../../x"}`},
		{"POST", "/savedQueries", `{"serviceName":"svc","name":"q","queryText":"SELECT 1"}`},
		{"GET", "/savedQueries?limit=0&after=%00", ""},
		{"POST", "/savedQueries/00000000-0000-0000-0000-000000000000/execute", ""},
		{"DELETE", "/configs?service=svc", ""},
	} {
		f.Add(s.method, s.path, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !qrFuzzable(method, path) || strings.Contains(path, "test-connection") || strings.Contains(path, "accessible-") ||
			strings.Contains(path, "refresh-token") {
			return
		}
		fuzzJSONRequest(t, h, token, method, "http://meridian"+qrPrefix+path, body)
	})
}
