// Package app wires Meridian's catalog, once, for cmd/meridian, bench/ and the tests:
// it opens the store (SQLite in the data directory, or PostgreSQL), and builds the
// schema validator, the secret sealer, the role policy, the entity engine, the token
// authority, the outbox dispatcher with its consumers, and the MCP tools. The REST and
// MCP edges (rest.New, rpc.NewHTTP, rpc.ServeStdio) are built by their callers over a
// Catalog.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/collab/activity"
	"github.com/meridian-catalog/meridian/collab/audit"
	"github.com/meridian-catalog/meridian/collab/events"
	"github.com/meridian-catalog/meridian/collab/executions"
	"github.com/meridian-catalog/meridian/collab/tasks"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/shapes"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/queryrunner/workflow"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/sqlite"
	"github.com/meridian-catalog/meridian/tools"
	"github.com/meridian-catalog/meridian/vectors"
)

// CatalogFile is the SQLite database in the data directory.
const CatalogFile = "catalog.db"

// billingJournalDir holds the billing journal's segments in the data directory.
const billingJournalDir = "billing-journal"

// Issuer is the issuer of the JWTs the token authority signs.
const Issuer = "meridian"

// compiledSchemas compiles the embedded kind schemas once per process: a Validator is
// immutable and safe for concurrent use, so every catalog shares it.
var compiledSchemas = sync.OnceValues(schema.New)

// Config says where the catalog lives and how its tools behave.
type Config struct {
	// DataDir holds the secret key file and, unless DatabaseURL is set, the SQLite
	// database CatalogFile. It is created (mode 0700) when missing. Required.
	DataDir string
	// DatabaseURL, when not empty, is the PostgreSQL database (postgres://…) that holds
	// the catalog instead of DataDir/CatalogFile.
	DatabaseURL string
	// Logger receives the wiring's, the dispatcher's and the tools' logs; nil discards
	// them.
	Logger *slog.Logger
	// ReadOnly hides and refuses the MCP write tools, whoever calls.
	ReadOnly bool
	// Budget bounds an MCP tool result, in characters of JSON; 0 means
	// tools.DefaultBudget.
	Budget int
	// EventRetention is how long delivered change events are kept; 0 means
	// store.DefaultEventRetention, negative keeps them all.
	EventRetention time.Duration
	// ConsumerYield is how long, at most, the outbox consumers wait while a burst of
	// entity writes saturates SQLite's single writer (store.Dispatcher.Yield); 0 means
	// store.DefaultYield, negative never waits.
	ConsumerYield time.Duration
	// Embedder chooses the embedder of semantic search; its zero value reads the
	// MERIDIAN_EMBEDDER* environment (EmbedderFromEnv).
	Embedder EmbedderConfig
	// Billing is the credit plan and price table; nil reads the MERIDIAN_BILLING*
	// environment (BillingFromEnv).
	Billing *BillingConfig
	// Notifier delivers event subscriptions, credit alerts and the weekly digest
	// (webhook, e-mail); nil builds one from Events (its SMTP server and networks).
	Notifier collab.Notifier
	// Now is the clock of billing; nil means time.Now.
	Now func() time.Time
	// Events configures the delivery of change events to event subscriptions (SMTP
	// server, networks webhooks may reach, bounds); Node and Logger are set here.
	Events events.Config
	// Graph chooses the knowledge graph's store; its zero value reads
	// MERIDIAN_SPARQL_ENDPOINT and MERIDIAN_SPARQL_UPDATE_ENDPOINT (GraphFromEnv).
	Graph GraphConfig
}

