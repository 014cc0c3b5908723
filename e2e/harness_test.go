// Package e2e holds Meridian's black-box tests. TestMain builds the binary once; each
// test starts `meridian serve` on a free port with its own data directory, reads the
// admin token the server writes, and drives the REST API over real HTTP.
//
// Set MERIDIAN_E2E_DRIVER=postgres to run the same tests on PostgreSQL: each server gets
// a throwaway database (store/postgres/pgtest) passed as --database-url to serve and to
// every CLI call; without it the embedded SQLite store is used. Set
// MERIDIAN_E2E_BINARY to test a prebuilt binary instead of building ./cmd/meridian.
// TestExpiredTokenIs401 waits a minute and runs only when MERIDIAN_E2E_SLOW is set.
//
// Every other test calls t.Parallel() but those that assert a timing a loaded machine would
// break (slow bodies, connection floods, hang-ups, cross-server freshness): those run
// first, alone.
package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"time"
)

// binPath is the meridian binary built by TestMain.
var binPath string

// moduleRoot is the directory holding go.mod, found from this file's location.
func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate harness_test.go")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("no go.mod in %s: %w", root, err)
	}
	return root, nil
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if prebuilt := os.Getenv("MERIDIAN_E2E_BINARY"); prebuilt != "" {
		binPath = prebuilt
		return m.Run()
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "meridian-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "meridian")
	build := exec.Command("go", "build", "-o", binPath, "./cmd/meridian")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/meridian failed: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test's reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is one running `meridian serve`.
type server struct {
	base       string // http://127.0.0.1:<port>
	dataDir    string
	dbArgs     []string // --database-url <url> on PostgreSQL, none on SQLite
	serveArgs  []string // extra flags of serve (startServerWith)
	crash      func()   // kill -9 the process and wait for it
	stop       func()   // SIGTERM (a graceful shutdown) and wait for it
	adminToken string
	admin      *client
	stderr     *syncBuffer
}

// listeningOn matches the line serve prints once it listens, with the address it got.
var listeningOn = regexp.MustCompile(`listening on (\S+)`)

// boundAddr waits until output holds serve's "listening on" line and returns that
// address. The server is started on port 0, so the kernel picks a free port at bind time
// and no other process can take it between a probe and the bind. exited reports the
// process's end (the error is put back for later readers).
func boundAddr(output *syncBuffer, exited chan error, deadline time.Time) (string, error) {
	for {
		if m := listeningOn.FindStringSubmatch(output.String()); m != nil {
			return m[1], nil
		}
		select {
		case err := <-exited:
			exited <- err
			return "", fmt.Errorf("meridian serve exited early (%v):\n%s", err, output.String())
		default:
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("meridian serve did not listen by the deadline:\n%s", output.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startServer starts `meridian serve` with a fresh data directory, waits for /healthz,
// reads admin.token (which must have mode 0600) and stops the server when the test ends.
// The server's stderr is printed when the test fails.
func startServer(t *testing.T) *server {
	t.Helper()
	return startServerWith(t)
}

// startServerWith is startServer with extra flags for serve.
func startServerWith(t *testing.T, serveArgs ...string) *server {
	t.Helper()
	dataDir := t.TempDir()
	var dbArgs []string
	if os.Getenv("MERIDIAN_E2E_DRIVER") == "postgres" {
		dbArgs = []string{"--database-url", pgtest.NewDatabase(t)}
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := tryStart(t, dataDir, dbArgs, serveArgs)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("start meridian serve: %v", lastErr)
	return nil
}

func tryStart(t *testing.T, dataDir string, dbArgs, serveArgs []string) (*server, error) {
	t.Helper()
	args := append(append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir}, dbArgs...), serveArgs...)
	stderr := &syncBuffer{}
	cmd := exec.Command(binPath, args...)
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	cmd.Env = serverEnv()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	deadline := time.Now().Add(20 * time.Second)
	addr, err := boundAddr(stderr, exited, deadline)
	if err != nil {
		stop()
		return nil, err
	}
	s := &server{base: "http://" + addr, dataDir: dataDir, dbArgs: dbArgs, serveArgs: serveArgs, stderr: stderr}
	s.stop = func() {
		stop()
		exited <- nil // stop, at cleanup, finds the process gone
	}
	s.crash = func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := <-exited
		exited <- err // stop, at cleanup, finds the process gone
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case err := <-exited:
			exited <- err
			return nil, fmt.Errorf("meridian serve exited early (%v):\n%s", err, stderr.String())
		default:
		}
		resp, err := hc.Get(s.base + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("/healthz did not answer 200 within 20s:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("meridian serve stderr:\n%s", stderr.String())
		}
	})

	tokenPath := filepath.Join(dataDir, "admin.token")
	fi, err := os.Stat(tokenPath)
	if err != nil {
		t.Fatalf("admin.token: %v", err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("admin.token mode = %o, want 600", mode)
	}
	b, err := os.ReadFile(tokenPath)
	if err != nil {
		t.Fatalf("read admin.token: %v", err)
	}
	s.adminToken = strings.TrimSpace(string(b))
	if s.adminToken == "" {
		t.Fatalf("admin.token is empty")
	}
	s.admin = s.client(t, s.adminToken)
	return s, nil
}

// requireNodeTool finds node and an npm tool installed under e2e/<folder> by
// scripts/install-node-tools.sh, checking that files (relative to the folder) exist. A
// missing piece fails the test under CI=true and skips it elsewhere, saying what is
// missing. It returns the node executable and the folder's absolute path.
func requireNodeTool(t *testing.T, what, folder string, files ...string) (node, dir string) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		msg := what + " not installed: run scripts/install-node-tools.sh (needs node and npm): " + why
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "e2e", folder)
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing(filepath.Join("e2e", folder, f) + " is missing")
		}
	}
	return node, dir
}

