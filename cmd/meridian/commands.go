package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/rest"
	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/store"
)

const (
	defaultAddr     = ":8585"
	defaultDataDir  = "./meridian-data"
	shutdownTimeout = 15 * time.Second
)

// serveCmd runs `meridian serve`.
func serveCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	addr := fs.string("addr", "MERIDIAN_ADDR", defaultAddr, "listen address")
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	level := fs.string("log-level", "MERIDIAN_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	retention := fs.string("event-retention", "MERIDIAN_EVENT_RETENTION", "30d",
		"how long change events are kept once every outbox consumer has handled them: 30d, 12h, or never")
	yield := fs.duration("consumer-yield", "MERIDIAN_CONSUMER_YIELD", store.DefaultYield,
		"how long, at most, the outbox consumers (semantic index, knowledge graph, activity, audit, subscriptions) wait while a burst of writes saturates SQLite's single writer; 0 never waits")
	mcpOpts := mcpFlags(fs, "mcp-")
	bounds := serverFlags(fs)
	evOpts := eventFlags(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if *yield < 0 || *yield > maxConsumerYield {
		fmt.Fprintf(stderr, "invalid --consumer-yield %s: use a duration from 0 (never wait) to %s\n", *yield, maxConsumerYield)
		fs.Usage()
		return errUsage
	}
	delivery, err := evOpts.config()
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return errUsage
	}
	logs := newLogBuffer(stderr, logFlushEvery)
	defer logs.Close()
	log, err := newBufferedLogger(logs, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return errUsage
	}
	keep, err := parseRetention(*retention)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return errUsage
	}
	limits, err := bounds.limits()
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return errUsage
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	cfg, err := mcpOpts.catalogConfig(*dir, *dbURL, log)
	if err != nil {
		return err
	}
	cfg.EventRetention = keep
	cfg.ConsumerYield = *yield
	if *yield == 0 {
		cfg.ConsumerYield = -1 // never wait
	}
	cfg.Events = delivery
	cat, err := openCatalog(ctx, cfg)
	if err != nil {
		return err
	}
	defer cat.Close()
	if _, err := cat.bootstrapAdmin(ctx, log); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	proxies, err := rpc.ParseTrustedProxies(*mcpOpts.trustedProxies)
	if err != nil {
		return err
	}
	handler, err := withMCP(cat, log, mcpOpts, rest.New(rest.Config{Entities: cat.Entities, Search: cat.Search, Auth: cat.Auth, Logger: log,
		Version: version, Ready: cat.Ready, Dispatcher: cat.Dispatcher, Jobs: cat.Jobs, TrustedProxies: proxies,
		QueryRunner:     cat.QueryRunner,
		QueryRunnerRuns: cat.QueryRunnerRuns,
		Events:          cat.Events,
		Tasks:           cat.Tasks,
		Audit:           cat.Audit,
		AuditLog:        cat.AuditLog,
		Activity:        cat.Activity,
		Executions:      cat.Executions,
		Billing:         cat.Billing,
		Graph:           cat.Graph,
		GraphRebuild:    cat.StartGraphRebuild,
	}))
	if err != nil {
		return err
	}
	background := make(chan struct{})
	go func() { cat.Run(ctx); close(background) }()
	defer func() {
		stop()
		<-background // the dispatcher and the jobs stop before the database closes
	}()
	srv := rest.NewServer(handler, limits, log)
	fmt.Fprintf(logs, "meridian %s listening on %s (data directory %s)\n", version, ln.Addr(), *dir)
	logs.Flush()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
	}
	stop() // a second signal kills the process at once
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown did not finish in time", slog.String("error", err.Error()))
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// tokenCreateCmd runs `meridian token create` and prints the token on stdout.
func tokenCreateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("token create", stderr)
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	user := fs.string("user", "MERIDIAN_TOKEN_USER", "", "user or bot name (created when missing)")
	bot := fs.bool("bot", "MERIDIAN_TOKEN_BOT", false, "issue a BOT token (a missing user is created as a bot)")
	expires := fs.string("expires", "MERIDIAN_TOKEN_EXPIRES", "30d", "lifetime: 30d, 12h, 30 (days) or never")
	role := fs.string("role", "MERIDIAN_TOKEN_ROLE", meridian.RoleDataConsumer,
		"role of a user created by this command: Admin, DataSteward or DataConsumer")
	if err := fs.parse(args); err != nil {
		return err
	}
	switch {
	case *user == "":
		fmt.Fprintln(stderr, "--user is required")
		fs.Usage()
		return errUsage
	case *role != meridian.RoleAdmin && *role != meridian.RoleDataSteward && *role != meridian.RoleDataConsumer:
		fmt.Fprintf(stderr, "invalid --role %q: use Admin, DataSteward or DataConsumer\n", *role)
		fs.Usage()
		return errUsage
	}
	ttl, err := auth.ParseExpiry(*expires)
	if err != nil {
		fmt.Fprintf(stderr, "invalid --expires: %v\n", err)
		fs.Usage()
		return errUsage
	}

	cat, err := openCatalog(ctx, app.Config{DataDir: *dir, DatabaseURL: *dbURL})
	if err != nil {
		return err
	}
	defer cat.Close()
	u, created, err := cat.ensureUser(ctx, *user, *bot, []string{*role}, *role == meridian.RoleAdmin)
	if err != nil {
		return err
	}
	isBot, _ := u["isBot"].(bool)
	if *bot && !isBot {
		return fmt.Errorf("user %s exists and is not a bot", *user)
	}
	if created && *bot {
		// Register the bot beside its user, as POST /api/v1/bots would.
		if _, err := cat.Entities.Create(ctx, system, "bot", meridian.Entity{"name": *user, "botUser": u.FQN()}); err != nil &&
			meridian.ErrorCode(err) != meridian.EConflict {
			fmt.Fprintf(stderr, "meridian: warning: bot entity for %s not created: %v\n", *user, err)
		}
	}
	tokenType, name := meridian.TokenTypePersonal, "cli"
	if *bot {
		tokenType, name = meridian.TokenTypeBot, "cli-bot"
	}
	raw, _, err := cat.Auth.Issue(ctx, subject(u), tokenType, ttl, name)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, raw)
	return nil
}