// Catalog is an open catalog. Its fields are ready to use; Close releases them.
type Catalog struct {
	// DataDir is the data directory.
	DataDir string
	// Driver is the open store, migrated to the current schema.
	Driver store.Driver
	// Schemas are the compiled kind schemas.
	Schemas *schema.Validator
	// Entities is the entity engine over Driver, validating with Schemas, sealing
	// secrets with the data directory's key, authorizing with the role policy, and
	// notifying Dispatcher and Auth's principal cache after each committed write.
	Entities *store.Entities
	// Auth verifies bearer tokens, caching the principals (auth.CacheConfig defaults),
	// and issues personal access and bot tokens.
	Auth *auth.Authority
	// Dispatcher delivers the outbox to its consumers; Run runs it when the catalog
	// serves.
	Dispatcher *store.Dispatcher
	// Jobs runs durable asynchronous jobs (async deletes); Run runs it, after
	// recovering the jobs a crash left behind.
	Jobs *jobs.Service
	// Tools are the MCP tools over Entities.
	Tools *tools.Set
	// Vectors is the embedding index; Indexer keeps it in step with the catalog as an
	// outbox consumer, with Embedder.
	Vectors  *vectors.Index
	Indexer  *vectors.Indexer
	Embedder vectors.Embedder
	// Search answers typed searches of every mode: keyword (Entities), vector and hybrid.
	Search *search.Engine
	// QueryRunner is Query Runner's configs, credential resolution and saved queries;
	// its test-connection workflows run on Jobs.
	QueryRunner *queryrunner.Service
	// QueryRunnerRuns runs Query Runner queries as durable workflows on Jobs, with the
	// credentials QueryRunner resolves, and keeps their results.
	QueryRunnerRuns *workflow.Service
	// Billing is the credit ledger: it meters the tools (through rpc), the metered REST
	// operations (through rest) and the embedder, and enforces the budgets; Run drains
	// its journal.
	Billing *billing.Service
	// Events delivers change events to event subscriptions (an outbox consumer); Run
	// runs its delivery workers.
	Events *events.Service
	// Tasks runs the task flows and the feed over Entities, with the role policy.
	Tasks *tasks.Service
	// AuditLog reads the audit log; Audit records the edges' entries in it (Run starts
	// it, Close writes what is still queued). Activity is the activity stream (Run
	// starts its retention job every hour); Executions the MCP and agent execution
	// records. The audit and activity outbox consumers run in Dispatcher.
	AuditLog   *audit.Service
	Audit      *audit.Writer
	Activity   *activity.Service
	Executions *executions.Service

	auditMu     sync.Mutex // guards the three fields below
	auditStop   context.CancelFunc
	auditDone   chan struct{}
	auditClosed bool
	// Graph answers bounded SPARQL over the catalog's RDF projection, which its Sync
	// keeps in step as an outbox consumer; Run builds it first (BuildGraph).
	Graph         *graph.Service
	graphRemote   bool
	graphSnapshot string // the embedded graph's snapshot file; empty for none
	log           *slog.Logger
}

