package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Settling: once the outbox consumers have caught up, the server may still be busy on
// work of its own (the embedded graph writes a snapshot after a large load, several
// seconds at 100,000 tables; on SQLite the full-text index is merged once no document
// has been indexed for two seconds), which would land in the first timed row. The
// window is longer than that quiet, so a merge about to start is seen.
const (
	settleWindow = 3 * time.Second
	settleBusy   = 0.10 // of one core, over settleWindow
	settleMax    = 2 * time.Minute
)

// settle waits until the server used less than settleBusy of a core over the last
// settleWindow, at most settleMax, and returns how long it waited.
func (s *server) settle(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	prev, err := procCPU(s.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	for time.Since(start) < settleMax {
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case <-time.After(settleWindow):
		}
		now, err := procCPU(s.cmd.Process.Pid)
		if err != nil {
			return time.Since(start), err
		}
		if float64(now-prev) < settleBusy*float64(settleWindow) {
			return time.Since(start), nil
		}
		prev = now
	}
	return time.Since(start), fmt.Errorf("the server was still busy after %s", settleMax)
}

// procCPU returns the CPU time (user and system) process pid has used. /proc/<pid>/stat
// counts it in USER_HZ ticks, which Linux fixes at 100 a second for that file.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count from its end.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * (time.Second / 100), nil
}

// cpuPerTable is the CPU time an ingest cost per table: the server's, and the bench
// process's own (its clients generating, encoding and sending the tables), which shares
// the machine with it. Zero when /proc could not be read.
type cpuPerTable struct{ server, clients time.Duration }

// cpuStart is the CPU time the server and the bench process had used when an ingest
// started.
type cpuStart struct {
	pid             int
	server, clients time.Duration
	err             error
}

// startCPU reads the CPU time srv and the bench process have used so far.
func startCPU(srv *server) cpuStart {
	s := cpuStart{pid: srv.cmd.Process.Pid}
	var err1, err2 error
	s.server, err1 = procCPU(s.pid)
	s.clients, err2 = procCPU(os.Getpid())
	s.err = errors.Join(err1, err2)
	return s
}

// per returns the CPU time used since s, per table of n.
func (s cpuStart) per(n int) cpuPerTable {
	srv, err1 := procCPU(s.pid)
	cli, err2 := procCPU(os.Getpid())
	if s.err != nil || err1 != nil || err2 != nil || n <= 0 {
		return cpuPerTable{}
	}
	return cpuPerTable{server: (srv - s.server) / time.Duration(n), clients: (cli - s.clients) / time.Duration(n)}
}
