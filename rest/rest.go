// Package rest is Meridian's REST API. It follows OpenMetadata's paths and shapes. One
// route table (routes.go) feeds both the router and the OpenAPI document: the generic
// entity routes are generated from the kind registry, and the special families (users
// and tokens, events, search, lineage, test case results) sit beside them. Handlers
// parse, call the engine and shape the answer; no business rule lives here. Every error
// goes through one writer that maps the application error code to an HTTP status and a
// {code, message} body.
package rest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/collab/activity"
	"github.com/meridian-catalog/meridian/collab/audit"
	"github.com/meridian-catalog/meridian/collab/events"
	"github.com/meridian-catalog/meridian/collab/executions"
	"github.com/meridian-catalog/meridian/collab/tasks"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/queryrunner/workflow"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// MaxBodyBytes is the largest request body accepted; a larger one is answered 413. It is
// the largest entity document (meridian.MaxDocumentBytes) with room for the
// whitespace of a pretty-printed body; a document past MaxDocumentBytes within it is
// answered 400 by the store, naming the limit.
const MaxBodyBytes = meridian.MaxDocumentBytes + 1<<20

// Config wires the REST API.
type Config struct {
	// Entities is the entity engine.
	Entities *store.Entities
	// Search answers the typed searches of every mode (keyword, vector, hybrid); nil
	// means Entities, which answers keyword searches only.
	Search search.Service
	// Auth verifies bearer tokens and issues personal access and bot tokens.
	Auth *auth.Authority
	// Logger receives request and error logs; nil discards them.
	Logger *slog.Logger
	// Version is the server version, reported in the X-Meridian-Version header.
	Version string
	// Ready reports whether the server can serve (the database answers); nil means
	// always ready.
	Ready func(context.Context) error
	// Dispatcher delivers the outbox; its consumers' positions are reported at
	// /api/v1/events/consumers. It may be nil.
	Dispatcher *store.Dispatcher
	// Jobs serves GET /v1/jobs/{id}; nil answers 404 for every job.
	Jobs *jobs.Service
	// TrustedProxies are the peers whose X-Forwarded-Proto and X-Forwarded-Host set the
	// base of the answers' absolute hrefs (rpc.ParseTrustedProxies); from anyone else
	// they are ignored.
	TrustedProxies []netip.Prefix
	// QueryRunner serves Query Runner's configs and saved queries (/v1/queryRunner);
	// nil answers 404 there.
	QueryRunner *queryrunner.Service
	// QueryRunnerRuns runs Query Runner workflows (/v1/platform/apps/queryRunner); nil
	// answers 404 there.
	QueryRunnerRuns *workflow.Service
	// Billing serves /v1/billing and meters the operations its price table names
	// (billing_meter.go); nil answers 404 there and meters nothing.
	Billing *billing.Service
	// Events delivers change events to event subscriptions and tests their
	// destinations; nil answers 404 to testDestination.
	Events *events.Service
	// Tasks serves the task flows (/v1/tasks beside the task kind's generic routes) and
	// the feed (/v1/feed); nil leaves only the generic task routes.
	Tasks *tasks.Service
	// Audit records every write and authentication failure in the audit log; nil
	// records nothing. AuditLog serves /v1/audit/logs, Activity /v1/activity/** and
	// Executions /v1/mcpExecutions and /v1/agentExecutions; nil means one over
	// Entities' driver (without the activity retention job, which app runs).
	Audit      *audit.Writer
	AuditLog   *audit.Service
	Activity   *activity.Service
	Executions *executions.Service
	// Graph answers /api/v1/rdf; nil answers 503 there. GraphRebuild starts the durable
	// rebuild job and returns its id.
	Graph        *graph.Service
	GraphRebuild func(ctx context.Context, p *meridian.Principal) (string, error)
}

