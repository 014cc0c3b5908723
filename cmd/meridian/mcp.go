package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/rest"
	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/tools"
)

// mcpOptions are the MCP settings shared by `meridian mcp` and `meridian serve`.
type mcpOptions struct {
	readOnly       *bool
	budget         *string
	allowedOrigins *string
	noLocalhost    *bool
	trustedProxies *string
}

// mcpFlags adds the MCP flags to a command; serve takes them with an --mcp- prefix.
// Their environment twins are MERIDIAN_MCP_* for both commands.
func mcpFlags(fs *flagSet, prefix string) mcpOptions {
	env := "MERIDIAN_MCP_"
	o := mcpOptions{
		readOnly: fs.bool(prefix+"read-only", env+"READ_ONLY", false,
			"hide and refuse the MCP write tools"),
		budget: fs.string(prefix+"budget", env+"BUDGET", strconv.Itoa(tools.DefaultBudget),
			"largest MCP tool result, in characters of JSON"),
	}
	if prefix != "" { // HTTP only
		o.allowedOrigins = fs.string(prefix+"allowed-origins", env+"ALLOWED_ORIGINS", "",
			"comma-separated browser origins allowed besides the server's own host and localhost (* for any)")
		o.noLocalhost = fs.bool(prefix+"disable-localhost-protection", env+"DISABLE_LOCALHOST_PROTECTION", false,
			"accept a non-localhost Host header on a loopback connection (a reverse proxy on the same host)")
		o.trustedProxies = fs.string("trusted-proxies", "MERIDIAN_TRUSTED_PROXIES", "",
			"comma-separated addresses or CIDR prefixes of reverse proxies whose X-Forwarded-Host and -Proto are believed")
	}
	return o
}

// catalogConfig is the app.Config of a command with MCP flags: the data directory or
// database, the logger, and the tools' read-only mode and budget.
func (o mcpOptions) catalogConfig(dir, dbURL string, log *slog.Logger) (app.Config, error) {
	budget, err := strconv.Atoi(strings.TrimSpace(*o.budget))
	if err != nil {
		return app.Config{}, fmt.Errorf("invalid MCP budget %q: %w", *o.budget, err)
	}
	return app.Config{DataDir: dir, DatabaseURL: dbURL, Logger: log, ReadOnly: *o.readOnly, Budget: budget}, nil
}

// withMCP puts the MCP endpoint (/mcp, /api/mcp) and its RFC 9728 metadata
// (/.well-known/oauth-protected-resource[/mcp]) in front of the REST API, so that MCP
// requests reach the MCP transport, with its own Bearer authentication, before REST's.
// It serves cat.Tools with o's HTTP settings (allowed origins, localhost protection).
func withMCP(cat *catalog, log *slog.Logger, o mcpOptions, api http.Handler) (http.Handler, error) {
	var origins []string
	for _, s := range strings.Split(*o.allowedOrigins, ",") {
		if s = strings.TrimSpace(s); s != "" {
			origins = append(origins, s)
		}
	}
	proxies, err := rpc.ParseTrustedProxies(*o.trustedProxies)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	rpc.NewHTTP(rpc.Config{Tools: cat.Tools, Auth: cat.Auth, Logger: log, Version: version,
		AllowedOrigins: origins, DisableLocalhostProtection: *o.noLocalhost, TrustedProxies: proxies,
		Audit: cat.Audit, Billing: cat.Billing}).Mount(mux)
	mux.Handle("/", api)
	return mux, nil
}

// mcpCmd runs `meridian mcp`: MCP over stdio (newline-delimited JSON-RPC on stdout,
// logs on stderr) as one principal, by default admin.
func mcpCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp", stderr)
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	as := fs.string("as", "MERIDIAN_MCP_AS", adminName, "name of the user the tools run as")
	create := fs.bool("create", "MERIDIAN_MCP_CREATE", false, "create a new, empty catalog when the data directory holds none")
	opts := mcpFlags(fs, "")
	level := fs.string("log-level", "MERIDIAN_LOG_LEVEL", "warn", "log level: debug, info, warn or error")
	if err := fs.parse(args); err != nil {
		return err
	}
	log, err := newLogger(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return errUsage
	}
	if !*create {
		if err := requireCatalog(*dir, *dbURL); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	cfg, err := opts.catalogConfig(*dir, *dbURL, log)
	if err != nil {
		return err
	}
	cat, err := openCatalog(ctx, cfg)
	if err != nil {
		return err
	}
	defer cat.Close()
	p, err := cat.principalOf(ctx, *as)
	if err != nil {
		return err
	}
	background := make(chan struct{})
	go func() { cat.Run(ctx); close(background) }()
	defer func() {
		stop()
		<-background // the consumers, jobs and graph snapshot finish before the database closes
	}()
	log.Info("serving MCP on stdio", slog.String("as", p.Name), slog.Bool("readOnly", *opts.readOnly))
	return rpc.ServeStdio(ctx, rpc.Config{Tools: cat.Tools, Principal: p, Logger: log, Version: version,
		Audit: cat.Audit, Billing: cat.Billing}, stdin, stdout)
}

// requireCatalog fails unless the data directory holds a catalog: its catalog.db, or,
// with a PostgreSQL URL, the secret key that opens the database's sealed secrets. An
// assistant configured with a mistyped --data-dir then gets an error instead of a new,
// empty catalog.
func requireCatalog(dir, databaseURL string) error {
	want, what := filepath.Join(dir, app.CatalogFile), "no catalog"
	if strings.TrimSpace(databaseURL) != "" {
		if strings.TrimSpace(os.Getenv(auth.SecretKeyEnv)) != "" {
			return nil
		}
		want, what = filepath.Join(dir, auth.KeyFileName), "no secret key for the PostgreSQL catalog"
	}
	if _, err := os.Stat(want); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	abs, _ := filepath.Abs(dir)
	return fmt.Errorf("the data directory %s holds %s (%s is missing): pass the --data-dir that meridian serve uses, or --create to start a new, empty catalog there",
		abs, what, filepath.Base(want))
}

// principalOf is the principal of the user named name, with its id and roles. The
// admin user is created on first use, as serve creates it; any other user must exist.
func (c *catalog) principalOf(ctx context.Context, name string) (*meridian.Principal, error) {
	var (
		u   meridian.Entity
		err error
	)
	if name == adminName {
		u, _, err = c.ensureUser(ctx, adminName, false, []string{meridian.RoleAdmin}, true)
	} else {
		u, err = c.Entities.Get(ctx, system, "user", store.ByFQN(meridian.QuoteName(name)), store.GetOptions{Fields: "roles"})
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return nil, fmt.Errorf("--as %s: no such user (create it first, e.g. with meridian token create --user %s)", name, name)
		}
	}
	if err != nil {
		return nil, err
	}
	isBot, _ := u["isBot"].(bool)
	p := &meridian.Principal{ID: u.ID(), Name: u.Name(), Email: u.String("email"), Roles: rest.UserRoles(u), IsBot: isBot}
	if admin, _ := u["isAdmin"].(bool); admin && !p.IsAdmin() {
		p.Roles = append(p.Roles, meridian.RoleAdmin)
	}
	return p, nil
}
