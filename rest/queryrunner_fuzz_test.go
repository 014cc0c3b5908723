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

// qrFuzzServer opens a real catalog in a temporary directory with a Postgres database
// service named svc and the user user (given role), and returns the REST handler with
// the Query Runner service (and its execution service when runs is set) and a token of
// that user.
func qrFuzzServer(f *testing.F, user meridian.Entity, role string, runs bool) (http.Handler, string) {
	ctx, stop := context.WithCancel(context.Background())
	cat, err := app.Open(ctx, app.Config{DataDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { cat.Run(ctx); close(stopped) }()
	f.Cleanup(func() { stop(); <-stopped; cat.Close() })
	c := Config{Entities: cat.Entities, Auth: cat.Auth, Jobs: cat.Jobs, QueryRunner: cat.QueryRunner, Version: "test"}
	if runs {
		c.QueryRunnerRuns = cat.QueryRunnerRuns
	}
	h := New(c)
	res, err := cat.Entities.Create(ctx, meridian.System, meridian.KindUser, user)
	if err != nil {
		f.Fatal(err)
	}
	token, _, err := cat.Auth.Issue(ctx, auth.Subject{ID: res.Entity.ID(), Name: res.Entity.Name(), Roles: []string{role}},
		meridian.TokenTypePersonal, time.Hour, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := cat.Entities.Create(ctx, meridian.System, "databaseService", meridian.Entity{"name": "svc", "serviceType": "Postgres"}); err != nil {
		f.Fatal(err)
	}
	return h, token
}

// qrFuzzable reports whether a fuzzed method and path make a request worth sending:
// a method the routes know and a path without spaces, controls or a fragment.
func qrFuzzable(method, path string) bool {
	switch method {
	case "GET", "POST", "PUT", "DELETE":
	default:
		return false
	}
	return strings.HasPrefix(path, "/") && !strings.ContainsAny(path, " \r\n\t#")
}

// qrFuzzRequest sends a fuzzed JSON request to url with token and fails t when the
// server answers 5xx. A request Go cannot build is not sent.
func qrFuzzRequest(t *testing.T, h http.Handler, token, method, url, body string) {
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
