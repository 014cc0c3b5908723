package rest

import (
	"testing"

	"github.com/meridian-catalog/meridian"
)

// FuzzQueryRunnerRunRequests sends arbitrary methods, paths, query strings and bodies
// to the /v1/platform/apps/queryRunner execution routes of a real catalog, as a
// DataConsumer: no request makes the server fail internally. The catalog has no Query
// Runner config, so no trigger reaches a database host the fuzzer made up.
func FuzzQueryRunnerRunRequests(f *testing.F) {
	h, token := qrFuzzServer(f, meridian.Entity{"name": "alice", "email": "alice@example.com"}, meridian.RoleDataConsumer, true)
	for _, s := range []struct{ method, path, body string }{
		{"POST", "/trigger", `{"query":"SELECT 1","serviceName":"svc","workflowName":"w"}`},
		{"POST", "/trigger?teamId=00000000-0000-4000-8000-000000000001&preferTeam=true", `{"query":"SELECT 1","serviceName":"svc","transpile":{"from":"x"}}`},
		{"POST", "/trigger", `{"query":["x"],"serviceName":{}}`},
		{"PUT", "/stop", `{"workflowName":"w"}`},
		{"GET", "/results/00000000-0000-4000-8000-000000000001?page=9223372036854775807&size=10000", ""},
		{"GET", "/results/x?page=-1", ""},
		{"POST", "/results/00000000-0000-4000-8000-000000000001", `{}`},
		{"GET", "/health/storage", ""},
	} {
		f.Add(s.method, s.path, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !qrFuzzable(method, path) {
			return
		}
		fuzzJSONRequest(t, h, token, method, "http://meridian"+qrRunPrefix+path, body)
	})
}
