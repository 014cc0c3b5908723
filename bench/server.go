package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildBinary builds ./cmd/meridian once into dir.
func buildBinary(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "meridian")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/meridian")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/meridian: %v\n%s", err, out)
	}
	return bin, nil
}

// server is a running `meridian serve`.
type server struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:port
	dataDir string
	logPath string
	exited  chan struct{}
	waitErr error
}

// startServer starts `meridian serve` on a free loopback port with dataDir, plus extra
// flags, and waits until /readyz answers 200.
func startServer(ctx context.Context, bin, dataDir string, extra ...string) (*server, error) {
	return startServerEnv(ctx, bin, dataDir, nil, extra...)
}

// startServerEnv is startServer with env (KEY=value, such as MERIDIAN_EMBEDDER=use-lite)
// added to the clean environment.
func startServerEnv(ctx context.Context, bin, dataDir string, env []string, extra ...string) (*server, error) {
	logPath := dataDir + ".log"
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// Port 0: the kernel picks a free port at bind time, so no other process can take
	// it between a probe and the bind; serve prints the address it got.
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.Env = append(cleanEnv(), env...)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	s := &server{cmd: cmd, dataDir: dataDir, logPath: logPath, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		logf.Close()
		close(s.exited)
	}()

	deadline := time.Now().Add(90 * time.Second)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("meridian serve exited (%v): %s", s.waitErr, s.logTail())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if s.base == "" {
			if m := listeningOn.FindSubmatch(logHead(s.logPath)); m != nil {
				s.base = "http://" + string(m[1])
			}
		}
		if s.base != "" {
			resp, err := hc.Get(s.base + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return s, nil
				}
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("meridian serve not ready after 90s: %s", s.logTail())
		}
	}
}

// stop sends SIGTERM and waits for the process to exit (SIGKILL after 30 s).
func (s *server) stop() error {
	select {
	case <-s.exited:
		return s.waitErr
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("meridian serve did not stop on SIGTERM within 30s; killed")
	}
	return s.waitErr
}

// token reads the admin token the server wrote on first start.
func (s *server) token() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dataDir, "admin.token"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// cleanEnv is the caller's environment without any MERIDIAN_* setting: the flags say
// it all.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MERIDIAN_") {
			env = append(env, kv)
		}
	}
	return env
}

// peakRSS returns VmHWM and VmRSS of the server process in bytes.
func (s *server) peakRSS() (hwm, rss int64, err error) { return procRSS(s.cmd.Process.Pid) }

// procRSS returns VmHWM and VmRSS of process pid in bytes.
func procRSS(pid int) (hwm, rss int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmHWM:":
			hwm = kb << 10
		case "VmRSS:":
			rss = kb << 10
		}
	}
	if hwm == 0 {
		return 0, 0, errors.New("VmHWM not found in /proc/<pid>/status")
	}
	return hwm, rss, nil
}

// logTail returns the last lines of the server's log.
func (s *server) logTail() string { return logTail(s.logPath, 15) }

// listeningOn matches the line serve prints once it listens, with the address it got.
var listeningOn = regexp.MustCompile(`listening on (\S+)`)

// logHead returns the start of a log file, where serve says where it listens.
func logHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	return b[:n]
}

// logTail returns the last n lines of a log file.
func logTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
