package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
)

// lockedBuffer is a goroutine-safe stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCommandLineMistakesExit2(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"token"},
		{"token", "list"},
		{"token", "create"},
		{"token", "create", "--user", "a", "--role", "Root"},
		{"token", "create", "--user", "a", "--expires", "soon"},
		{"serve", "--nope"},
		{"serve", "--log-level", "loud"},
		{"migrate", "extra"},
	} {
		if code, _, stderr := runCmd(args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a usage", args, code, stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	if code, out, _ := runCmd("version"); code != 0 || strings.TrimSpace(out) != version {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestTokenCreate(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCmd("token", "create", "--data-dir", dir, "--user", "etl", "--bot", "--expires", "never", "--role", "DataSteward")
	if code != 0 {
		t.Fatalf("token create: %d %s", code, stderr)
	}
	raw := strings.TrimSpace(out)
	cat, err := openCatalog(context.Background(), app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	p, err := cat.Auth.Verify(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "etl" || !p.IsBot || p.TokenType != meridian.TokenTypeBot || !p.HasRole(meridian.RoleDataSteward) {
		t.Fatalf("token principal = %+v", p)
	}
	// An existing non-bot user cannot get a bot token.
	if code, _, _ := runCmd("token", "create", "--data-dir", dir, "--user", "alice"); code != 0 {
		t.Fatal("token for a new user failed")
	}
	if code, _, _ := runCmd("token", "create", "--data-dir", dir, "--user", "alice", "--bot"); code != 1 {
		t.Fatalf("bot token for a non-bot user: exit %d, want 1", code)
	}
}

func TestServeBootstrapsAdminAndShutsDown(t *testing.T) {
	dir := t.TempDir()
	serve := func() (string, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		var stderr lockedBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, os.Stdout, &stderr)
		}()
		re := regexp.MustCompile(`listening on (\S+)`)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				return "http://" + m[1], func() {
					cancel()
					if code := <-done; code != 0 {
						t.Errorf("serve exit %d: %s", code, stderr.String())
					}
				}
			}
			select {
			case code := <-done:
				t.Fatalf("serve exited %d: %s", code, stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve did not start: %s", stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	base, stop := serve()
	tokenPath := filepath.Join(dir, adminTokenFile)
	st, err := os.Stat(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("admin.token mode = %v, want 0600", st.Mode().Perm())
	}
	token, _ := os.ReadFile(tokenPath)
	req, _ := http.NewRequest("GET", base+"/api/v1/users/me", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var me map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if resp.StatusCode != 200 || me["name"] != "admin" || me["isAdmin"] != true {
		t.Fatalf("users/me with the admin token: %d %v", resp.StatusCode, me)
	}
	stop()

	// A second start keeps a token that still verifies.
	_, stop = serve()
	again, _ := os.ReadFile(tokenPath)
	stop()
	if !bytes.Equal(token, again) {
		t.Error("a valid admin token was rewritten on restart")
	}
}
