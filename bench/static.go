package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The report rows of the static-HTTP floors.
const (
	staticFloorName    = "floor: static HTTP server, same bytes, own process (GET table by name)"
	inProcessFloorName = "floor: static HTTP server, same bytes, in the bench process"
)

// staticServerEnv names the file of pages a re-executed bench serves: when it is set
// the bench is the static server of the floor (serveStatic), not the harness.
const staticServerEnv = "MERIDIAN_BENCH_STATIC_PAGES"

// staticFloors are the HTTP floors of "GET table by name": plain net/http servers that
// answer each sampled path with the bytes Meridian answered for it, read once
// beforehand. One runs in a process of its own (this binary, re-executed), as
// Meridian does, so a request crosses from the client's process to the server's and
// back; the ratio target is against it. The other runs in this process, beside the
// client, where a request never leaves the Go scheduler of one process: it shows the
// cost of that crossing and is no target. Both are timed as the REST rows are, one
// request at a time on one keep-alive connection, so GET p50 against their p50 is what
// Meridian adds to serving those bytes over HTTP on this machine. stop shuts both down.
func staticFloors(ctx context.Context, c *client, token string, getFQNs []string) (ops []operation, stop func(), err error) {
	pages := map[string]string{}
	for _, fqn := range getFQNs {
		p := getByNamePath(fqn)
		if _, ok := pages[p]; ok {
			continue
		}
		b, err := c.do(ctx, http.MethodGet, p, "", nil)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", p, err)
		}
		pages[p] = string(b)
	}

	own, stopOwn, err := startStaticProcess(ctx, pages)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stopOwn()
		return nil, nil, err
	}
	srv := &http.Server{Handler: staticHandler(pages)}
	go func() { _ = srv.Serve(ln) }()

	clients := []*client{newClient(own, token, 1), newClient("http://"+ln.Addr().String(), token, 1)}
	for i, name := range []string{staticFloorName, inProcessFloorName} {
		sc := clients[i]
		ops = append(ops, operation{
			name: name,
			run: func(ctx context.Context, i int) (time.Duration, error) {
				start := time.Now()
				_, err := sc.do(ctx, http.MethodGet, getByNamePath(getFQNs[i%len(getFQNs)]), "", nil)
				return time.Since(start), err
			},
		})
	}
	return ops, func() {
		for _, sc := range clients {
			sc.close()
		}
		_ = srv.Close()
		stopOwn()
	}, nil
}

// staticHandler answers each path of pages with its bytes as JSON, and 404 otherwise.
func staticHandler(pages map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := pages[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, b)
	})
}

// startStaticProcess runs this binary again as a static server of pages and returns
// its base URL. stop ends it.
func startStaticProcess(ctx context.Context, pages map[string]string) (base string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("static server: %w", err)
	}
	dir, err := os.MkdirTemp("", "meridian-bench-static-")
	if err != nil {
		return "", nil, err
	}
	file := filepath.Join(dir, "pages.json")
	b, err := json.Marshal(pages)
	if err == nil {
		err = os.WriteFile(file, b, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("static server pages: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), staticServerEnv+"="+file)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("static server: %w", err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("static server did not start: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// serveStatic is the bench re-executed as the static server: it serves the pages of
// the file named by staticServerEnv on a free loopback port, prints its base URL on
// stdout, and serves until it is killed.
func serveStatic(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var pages map[string]string
	if err := json.Unmarshal(b, &pages); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	err = (&http.Server{Handler: staticHandler(pages)}).Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// getByNamePath is the path of the timed REST GET by name.
func getByNamePath(fqn string) string {
	return "/api/v1/tables/name/" + url.PathEscape(fqn) + "?fields=columns"
}