type server struct {
	ents           *store.Entities
	search         search.Service
	auth           *auth.Authority
	log            *slog.Logger
	serverVersion  string
	ready          func(context.Context) error
	dispatcher     *store.Dispatcher
	jobs           *jobs.Service
	trustedProxies []netip.Prefix
	qr             *queryrunner.Service
	qrRuns         *workflow.Service
	billing        *billing.Service
	events         *events.Service
	tasks          *tasks.Service
	audit          *audit.Writer
	auditLog       *audit.Service
	activity       *activity.Service
	executions     *executions.Service
	metrics        *metrics
	mux            *chi.Mux
	// public holds "METHOD path" of the routes that need no token.
	public map[string]bool
	// reads holds "METHOD path" of the POST routes that only read.
	reads        map[string]bool
	graph        *graph.Service
	graphRebuild func(ctx context.Context, p *meridian.Principal) (string, error)
	// apiDoc is the OpenAPI document of the route table, built once by New; apiErr is
	// why it could not be built.
	apiDoc []byte
	apiErr error
}

// New returns the REST API handler: /healthz, /readyz and /metrics without
// authentication, and everything under /api behind a Bearer JWT. The router and the
// OpenAPI document are both made from one route table (routes.go).
func New(c Config) http.Handler {
	s := &server{ents: c.Entities, search: c.Search, auth: c.Auth, log: c.Logger, serverVersion: c.Version, ready: c.Ready, dispatcher: c.Dispatcher, jobs: c.Jobs,
		trustedProxies: c.TrustedProxies,
		qr:             c.QueryRunner,
		qrRuns:         c.QueryRunnerRuns,
		events:         c.Events,
		tasks:          c.Tasks,
		audit:          c.Audit,
		auditLog:       c.AuditLog,
		activity:       c.Activity,
		executions:     c.Executions,
		billing:        c.Billing,
		graph:          c.Graph,
		graphRebuild:   c.GraphRebuild,
	}
	if s.search == nil {
		s.search = c.Entities
	}
	s.defaultCollab()
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.metrics = newMetrics(c.Dispatcher, c.Entities.Driver())
	reg := s.ents.Registry()
	routes := s.routes(reg)
	s.apiDoc, s.apiErr = buildOpenAPI(reg, s.serverVersion, routes)

	mux := chi.NewRouter()
	s.mux = mux
	mux.Use(s.requestID, s.accessLog, s.recoverer, routeOnEscapedPath, s.auditRequests, s.authenticate, s.refuseNUL, s.limitBody, s.absoluteHrefs)
	mux.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errStatus(http.StatusNotFound, "Unknown path "+r.URL.Path))
	})
	mux.MethodNotAllowed(s.methodNotAllowed)
	s.public, s.reads = map[string]bool{}, map[string]bool{}
	for _, rt := range routes {
		if s.billing != nil && rt.id != "" {
			rt.handler = s.meterRoute(rt.id, rt.handler)
		}
		if rt.reads {
			s.reads[rt.method+" "+rt.path] = true
		}
		if rt.method == "" {
			mux.Handle(rt.path, rt.handler)
		} else {
			mux.Method(rt.method, rt.path, rt.handler)
		}
		if rt.public {
			s.public[rt.method+" "+rt.path] = true
		}
	}
	return mux
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := s.ready(ctx); err != nil {
			s.log.WarnContext(r.Context(), "not ready", slog.String("error", err.Error()))
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// methodNotAllowed answers 405 with an Allow header listing the methods the path has.
func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if s.mux.Match(chi.NewRouteContext(), m, path) {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
	}
	s.writeError(w, r, errStatus(http.StatusMethodNotAllowed,
		fmt.Sprintf("Method %s is not allowed on %s", r.Method, r.URL.Path)))
}

type requestIDKey struct{}

// requestID returns the request id in the context, or "".
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// saneRequestID reports whether an incoming X-Request-ID may be echoed: 1 to 128
// characters from a conservative set, so it is safe in headers and logs.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=':
		default:
			return false
		}
	}
	return true
}