// restart starts a new server process on the same data directory and database.
func (s *server) restart(t *testing.T) *server {
	t.Helper()
	n, err := tryStart(t, s.dataDir, s.dbArgs, s.serveArgs)
	if err != nil {
		t.Fatalf("restart meridian serve: %v", err)
	}
	return n
}

// serverEnv is the environment for child processes: the test's own, without MERIDIAN_*
// variables that would change the server's flags behind the test's back.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MERIDIAN_") && !strings.HasPrefix(kv, "MERIDIAN_E2E_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// client is an HTTP client for one bearer token ("" sends no Authorization header).
type client struct {
	t     *testing.T
	base  string
	token string
	hc    *http.Client
}

func (s *server) client(t *testing.T, token string) *client {
	return &client{t: t, base: s.base, token: token, hc: &http.Client{Timeout: 30 * time.Second}}
}

// response is one HTTP answer.
type response struct {
	method, path string
	status       int
	header       http.Header
	raw          []byte
	body         any // decoded JSON, nil when the body is empty or not JSON
}

// obj returns the body as a JSON object, failing the test when it is not one.
func (r *response) obj(t *testing.T) map[string]any {
	t.Helper()
	m, ok := r.body.(map[string]any)
	if !ok {
		t.Fatalf("%s %s: body is not a JSON object: %s", r.method, r.path, r.raw)
	}
	return m
}

func (r *response) String() string {
	body := string(bytes.TrimSpace(r.raw))
	if len(body) > 600 {
		body = body[:600] + "…"
	}
	return fmt.Sprintf("%s %s -> %d %s", r.method, r.path, r.status, body)
}

// do sends a request. body is nil (no body), []byte or string (sent as is) or any
// other value (sent as JSON). A PATCH defaults to application/json-patch+json; other
// bodies to application/json. headers override the defaults; an empty value removes one.
func (c *client) do(method, path string, body any, headers map[string]string) *response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatalf("marshal body: %v", err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatalf("new request %s %s: %v", method, path, err)
	}
	if body != nil {
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/json-patch+json")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := &response{method: method, path: path, status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		var v any
		if err := json.Unmarshal(raw, &v); err == nil {
			r.body = v
		}
	}
	return r
}

// must sends a request and fails the test unless the status is want. It returns the
// JSON object body (nil when the body is empty).
func (c *client) must(want int, method, path string, body any) map[string]any {
	c.t.Helper()
	r := c.do(method, path, body, nil)
	if r.status != want {
		c.t.Fatalf("%s: want status %d", r, want)
	}
	if len(bytes.TrimSpace(r.raw)) == 0 {
		return nil
	}
	return r.obj(c.t)
}

// expectError checks an error answer: the status, a body that is exactly
// {code, message} with code equal to the status, a JSON content type, and a message
// containing msg (when msg is not empty).
func expectError(t *testing.T, r *response, status int, msg string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: want status %d", r, status)
		return
	}
	checkErrorShape(t, r)
	if msg != "" {
		m, _ := r.body.(map[string]any)
		if got, _ := m["message"].(string); !strings.Contains(got, msg) {
			t.Errorf("%s: message %q does not contain %q", r, got, msg)
		}
	}
}