// migrateCmd runs `meridian migrate`: opening the catalog applies the migrations.
func migrateCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	cat, err := openCatalog(ctx, app.Config{DataDir: *dir, DatabaseURL: *dbURL, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		return err
	}
	if err := cat.Close(); err != nil {
		return err
	}
	if *dbURL != "" {
		fmt.Fprintln(stderr, "meridian: the PostgreSQL database is up to date")
		return nil
	}
	fmt.Fprintf(stderr, "meridian: %s is up to date\n", *dir)
	return nil
}

// maxConsumerYield bounds --consumer-yield: the consumers' views may lag that long.
const maxConsumerYield = time.Hour

// parseRetention parses --event-retention: "never" (or 0) keeps every event (-1);
// otherwise a number of days ("30d", or a bare "30") or a Go duration ("12h", "90m") of
// at least a minute and at most 100 years.
func parseRetention(s string) (time.Duration, error) {
	in := strings.TrimSpace(strings.ToLower(s))
	if in == "never" || in == "0" {
		return -1, nil
	}
	bad := fmt.Errorf("invalid --event-retention %q: use a number of days (30d), a duration such as 12h, or never", s)
	var d time.Duration
	days, isDays := strings.CutSuffix(in, "d")
	if n, err := strconv.Atoi(days); err == nil && (isDays || days == in) {
		if n < 0 || n > 36500 {
			return 0, bad
		}
		d = time.Duration(n) * 24 * time.Hour
	} else if d, err = time.ParseDuration(in); err != nil {
		return 0, bad
	}
	if d < time.Minute || d > 36500*24*time.Hour {
		return 0, bad
	}
	return d, nil
}
