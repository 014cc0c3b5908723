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

// FuzzQueryRunnerConfigRequests sends arbitrary methods, paths, query strings and
// bodies to the /v1/queryRunner config and saved-query routes of a real catalog, as an
// admin: no request makes the server fail internally. The routes that reach a
// database or a token endpoint (test-connection, accessible-*, refresh-token) are left
// out, so the fuzzer opens no connection to a host it made up.
func FuzzQueryRunnerConfigRequests(f *testing.F) {
	ctx, stop := context.WithCancel(context.Background())
	cat, err := app.Open(ctx, app.Config{DataDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { cat.Run(ctx); close(stopped) }()
	f.Cleanup(func() { stop(); <-stopped; cat.Close() })
	h := New(Config{Entities: cat.Entities, Auth: cat.Auth, Jobs: cat.Jobs, QueryRunner: cat.QueryRunner, Version: "test"})
	res, err := cat.Entities.Create(ctx, meridian.System, meridian.KindUser, meridian.Entity{"name": "admin", "email": "admin@example.com",
		"roles": []any{meridian.RoleAdmin}})
	if err != nil {
		f.Fatal(err)
	}
	token, _, err := cat.Auth.Issue(ctx, auth.Subject{ID: res.Entity.ID(), Name: "admin", Roles: []string{meridian.RoleAdmin}},
		meridian.TokenTypePersonal, time.Hour, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := cat.Entities.Create(ctx, meridian.System, "databaseService", meridian.Entity{"name": "svc", "serviceType": "Postgres"}); err != nil {
		f.Fatal(err)
	}
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
		switch method {
		case "GET", "POST", "PUT", "DELETE":
		default:
			return
		}
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") ||
			strings.Contains(path, "test-connection") || strings.Contains(path, "accessible-") || strings.Contains(path, "refresh-token") {
			return
		}
		req, err := http.NewRequest(method, "http://meridian"+qrPrefix+path, strings.NewReader(body))
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