// Open opens the catalog cfg describes: it opens the store and applies its
// migrations, loads the secret key and the JWT signing key (both created on first use),
// builds the engine, rebuilds the search index when it is missing, seeds OpenMetadata's
// built-in test definitions, and builds the dispatcher and the tools. On error nothing
// stays open.
func Open(ctx context.Context, cfg Config) (*Catalog, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := OpenDriver(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c, err := build(ctx, cfg, db, log)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return c, nil
}

// build wires everything over an open store.
func build(ctx context.Context, cfg Config, db store.Driver, log *slog.Logger) (*Catalog, error) {
	validator, err := compiledSchemas()
	if err != nil {
		return nil, fmt.Errorf("load schemas: %w", err)
	}
	sealer, err := auth.LoadSealer(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("load secret key: %w", err)
	}
	authority, err := auth.New(ctx, db, Issuer)
	if err != nil {
		return nil, fmt.Errorf("load signing key: %w", err)
	}
	// Verified principals are cached; the engine's post-commit hook (Notify) tells the
	// cache at once about this server's writes, and the cache follows the other
	// servers' through the database (auth/cache.go).
	if err := authority.UseCache(ctx, auth.CacheConfig{Registry: meridian.DefaultRegistry()}); err != nil {
		return nil, fmt.Errorf("start the principal cache: %w", err)
	}
	emb, err := NewEmbedder(cfg.Embedder)
	if err != nil {
		return nil, err
	}
	// The outbox's consumers (vectors, graph, activity, webhooks) are added here as the
	// capabilities arrive; the engine notifies the dispatcher built after it.
	var outbox *store.Dispatcher
	node, err := nodeID(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	js := jobs.New(db, jobs.Config{Node: node, Logger: log, Workers: jobWorkers})
	ents := store.New(store.Config{
		Driver:    db,
		Registry:  meridian.DefaultRegistry(),
		Validator: validator,
		Policy:    auth.Policy{},
		Sealer:    sealer,
		Notify:    func() { outbox.Notify(); authority.Changed() },
		Jobs:      js,
	})
	evCfg := cfg.Events
	evCfg.Node, evCfg.Logger = node, log
	if evCfg.Notifier == nil {
		evCfg.Notifier = cfg.Notifier
	}
	subscriptions := events.New(ents, evCfg)
	// Credit alerts and the weekly digest notify through the event subscriptions'
	// notifier (webhook with its SSRF guard, e-mail through the configured SMTP server).
	notifier := subscriptions.Notifier()
	bc := cfg.Billing
	if bc == nil {
		env, err := BillingFromEnv()
		if err != nil {
			return nil, err
		}
		bc = &env
	}
	bill, err := billing.New(ctx, billing.Config{Driver: db, JournalDir: filepath.Join(cfg.DataDir, billingJournalDir),
		Plan: bc.Plan, Prices: bc.Prices, Notifier: notifier, Sealer: sealer, Now: cfg.Now, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("open billing: %w", err)
	}
	emb = bill.Embedder(emb)
	index := vectors.NewIndex(db)
	indexer := vectors.NewIndexer(ents, index, emb, log)
	auditLog := audit.New(db)
	stream := activity.New(ents, db, activity.Config{Jobs: js, Logger: log})
	js.Register(activity.JobTypeRetention, func(ctx context.Context, _ jobs.Job, progress store.JobProgress) (any, error) {
		return stream.RunRetention(ctx, progress)
	})
	execs, err := executions.New(ents)
	if err != nil {
		return nil, fmt.Errorf("load the execution record schemas: %w", err)
	}
	graphCfg := cfg.Graph.withDefaults(cfg.DataDir)
	kg, err := newGraph(graphCfg, ents, log)
	if err != nil {
		return nil, fmt.Errorf("knowledge graph: %w", err)
	}
	outbox = store.NewDispatcher(db, log, indexer, subscriptions, activity.NewConsumer(db), audit.NewConsumer(db), kg.Sync())
	switch {
	case cfg.EventRetention < 0:
		outbox.Retention = 0
	case cfg.EventRetention > 0:
		outbox.Retention = cfg.EventRetention
	}
	switch {
	case cfg.ConsumerYield < 0:
		outbox.Yield = 0
	case cfg.ConsumerYield > 0:
		outbox.Yield = cfg.ConsumerYield
	}
	js.Register(vectors.JobTypeReindex, func(ctx context.Context, j jobs.Job, progress store.JobProgress) (any, error) {
		return indexer.ResumeReindex(ctx, j.Checkpoint, progress)
	})
	js.Register(store.JobTypeDelete, func(ctx context.Context, j jobs.Job, _ store.JobProgress) (any, error) {
		return ents.SettleDelete(ctx, j.Params)
	})
	qr := queryrunner.New(queryrunner.Config{Entities: ents, Sealer: sealer, Jobs: js, Logger: log})
	js.Register(queryrunner.JobTypeTestConnection, qr.ResumeTestConnection)
	qrRuns := workflow.New(workflow.Config{DB: db, Jobs: js, Resolver: qr, Logger: log})
	if n, err := ents.EnsureSearchIndex(ctx); err != nil {
		return nil, fmt.Errorf("build the search index: %w", err)
	} else if n > 0 {
		log.Info("rebuilt the search index", "entities", n)
	}
	// An unchanged definition is left alone.
	if n, err := ents.SeedTestDefinitions(ctx); err != nil {
		return nil, fmt.Errorf("seed the test definitions: %w", err)
	} else if n > 0 {
		log.Info("seeded the built-in test definitions", "definitions", n)
	}
	engine := &search.Engine{Keyword: ents, Vector: vectors.NewSearcher(ents, index, emb)}
	set, err := tools.New(tools.Config{Entities: ents, Search: engine, Schemas: validator, Budget: cfg.Budget,
		ReadOnly: cfg.ReadOnly, Logger: cfg.Logger, Graph: kg, Shapes: &shapes.Validator{Graph: kg, Entities: ents, Jobs: js}})
	if err != nil {
		return nil, err
	}
	c := &Catalog{DataDir: cfg.DataDir, Driver: db, Schemas: validator, Entities: ents, Auth: authority,
		Dispatcher: outbox, Jobs: js, Tools: set, Vectors: index, Indexer: indexer, Embedder: emb,
		Search:          engine,
		QueryRunner:     qr,
		QueryRunnerRuns: qrRuns,
		Events:          subscriptions,
		Tasks:           tasks.New(ents, auth.Policy{}),
		AuditLog:        auditLog,
		Audit:           audit.NewWriter(auditLog, audit.WriterConfig{Logger: log}),
		Activity:        stream,
		Executions:      execs,
		Billing:         bill,
		Graph:           kg,
		graphRemote:     graphCfg.Remote(),
		graphSnapshot:   graphCfg.Snapshot,
		log:             log,
	}
	registerGraphJob(js, c)
	return c, nil
}

// OpenDriver opens only the store cfg describes, creating the data directory and
// applying the migrations: PostgreSQL at cfg.DatabaseURL when it is set, otherwise
// SQLite at cfg.DataDir/CatalogFile. The caller closes it.
func OpenDriver(ctx context.Context, cfg Config) (store.Driver, error) {
	if strings.TrimSpace(cfg.DataDir) == "" {
		return nil, errors.New("the data directory must not be empty")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	if strings.TrimSpace(cfg.DatabaseURL) != "" {
		db, err := postgres.Open(ctx, cfg.DatabaseURL, Modules()...)
		if err != nil {
			return nil, err
		}
		return db, nil
	}
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, CatalogFile), Modules()...)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// Ready reports whether the store answers.
func (c *Catalog) Ready(ctx context.Context) error {
	tx, err := c.Driver.Begin(ctx, false)
	if err != nil {
		return err
	}
	return tx.Rollback()
}

// Run delivers the outbox and runs the jobs until ctx ends, then returns once both have
// stopped, so the store can close. When the embedding index was built with another
// model (or never), it first starts a reindex job.
func (c *Catalog) Run(ctx context.Context) {
	if current, err := c.Indexer.Current(ctx); err == nil && !current {
		if _, err := c.Indexer.StartReindex(ctx, c.Jobs, meridian.System); err != nil {
			slog.Default().Warn("the embedding reindex did not start", "err", err)
		}
	}
	c.startAudit()
	var wg sync.WaitGroup
	wg.Go(func() { c.Activity.Run(ctx) }) // starts the retention job now and hourly
	// The graph's consumer waits for the build; the other consumers go on meanwhile.
	wg.Go(func() {
		if err := c.BuildGraph(ctx); err != nil && ctx.Err() == nil {
			slog.Default().Warn("the knowledge graph was not built", "err", err)
		}
	})
	wg.Go(func() { c.Dispatcher.Run(ctx) })
	wg.Go(func() { c.Jobs.Run(ctx) }) // first recovers the jobs a crash left behind
	wg.Go(func() { c.QueryRunnerRuns.Run(ctx) })
	wg.Go(func() { c.Billing.Run(ctx) })
	wg.Go(func() { c.Events.Run(ctx) })
	wg.Go(func() { c.runGraphSnapshots(ctx) })
	if m, ok := c.Driver.(store.Maintainer); ok {
		wg.Go(func() { m.Maintain(ctx) })
	}
	wg.Wait()
	// Every consumer has stopped: the snapshot holds all the graph has applied.
	c.SaveGraphSnapshot(false)
}

// startAudit starts the audit writer once, on its own context: it outlives Run's, so
// the requests still served during a shutdown are recorded, and Close stops it.
func (c *Catalog) startAudit() {
	c.auditMu.Lock()
	defer c.auditMu.Unlock()
	if c.auditStop != nil || c.auditClosed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.auditStop, c.auditDone = cancel, done
	go func() { defer close(done); c.Audit.Run(ctx) }()
}

// Close writes the audit entries still queued, drains the billing journal into the
// ledger, then closes the store.
func (c *Catalog) Close() error {
	c.auditMu.Lock()
	c.auditClosed = true
	stop, done := c.auditStop, c.auditDone
	c.auditMu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	if err := c.Billing.Close(context.Background()); err != nil {
		slog.Default().Warn("billing: the journal was not drained; it is replayed at the next start", "err", err)
	}
	return c.Driver.Close()
}

// Modules are the capabilities that own tables in the catalog database, in the order
// their migrations apply.
func Modules() []store.Module {
	return []store.Module{
		auth.Module(), quality.Module(), jobs.Module(), vectors.Module(),
		queryrunner.Module(),
		workflow.Module(),
		events.Module(),
		tasks.Module(),
		activity.Module(), audit.Module(), executions.Module(),
		billing.Module(),
	}
}

// jobWorkers is how many durable jobs run at once on a node. Query Runner's runs and
// connection tests wait on a database most of their time, so they would hold the job
// service's default two workers against async deletes, reindexing and graph rebuilds.
const jobWorkers = 8

// nodeIDFile names this node for the jobs service: a job's lease belongs to a node, so a
// restarted node takes its own jobs back at once.
const nodeIDFile = "node.id"

// nodeID reads the data directory's node id, creating it on first use.
func nodeID(dir string) (string, error) {
	path := filepath.Join(dir, nodeIDFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read node id: %w", err)
	}
	id := uuid.NewString()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	return id, nil
}
