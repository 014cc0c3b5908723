package rest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
)

// FuzzQueryRunnerRunRequests sends arbitrary methods, paths, query strings and bodies
// to the /v1/platform/apps/queryRunner execution routes of a real catalog, as a
// DataConsumer: no request makes the server fail internally. The catalog has no Query
// Runner config, so no trigger reaches a database host the fuzzer made up.
func FuzzQueryRunnerRunRequests(f *testing.F) {
	ctx, stop := context.WithCancel(context.Background())
	cat, err := app.Open(ctx, app.Config{DataDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { cat.Run(ctx); close(stopped) }()
	f.Cleanup(func() { stop(); <-stopped; cat.Close() })
	h := New(Config{Entities: cat.Entities, Auth: cat.Auth, Jobs: cat.Jobs, QueryRunner: cat.QueryRunner,
		QueryRunnerRuns: cat.QueryRunnerRuns, Version: "test"})
	res, err := cat.Entities.Create(ctx, meridian.System, meridian.KindUser, meridian.Entity{"name": "alice", "email": "alice@example.com"})
	if err != nil {
		f.Fatal(err)
	}
	token, _, err := cat.Auth.Issue(ctx, auth.Subject{ID: res.Entity.ID(), Name: "alice", Roles: []string{meridian.RoleDataConsumer}},
		meridian.TokenTypePersonal, time.Hour, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := cat.Entities.Create(ctx, meridian.System, "databaseService", meridian.Entity{"name": "svc", "serviceType": "Postgres"}); err != nil {
		f.Fatal(err)
	}
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
		switch method {
		case "GET", "POST", "PUT", "DELETE":
		default:
			return
		}
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		req, err := http.NewRequest(method, "http://meridian"+qrRunPrefix+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
		}
	})
}