// requestID gives every request an id: a sane incoming X-Request-ID is echoed, otherwise
// a new UUID is made. The id is set on the answer and kept in the context for logs.
func (s *server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !saneRequestID(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-ID", id)
		if s.serverVersion != "" {
			w.Header().Set("X-Meridian-Version", s.serverVersion)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// statusRecorder remembers the status an answer was written with.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logUserKey holds the caller's name for the access log; authenticate fills it in.
type logUserKey struct{}

// accessLog logs one line per request.
func (s *server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		user := new(string)
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), logUserKey{}, user)))
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		s.metrics.observe(r, status, time.Since(start))
		attrs := []slog.Attr{
			slog.String("requestId", requestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
		}
		if *user != "" {
			attrs = append(attrs, slog.String("user", *user))
		}
		level := slog.LevelInfo
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/metrics" {
			level = slog.LevelDebug
		}
		s.log.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// recoverer turns a panic in a handler into a logged 500 answer.
func (s *server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			rv := recover()
			if rv == nil {
				return
			}
			if rv == http.ErrAbortHandler {
				panic(rv)
			}
			s.log.ErrorContext(r.Context(), "panic in handler",
				slog.String("requestId", requestID(r.Context())),
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Any("panic", rv), slog.String("stack", string(debug.Stack())))
			writeJSON(w, http.StatusInternalServerError, errorBody{Code: 500, Message: "Internal error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// routeOnEscapedPath makes chi route on the escaped path, always. Path parameters then
// hold the escaped segment, and pathParam unescapes it exactly once: an FQN holding
// "%2F", "%25" or quotes keeps its characters, whatever form the client sent.
func routeOnEscapedPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rctx := chi.RouteContext(r.Context()); rctx != nil {
			rctx.RoutePath = r.URL.EscapedPath()
		}
		next.ServeHTTP(w, r)
	})
}

// limitBody bounds every request body to MaxBodyBytes.
func (s *server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			// Refuse before reading a byte of it.
			w.Header().Set("Connection", "close")
			s.writeError(w, r, errStatus(http.StatusRequestEntityTooLarge, tooLarge(MaxBodyBytes)))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(limit int64) string {
	return fmt.Sprintf("Request body is larger than %d bytes", limit)
}

// authenticate requires a valid Bearer JWT on every path under /api, except the public
// routes of the table (a GET of the OpenAPI document), and puts the principal in the
// context. A token scoped to metadata:read may only read.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.URL.Path != "/api" && !strings.HasPrefix(r.URL.Path, "/api/")) || s.public[r.Method+" "+r.URL.EscapedPath()] {
			next.ServeHTTP(w, r)
			return
		}
		h := r.Header.Get("Authorization")
		scheme, raw, ok := strings.Cut(strings.TrimSpace(h), " ")
		raw = strings.TrimSpace(raw)
		switch {
		case h == "":
			s.writeError(w, r, meridian.Errorf(meridian.EUnauthorized, "Not authorized: missing Authorization header"))
			return
		case !ok || !strings.EqualFold(scheme, "Bearer") || raw == "":
			s.writeError(w, r, meridian.Errorf(meridian.EUnauthorized, "Not authorized: the Authorization header must be 'Bearer <token>'"))
			return
		}
		p, err := s.auth.Verify(r.Context(), raw)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if p == nil {
			s.writeError(w, r, meridian.Errorf(meridian.EUnauthorized, "Not authorized: invalid token"))
			return
		}
		if u, ok := r.Context().Value(logUserKey{}).(*string); ok {
			*u = p.Name
		}
		if p.ReadOnly() && !readMethod(r.Method) && !s.reads[r.Method+" "+r.URL.EscapedPath()] {
			s.writeError(w, r, meridian.Errorf(meridian.EForbidden,
				"Principal: %s is limited to the %s scope and can not write", p.Name, meridian.ScopeRead))
			return
		}
		next.ServeHTTP(w, r.WithContext(meridian.WithPrincipal(r.Context(), p)))
	})
}

func readMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}
