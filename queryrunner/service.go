package queryrunner

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// kindDatabaseService is the kind of the services Query Runner connects to.
const kindDatabaseService = "databaseService"

// Row caps of a run.
const (
	// DefaultMaxResultSize is the platform's row cap, applied when an admin config
	// sets none (GET /v1/queryRunner/configs/defaults).
	DefaultMaxResultSize = 1000
	// MaxMaxResultSize bounds querySettings.maxResultSize.
	MaxMaxResultSize = 1_000_000
)

// listCap bounds the lists that are not paged (a user's services, a team's configs).
const listCap = 1000

// Config wires a Service.
type Config struct {
	// Entities is the catalog: database services, users and teams are read through it,
	// and the module's tables through its transactions. Required.
	Entities *store.Entities
	// Sealer seals the configs' secrets with the catalog's key (auth.Sealer). Required.
	Sealer store.Sealer
	// Jobs runs test-connection workflows as durable jobs; nil answers EUnavailable.
	Jobs *jobs.Service
	// HTTPClient calls OAuth token endpoints; nil means a client with a 15 s timeout.
	HTTPClient *http.Client
	// Logger receives what has no caller to answer (never a secret); nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service is Query Runner's configs and saved queries: admin configs (one per database
// service), user and team configs with layered credentials, their resolution when a
// query runs, test-connection workflows, introspection with a caller's credentials,
// OAuth token refresh, and saved queries. It is safe for concurrent use.
type Service struct {
	ents   *store.Entities
	sealer store.Sealer
	jobs   *jobs.Service
	http   *http.Client
	log    *slog.Logger
	now    func() time.Time
	// testing maps the id of a config whose connection test runs on this server to
	// the test's workflow id.
	testing sync.Map
}

// New returns the service c describes. It panics without Entities or Sealer: a
// Query Runner that stored credentials in clear text is not a choice.
func New(c Config) *Service {
	if c.Entities == nil || c.Sealer == nil {
		panic("queryrunner.New needs Entities and Sealer")
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Service{ents: c.Entities, sealer: c.Sealer, jobs: c.Jobs, http: c.HTTPClient, log: c.Logger, now: c.Now}
}

func (s *Service) millis() int64 { return s.now().UnixMilli() }

// inTx runs fn in one transaction of the catalog.
func (s *Service) inTx(ctx context.Context, writable bool, fn func(tx store.Tx) error) error {
	return s.ents.InTx(ctx, writable, fn)
}

// caller checks that p is an authenticated user or bot with an id (the owner of user
// configs and saved queries). Errors: EUnauthorized, EForbidden.
func caller(p *meridian.Principal) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Not authorized: no principal")
	}
	if p.ID == "" {
		return meridian.Errorf(meridian.EForbidden, "Principal %s is not a catalog user: Query Runner configs and saved queries belong to users", p.Name)
	}
	return nil
}

// requireAdmin allows workspace admins only. Errors: EUnauthorized, EForbidden.
func requireAdmin(p *meridian.Principal, op string) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Not authorized: no principal")
	}
	if !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [%s] not allowed: Query Runner admin configs need a workspace admin", p.Name, op)
	}
	return nil
}

// serviceRef is a database service as configs refer to it.
type serviceRef struct {
	ID   string
	Name string
	Doc  meridian.Entity
}

// checkServiceName validates a serviceName value. Errors: EInvalid.
func checkServiceName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", meridian.Errorf(meridian.EInvalid, "serviceName is required")
	}
	if len(name) > maxNameLen {
		return "", meridian.Errorf(meridian.EInvalid, "serviceName is longer than %d bytes", maxNameLen)
	}
	if !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return "", meridian.Errorf(meridian.EInvalid, "serviceName must be text without control characters")
	}
	return name, nil
}

// service reads, in tx, the database service named name that p may view. Errors:
// EInvalid, ENotFound, EForbidden.
func (s *Service) service(ctx context.Context, tx store.Tx, p *meridian.Principal, name string) (serviceRef, error) {
	name, err := checkServiceName(name)
	if err != nil {
		return serviceRef{}, err
	}
	row, doc, err := s.ents.Load(ctx, tx, p, store.OpView, kindDatabaseService, store.ByFQN(name), store.IncludeNonDeleted)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return serviceRef{}, meridian.Errorf(meridian.ENotFound, "databaseService instance for %s not found", clip(name))
	}
	if err != nil {
		return serviceRef{}, err
	}
	return serviceRef{ID: row.ID, Name: row.FQN, Doc: doc}, nil
}

// serviceByID reads the name of a database service by id ("" when it is gone).
func serviceName(ctx context.Context, tx store.Tx, id string) string {
	row, err := tx.Get(ctx, kindDatabaseService, id)
	if err != nil {
		return ""
	}
	return row.FQN
}

// Status is a user or team config's connection status.
type Status struct {
	Status     string `json:"status"`
	Message    string `json:"message,omitempty"`
	UpdatedAt  int64  `json:"updatedAt,omitempty"`
	WorkflowID string `json:"workflowId,omitempty"`
}

// Connection statuses of a user or team config.
const (
	StatusUntested             = "Untested"
	StatusTesting              = "Testing"
	StatusSuccessful           = "Successful"
	StatusFailed               = "Failed"
	StatusRevalidationRequired = "RevalidationRequired"
)

func decodeStatus(raw string) Status {
	var st Status
	if json.Unmarshal([]byte(raw), &st) != nil || st.Status == "" {
		st.Status = StatusUntested
	}
	return st
}

func encodeStatus(st Status) string {
	b, _ := json.Marshal(st)
	return string(b)
}

// stringField reads an optional string member of a body. Errors: EInvalid.
func stringField(body map[string]any, name string) (string, bool, error) {
	v, ok := body[name]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, meridian.Errorf(meridian.EInvalid, "%s must be a string", name)
	}
	return s, true, nil
}

// boolField reads an optional boolean member of a body. Errors: EInvalid.
func boolField(body map[string]any, name string) (bool, bool, error) {
	v, ok := body[name]
	if !ok || v == nil {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, meridian.Errorf(meridian.EInvalid, "%s must be a boolean", name)
	}
	return b, true, nil
}

// checkMembers refuses members of body that are neither allowed nor read-only
// (answered fields a client may send back unchanged; they are ignored). Errors:
// EInvalid naming the member.
func checkMembers(what string, body map[string]any, allowed, readOnly []string) error {
	for k := range body {
		if contains(allowed, k) || contains(readOnly, k) {
			continue
		}
		return meridian.Errorf(meridian.EInvalid, "%s has no member %q (allowed: %s)", what, clip(k), strings.Join(allowed, ", "))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
