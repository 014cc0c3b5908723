package rest

import (
	"context"
	"net/http"
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
