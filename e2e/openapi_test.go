package e2e

// The OpenAPI document, checked by a real linter: a server is started, its public
// /api/v1/openapi.json is fetched without a token and linted by Redocly CLI
// (@redocly/cli, the `recommended` ruleset of e2e/openapi/redocly.yaml), which must find
// no error and no warning. The linter is installed at an exact version by
// scripts/install-node-tools.sh (make deps). Without node or the installed linter the
// test skips with a message saying what is missing, except under CI=true, where it
// fails.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// requireRedocly returns node and the Redocly CLI entry script, or skips (fails under
// CI) with what is missing.
func requireRedocly(t *testing.T) (node, redocly, dir string) {
	t.Helper()
	node, dir = requireNodeTool(t, "OpenAPI linter", "openapi",
		"node_modules/@redocly/cli/package.json", "node_modules/.bin/redocly")
	return node, filepath.Join(dir, "node_modules", ".bin", "redocly"), dir
}

// lintProblem matches a problem line of Redocly's stylish format:
// "  12:5  error  rule-id  message".
var lintProblem = regexp.MustCompile(`(?m)^\s*\d+:\d+\s+(error|warning)\s+\S+`)

func TestOpenAPILintsClean(t *testing.T) {
	t.Parallel()
	node, redocly, dir := requireRedocly(t)
	s := startServer(t)

	// Public: no token.
	anon := s.client(t, "")
	r := anon.do(http.MethodGet, "/api/v1/openapi.json", nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("%s: want 200 without a token", r)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	doc := r.obj(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	if info, _ := doc["info"].(map[string]any); info["title"] != "Meridian" || info["version"] == "" {
		t.Errorf("info = %v", info)
	}
	// The rest of /api still needs a token.
	if r := anon.do(http.MethodGet, "/api/v1/tables", nil, nil); r.status != http.StatusUnauthorized {
		t.Errorf("%s: want 401", r)
	}

	file := filepath.Join(t.TempDir(), "openapi.json")
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, r.raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, redocly, "lint", file, "--format=stylish",
		"--config", filepath.Join(dir, "redocly.yaml"), "--max-problems", "1000")
	cmd.Dir = dir
	// No telemetry, no update check, no colours.
	cmd.Env = append(serverEnv(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1", "FORCE_COLOR=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("redocly lint timed out:\n%s", out.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		t.Fatalf("redocly lint exited %d:\n%s", exit.ExitCode(), out.String())
	default:
		t.Fatalf("redocly lint: %v\n%s", err, out.String())
	}
	if problems := lintProblem.FindAllString(out.String(), -1); len(problems) > 0 {
		t.Fatalf("redocly lint reported %d problems:\n%s", len(problems), out.String())
	}
	if !strings.Contains(out.String(), "Your API description is valid") {
		t.Fatalf("redocly lint did not report a valid description:\n%s", out.String())
	}
	t.Logf("redocly lint: %d bytes, %d paths: valid, no warnings", len(r.raw), len(doc["paths"].(map[string]any)))
}
