// Command meridian is the Meridian metadata catalog: one binary that serves the REST API
// and manages its data directory.
//
//	meridian serve   [--addr :8585] [--data-dir ./meridian-data] [--log-level info]
//	meridian mcp     [--data-dir D | --database-url URL] [--as USER] [--read-only] [--create]
//	meridian token create --user NAME [--bot] [--expires 30d|never] [--role ROLE] [--data-dir D]
//	meridian admin-token [--data-dir D] [--expires 30d]
//	meridian migrate [--data-dir D]
//	meridian reindex [--data-dir D | --database-url URL]
//	meridian graph rebuild [--data-dir D | --database-url URL]
//	meridian version
//
// Every flag has a MERIDIAN_* environment twin that sets its default.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// version is the release, set with -ldflags "-X main.version=…".
var version = "dev"

// errUsage marks a command-line mistake: the usage has been printed, exit 2.
var errUsage = errors.New("usage")

const usage = `Usage: meridian <command> [flags]

Commands:
  serve          serve the REST API, and MCP at /mcp (alias /api/mcp)
  mcp            serve MCP on stdio (newline-delimited JSON-RPC) as one user
  token create   issue a token for a user or bot and print it
  admin-token    renew the admin token in <data-dir>/admin.token (it expires after 30 days)
  demo           load a small sample catalog (warehouse, lineage, tests, AI assets)
  migrate        bring the data directory's database up to date
  reindex        re-embed the catalog with the configured embedder (MERIDIAN_EMBEDDER)
  graph rebuild  project the catalog to RDF again (the embedded or the remote SPARQL store)
  version        print the version

Run "meridian <command> -h" for a command's flags. Every flag has a MERIDIAN_*
environment twin that sets its default.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit code: 0, 1 for an error, 2 for a
// usage mistake.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "meridian: %v\n", err)
	return 1
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serveCmd(ctx, rest, stderr)
	case "mcp":
		return mcpCmd(ctx, rest, os.Stdin, stdout, stderr)
	case "token":
		if len(rest) == 0 || rest[0] != "create" {
			fmt.Fprint(stderr, "Usage: meridian token create --user NAME [--bot] [--expires 30d|never] [--role ROLE] [--data-dir D]\n")
			return errUsage
		}
		return tokenCreateCmd(ctx, rest[1:], stdout, stderr)
	case "admin-token":
		return adminTokenCmd(ctx, rest, stdout, stderr)
	case "demo":
		return demoCmd(ctx, rest, stdout, stderr)
	case "migrate":
		return migrateCmd(ctx, rest, stderr)
	case "reindex":
		return reindexCmd(ctx, rest, stderr)
	case "graph":
		return graphCmd(ctx, rest, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stderr, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "meridian: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	}
}

// flagSet is a FlagSet whose flags read their defaults from MERIDIAN_* variables. A
// variable that does not parse is a usage error, reported when the flags are parsed.
type flagSet struct {
	*flag.FlagSet
	envErrs []string
}

func newFlagSet(name string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: meridian %s [flags]\n\nFlags:\n", name)
		fs.PrintDefaults()
	}
	return &flagSet{FlagSet: fs}
}

func (f *flagSet) string(name, env, def, help string) *string {
	if v, ok := os.LookupEnv(env); ok {
		def = v
	}
	return f.String(name, def, help+" ($"+env+")")
}

func (f *flagSet) bool(name, env string, def bool, help string) *bool {
	if v, ok := os.LookupEnv(env); ok && strings.TrimSpace(v) != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			f.envErrs = append(f.envErrs, fmt.Sprintf("%s=%q is not a boolean", env, v))
		} else {
			def = b
		}
	}
	return f.Bool(name, def, help+" ($"+env+")")
}

func (f *flagSet) int(name, env string, def int, help string) *int {
	if v, ok := os.LookupEnv(env); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			f.envErrs = append(f.envErrs, fmt.Sprintf("%s=%q is not an integer", env, v))
		} else {
			def = n
		}
	}
	return f.Int(name, def, help+" ($"+env+")")
}

func (f *flagSet) duration(name, env string, def time.Duration, help string) *time.Duration {
	if v, ok := os.LookupEnv(env); ok && strings.TrimSpace(v) != "" {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			f.envErrs = append(f.envErrs, fmt.Sprintf("%s=%q is not a duration (such as 30s or 2m)", env, v))
		} else {
			def = d
		}
	}
	return f.Duration(name, def, help+" ($"+env+")")
}

// parse parses args; extra positional arguments are a usage error.
func (f *flagSet) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage // the flag package printed the problem and the usage
	}
	if len(f.envErrs) > 0 {
		fmt.Fprintf(f.Output(), "%s\n", strings.Join(f.envErrs, "\n"))
		f.Usage()
		return errUsage
	}
	if f.NArg() > 0 {
		fmt.Fprintf(f.Output(), "unexpected argument %q\n", f.Arg(0))
		f.Usage()
		return errUsage
	}
	return nil
}