// checkErrorShape checks that an error body is exactly {code, message} with code equal
// to the HTTP status and a non-empty message.
func checkErrorShape(t *testing.T, r *response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want application/json", r, ct)
	}
	m, ok := r.body.(map[string]any)
	if !ok {
		t.Errorf("%s: error body is not a JSON object", r)
		return
	}
	if len(m) != 2 {
		t.Errorf("%s: error body has keys %v, want exactly code and message", r, keys(m))
	}
	if code, ok := m["code"].(float64); !ok || int(code) != r.status {
		t.Errorf("%s: code %v, want %d", r, m["code"], r.status)
	}
	if msg, ok := m["message"].(string); !ok || msg == "" {
		t.Errorf("%s: message %v, want a non-empty string", r, m["message"])
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// runCLI runs the binary with args and returns stdout; it fails the test on a non-zero
// exit.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = serverEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("meridian %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// cliToken issues a token with `meridian token create` against the server's data
// directory, creating the user with the role when it is missing.
func (s *server) cliToken(t *testing.T, user, role, expires string) string {
	t.Helper()
	args := append([]string{"token", "create", "--data-dir", s.dataDir, "--user", user}, s.dbArgs...)
	if role != "" {
		args = append(args, "--role", role)
	}
	if expires != "" {
		args = append(args, "--expires", expires)
	}
	tok := strings.TrimSpace(runCLI(t, args...))
	if strings.Count(tok, ".") != 2 {
		t.Fatalf("meridian token create printed %q, want a JWT", tok)
	}
	return tok
}

// principal is a user with a token and a client.
type principal struct {
	name, id, token string
	c               *client
}

// user creates (through the CLI) a user with a role and returns its client and id.
func (s *server) user(t *testing.T, name, role string) *principal {
	t.Helper()
	tok := s.cliToken(t, name, role, "1d")
	c := s.client(t, tok)
	me := c.must(http.StatusOK, "GET", "/api/v1/users/me", nil)
	id, _ := me["id"].(string)
	if id == "" {
		t.Fatalf("/users/me of %s has no id: %v", name, me)
	}
	return &principal{name: name, id: id, token: tok, c: c}
}

// jwtPayload decodes the claims of a JWT without verifying it.
func jwtPayload(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts, want 3", tok, len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		t.Fatalf("decode JWT payload: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("JWT payload is not JSON: %v", err)
	}
	return m
}

// Fixtures.

// hierarchy creates databaseService svc → database db → databaseSchema sch and returns
// the schema FQN and id.
func hierarchy(t *testing.T, c *client, svc, db, sch string) (string, string) {
	t.Helper()
	s := c.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices",
		map[string]any{"name": svc, "serviceType": "Mysql"})
	d := c.must(http.StatusCreated, "POST", "/api/v1/databases",
		map[string]any{"name": db, "service": s["fullyQualifiedName"]})
	sc := c.must(http.StatusCreated, "POST", "/api/v1/databaseSchemas",
		map[string]any{"name": sch, "database": d["fullyQualifiedName"]})
	return str(sc["fullyQualifiedName"]), str(sc["id"])
}

// twoColumns is a column list with id BIGINT and note VARCHAR(200).
func twoColumns() []any {
	return []any{
		map[string]any{"name": "id", "dataType": "BIGINT"},
		map[string]any{"name": "note", "dataType": "VARCHAR", "dataLength": 200},
	}
}

// table creates a table in a schema and returns it.
func table(t *testing.T, c *client, schemaFQN, name string, extra map[string]any) map[string]any {
	t.Helper()
	body := map[string]any{"name": name, "databaseSchema": schemaFQN, "columns": twoColumns()}
	for k, v := range extra {
		body[k] = v
	}
	return c.must(http.StatusCreated, "POST", "/api/v1/tables", body)
}

// patchOp is one JSON Patch operation.
func patchOp(op, path string, value any) map[string]any {
	m := map[string]any{"op": op, "path": path}
	if op != "remove" {
		m["value"] = value
	}
	return m
}

func ops(o ...map[string]any) []any {
	out := make([]any, len(o))
	for i, v := range o {
		out[i] = v
	}
	return out
}

// str returns v as a string ("" when it is not one).
func str(v any) string { s, _ := v.(string); return s }

// num returns v as a float64 (-1 when it is not a number).
func num(v any) float64 {
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return f
}

// list returns v as a JSON array (nil when it is not one).
func list(v any) []any { l, _ := v.([]any); return l }

// object returns v as a JSON object (nil when it is not one).
func object(v any) map[string]any { m, _ := v.(map[string]any); return m }

// esc escapes an FQN for a path segment.
func esc(fqn string) string { return url.PathEscape(fqn) }

// wantVersion checks an entity's version.
func wantVersion(t *testing.T, e map[string]any, want float64) {
	t.Helper()
	if got := num(e["version"]); fmt.Sprintf("%.1f", got) != fmt.Sprintf("%.1f", want) {
		t.Errorf("%s version = %v, want %.1f", str(e["fullyQualifiedName"]), e["version"], want)
	}
}

// fieldChange finds the change of a field in a changeDescription list
// (fieldsAdded, fieldsUpdated or fieldsDeleted).
func fieldChange(e map[string]any, listName, field string) map[string]any {
	cd := object(e["changeDescription"])
	for _, fc := range list(cd[listName]) {
		if m := object(fc); str(m["name"]) == field {
			return m
		}
	}
	return nil
}

// eventually polls fn until it returns true or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
