// Package benchenv is what the benchmark commands (bench, bench/billing,
// bench/executions, bench/graph) share about their environment: the description of the
// machine their reports print, and throwaway PostgreSQL databases.
package benchenv

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Hardware names the machine's CPUs, CPU model and memory, as read from /proc
// ("unknown CPU", "unknown memory" where it cannot be read).
func Hardware() string {
	model, mem := "unknown CPU", "unknown memory"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == "MemTotal:" {
				if kb, err := strconv.ParseFloat(fs[1], 64); err == nil {
					mem = fmt.Sprintf("%.1f GiB RAM", kb/(1<<20))
				}
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%d CPUs (nproc), %s, %s", runtime.NumCPU(), model, mem)
}

// ThrowawayDB creates the database <prefix><random> on the PostgreSQL server at adminURL
// (a postgres:// URL) and returns its URL and a function that drops it.
func ThrowawayDB(ctx context.Context, adminURL, prefix string) (string, func(), error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("-postgres-url must be a postgres:// URL")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL unreachable at %s: %v", u.Redacted(), err)
	}
	defer conn.Close(context.Background())

	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := prefix + hex.EncodeToString(b)
	if _, err := conn.Exec(cctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create database %s: %v", name, err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(dctx, adminURL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(dctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	}
	du := *u
	du.Path = "/" + name
	return du.String(), drop, nil
}
