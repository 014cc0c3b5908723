// Command bench is Meridian's benchmark harness. It is a report, not a test.
//
//	go run ./bench [-n 10000] [-drivers sqlite,postgres] [-workers 8] [-samples 1000]
//	               [-o bench/report.md] [-postgres-url postgres://…]
//	               [-suites core,semantic] [-semantic-n 10000] [-model-n 50]
//
// For each store driver it builds the meridian binary once, starts `meridian serve` on a
// free loopback port with a fresh data directory (and, for PostgreSQL, a throwaway
// database), loads -n tables of 20 columns each through the REST API with -workers
// concurrent clients, then times a list of named operations per surface (REST, then MCP
// over streamable HTTP and over stdio, against the REST calls doing the same work), each
// -samples times, one request after another on one connection. It then
// stops the server, opens the same database directly with the driver and times the
// floor: the same GET by name done as a raw Tx.GetByFQN plus a JSON decode. Beside it, in
// the same run, a static HTTP server answering the same bytes from a process of its own
// (this binary, run again) is the HTTP floor, and n
// more tables are loaded through the bulk endpoint. The report (a markdown table) goes
// to stdout and to -o, which is a file in the system's temporary directory unless
// given, so a run does not dirty the checkout. The semantic suite (semantic.go,
// model.go) times semantic and hybrid search on -semantic-n bulk-loaded tables, the time
// to index them, and the embedders' figures. See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	n           int
	drivers     []string
	workers     int
	samples     int
	out         string
	postgresURL string
	seed        uint64
	core        bool   // the catalog suite (ingest, GET, list, PATCH, search, MCP)
	semantic    bool   // the semantic suite (semantic.go, model.go)
	queryrunner bool   // the Query Runner suite (queryrunner.go)
	semanticN   int    // tables of the semantic suite
	modelN      int    // tables of the USE-lite server
	yield       string // the servers' --consumer-yield, "" for its default
	root        string // module root
}

func main() {
	if file := os.Getenv(staticServerEnv); file != "" {
		if err := serveStatic(file); err != nil {
			fmt.Fprintf(os.Stderr, "bench static server: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var drivers string
	fs.IntVar(&c.n, "n", 10000, "number of tables to load (20 columns each)")
	fs.StringVar(&drivers, "drivers", "sqlite,postgres", "comma-separated store drivers: sqlite, postgres")
	fs.IntVar(&c.workers, "workers", 8, "concurrent ingest clients")
	fs.IntVar(&c.samples, "samples", 1000, "timed samples per operation")
	defaultOut := filepath.Join(os.TempDir(), "meridian-bench-report.md")
	fs.StringVar(&c.out, "o", defaultOut, "report file, relative to the module root (bench/report.md to update the committed one); empty for none")
	fs.StringVar(&c.out, "out", defaultOut, "same as -o")
	fs.StringVar(&c.postgresURL, "postgres-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"PostgreSQL server; a throwaway database meridian_bench_<random> is created on it and dropped")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the generated catalog and of the sampled tables")
	suites := fs.String("suites", "core,semantic", "comma-separated suites: core (the catalog operations), semantic (issue 9), queryrunner (issue 12)")
	fs.IntVar(&c.semanticN, "semantic-n", 10000, "tables of the semantic suite, bulk-loaded with the hashing embedder")
	fs.IntVar(&c.modelN, "model-n", 50, "tables of the semantic suite's USE-lite server (SQLite)")
	fs.StringVar(&c.yield, "consumer-yield", "", "the core suite's meridian serve --consumer-yield (0: the consumers never wait for a burst of writes); empty for the server's default")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if c.n < 1 || c.workers < 1 || c.samples < 1 || c.semanticN < 1 || c.modelN < 1 {
		return errors.New("-n, -workers, -samples, -semantic-n and -model-n must be at least 1")
	}
	for _, s := range strings.Split(*suites, ",") {
		switch s = strings.TrimSpace(s); s {
		case "":
		case "core":
			c.core = true
		case "semantic":
			c.semantic = true
		case "queryrunner":
			c.queryrunner = true
		default:
			return fmt.Errorf("unknown suite %q: use core, semantic or queryrunner", s)
		}
	}
	if !c.core && !c.semantic && !c.queryrunner {
		return errors.New("-suites names no suite")
	}
	for _, d := range strings.Split(drivers, ",") {
		d = strings.TrimSpace(d)
		switch d {
		case "":
		case "sqlite", "postgres":
			c.drivers = append(c.drivers, d)
		default:
			return fmt.Errorf("unknown driver %q: use sqlite or postgres", d)
		}
	}
	if len(c.drivers) == 0 {
		return errors.New("-drivers names no driver")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	c.root = root

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	tmp, err := os.MkdirTemp("", "meridian-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	logf("building meridian")
	bin, err := buildBinary(ctx, root, tmp)
	if err != nil {
		return err
	}

	rep := &report{machine: describeMachine(), n: c.n, workers: c.workers, samples: c.samples, yield: c.yield, semanticN: c.semanticN}
	for _, d := range c.drivers {
		if !c.core {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logf("%s: start", d)
		res := benchDriver(ctx, c, d, bin, tmp, logf)
		if res.skipped != "" {
			logf("%s: skipped: %s", d, res.skipped)
		}
		rep.results = append(rep.results, res)
	}
	if c.semantic {
		for _, d := range c.drivers {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			logf("%s semantic: start", d)
			res := benchSemantic(ctx, c, d, bin, tmp, logf)
			if res.skipped != "" {
				logf("%s semantic: skipped: %s", d, res.skipped)
			}
			rep.semantic = append(rep.semantic, res)
		}
		rep.models = benchModels(ctx, c, bin, tmp, logf)
	}

	var qr []*qrResult
	for _, d := range c.drivers {
		if !c.queryrunner || ctx.Err() != nil {
			break
		}
		logf("%s queryrunner: start", d)
		res := benchQueryRunner(ctx, c, d, bin, tmp, logf)
		if res.skipped != "" {
			logf("%s queryrunner: skipped: %s", d, res.skipped)
		}
		qr = append(qr, res)
	}

	md := ""
	if c.core || c.semantic {
		md = rep.markdown()
	}
	if c.queryrunner {
		md += qrMarkdown(rep.machine, qr)
	}
	fmt.Fprint(stdout, md)
	if c.out != "" {
		out := c.out
		if !filepath.IsAbs(out) {
			out = filepath.Join(root, out)
		}
		if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		logf("report written to %s", out)
	}
	return nil
}

// moduleRoot finds the directory holding go.mod, from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(b), "module github.com/meridian-catalog/meridian\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run bench inside the meridian module (go.mod not found)")
		}
		dir = parent
	}
}
