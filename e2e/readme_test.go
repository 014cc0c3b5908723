package e2e

// The README is part of the product: every shell block of it runs as pasted, and
// `make run` behaves as it says.

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeSkip marks a shell block of README.md that the test does not run; the reason
// follows it in parentheses.
const readmeSkip = "<!-- readme-test: skip ("

// readmeBlocks returns the ```sh blocks of README.md, in order, without the ones marked
// with readmeSkip on the line before.
func readmeBlocks(t *testing.T) (run []string, skipped int) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		block      []string
		in, skip   bool
		prev, line string
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		prev, line = line, sc.Text()
		switch {
		case !in && line == "```sh":
			in, skip, block = true, strings.HasPrefix(prev, readmeSkip), nil
		case in && line == "```":
			in = false
			if skip {
				skipped++
			} else {
				run = append(run, strings.Join(block, "\n"))
			}
		case in:
			block = append(block, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return run, skipped
}

// TestREADMERunsAsPasted runs every sh block of README.md, in order, in one bash, in a
// directory whose meridian-data is a fresh server's data directory, with `meridian` on
// the PATH (as `make install` leaves it). localhost:8585 becomes the server's address.
// Every curl fails on an answer that is not 2xx (--fail-with-body), and any failing
// command fails the test.
func TestREADMERunsAsPasted(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	blocks, skipped := readmeBlocks(t)
	if len(blocks) < 2 || skipped > 3 {
		t.Fatalf("README.md: %d sh blocks to run and %d skipped; the walk-through is missing or skipped", len(blocks), skipped)
	}
	s := startServer(t)
	work := t.TempDir()
	if err := os.Symlink(s.dataDir, filepath.Join(work, "meridian-data")); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(binPath, filepath.Join(bin, "meridian")); err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail\n" +
		"curl() { command curl --fail-with-body --show-error \"$@\"; }\n" +
		strings.ReplaceAll(strings.Join(blocks, "\n"), "localhost:8585", strings.TrimPrefix(s.base, "http://"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = work
	cmd.Env = append(serverEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if len(s.dbArgs) == 2 { // the CLI commands find the PostgreSQL catalog through the flag's twin
		cmd.Env = append(cmd.Env, "MERIDIAN_DATABASE_URL="+s.dbArgs[1])
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's commands failed (%v); output:\n%s", err, out)
	}
	for _, want := range []string{
		"the table's id is ",                    // the id was extracted
		"204\n",                                 // the table's hard delete
		`"isBot":true,"name":"ingest-bot"`,      // the bot's own token works
		"meridian-data/admin.token\n",           // meridian admin-token ran
		`"fullyQualifiedName":"warehouse.sales`, // answers were printed
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "the table's id is \n") {
		t.Errorf("the walk-through extracted an empty table id:\n%s", out)
	}
}

// TestMakeRunStopsWithMake: `make run` execs the server, so stopping make by its PID
// stops the server too.
func TestMakeRunStopsWithMake(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not on PATH; make run needs it"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "run")
	cmd.Dir = root
	cmd.Env = append(serverEnv(), "MERIDIAN_ADDR=127.0.0.1:0", "MERIDIAN_DATA_DIR="+t.TempDir())
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, to clean up after a failure
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever make left running
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("make run output:\n%s", out.String())
		}
	})
	addr, err := boundAddr(out, exited, time.Now().Add(2*time.Minute)) // make run builds first
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	up := func() bool {
		resp, err := hc.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	eventually(t, 2*time.Minute, "make run serves /healthz", up)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("make did not exit 20s after SIGTERM")
	}
	eventually(t, 20*time.Second, "the server stops with make", func() bool { return !up() })
}
