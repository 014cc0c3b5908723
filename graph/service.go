package graph

import (
	"context"
	"sync"
	"time"

	"github.com/meridian-catalog/meridian"
)

// Concurrency defaults: queries running at once, in all and per caller.
const (
	DefaultMaxConcurrent = 8
	DefaultPerCaller     = 2
)

// Config configures a Service.
type Config struct {
	// Backend holds the projection. Required.
	Backend Backend
	// Sync keeps it in step; its Ready gates queries. Required.
	Sync *Sync
	// MaxConcurrent and PerCaller bound the queries running at once, in all and for one
	// caller; 0 means DefaultMaxConcurrent and DefaultPerCaller.
	MaxConcurrent, PerCaller int
	// Timeout is the time limit of a query when the caller gives none; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Work is the work cap of a query; 0 means DefaultWork.
	Work int64
}

// Service answers read-only, bounded SPARQL over the projection for every
// authenticated caller, and the knowledge-graph tools built on it.
type Service struct {
	cfg    Config
	global chan struct{}

	mu      sync.Mutex
	callers map[string]int
}

// NewService returns a Service over cfg.Backend.
func NewService(cfg Config) *Service {
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.PerCaller <= 0 {
		cfg.PerCaller = DefaultPerCaller
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Work <= 0 {
		cfg.Work = DefaultWork
	}
	return &Service{cfg: cfg, global: make(chan struct{}, cfg.MaxConcurrent), callers: map[string]int{}}
}

// Backend returns the store the service queries.
func (s *Service) Backend() Backend { return s.cfg.Backend }

// Sync returns the service's synchroniser.
func (s *Service) Sync() *Sync { return s.cfg.Sync }

// Request is one SPARQL query.
type Request struct {
	Query string
	// Limit is the most rows (or triples) answered: 0 means the query's own LIMIT, or
	// DefaultRows without one; at most MaxRows.
	Limit int
	// Timeout is the time limit; 0 means the service's; at most MaxTimeout.
	Timeout time.Duration
	// Format is the answer format; "" means JSON.
	Format Format
	// MaxBytes caps the answer; 0 means DefaultOutputBytes.
	MaxBytes int
	// IncludeDeleted shows soft-deleted entities; admins only.
	IncludeDeleted bool
}

// Answer is an encoded query answer.
type Answer struct {
	Form         Form
	Format       Format
	ContentType  string
	Body         []byte
	Completeness Completeness
	// Count is the number of rows or triples the backend answered (before the byte
	// cap).
	Count int
}

// authorize checks that p is an authenticated caller, and an admin when deleted
// entities are asked for. Errors: EUnauthorized, EForbidden.
func authorize(p *meridian.Principal, includeDeleted bool) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if includeDeleted && !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "Only admins may include soft-deleted entities")
	}
	return nil
}

// acquire takes a global and a per-caller slot. Errors: EXECUTION_CAPACITY_EXHAUSTED.
func (s *Service) acquire(p *meridian.Principal) (func(), error) {
	key := p.Name + "\x00" + p.ID
	s.mu.Lock()
	if s.callers[key] >= s.cfg.PerCaller {
		s.mu.Unlock()
		return nil, Errorf(CodeCapacity, "you already run %d queries; wait for one to finish", s.cfg.PerCaller)
	}
	select {
	case s.global <- struct{}{}:
	default:
		s.mu.Unlock()
		return nil, Errorf(CodeCapacity, "%d queries are running; try again shortly", s.cfg.MaxConcurrent)
	}
	s.callers[key]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.callers[key]--; s.callers[key] <= 0 {
			delete(s.callers, key)
		}
		<-s.global
		s.mu.Unlock()
	}, nil
}

// readyWait is how long a query waits for the projection's first build.
const readyWait = 10 * time.Second

// ready waits, at most readyWait, until the projection has been built once. Errors:
// GRAPH_UNAVAILABLE.
func (s *Service) ready(ctx context.Context) error {
	if s.cfg.Sync.Ready() {
		return nil
	}
	t := time.NewTimer(readyWait)
	defer t.Stop()
	select {
	case <-s.cfg.Sync.Built():
		return nil
	case <-ctx.Done():
	case <-t.C:
	}
	return Errorf(CodeUnavailable, "the knowledge graph is being built; try again shortly")
}

// Run checks and evaluates a query for p and returns its result, unencoded. Errors:
// EUnauthorized, EForbidden (IncludeDeleted by a non-admin), QUERY_INVALID,
// QUERY_FORM_NOT_ALLOWED, GRAPH_SELECTION_NOT_ALLOWED, QUERY_LIMIT_EXCEEDED,
// EXECUTION_TIMEOUT, QUERY_WORK_EXCEEDED, EXECUTION_CAPACITY_EXHAUSTED (429),
// GRAPH_UNAVAILABLE (503).
func (s *Service) Run(ctx context.Context, p *meridian.Principal, req Request) (*Result, error) {
	if err := authorize(p, req.IncludeDeleted); err != nil {
		return nil, err
	}
	c, err := Check(req.Query)
	if err != nil {
		return nil, err
	}
	rows := req.Limit
	switch {
	case rows < 0:
		return nil, Errorf(CodeLimitExceeded, "limit must be between 1 and %d", MaxRows)
	case rows > MaxRows:
		return nil, Errorf(CodeLimitExceeded, "limit %d is above the maximum of %d rows", rows, MaxRows)
	case rows == 0 && c.Limit >= 0:
		rows = max(c.Limit, 1)
	case rows == 0:
		rows = DefaultRows
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = s.cfg.Timeout
	}
	if timeout > MaxTimeout {
		return nil, Errorf(CodeLimitExceeded, "timeout %s is above the maximum of %s", timeout, MaxTimeout)
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	release, err := s.acquire(p)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.cfg.Backend.Query(ctx, prologue()+c.Text, Limits{Rows: rows, Timeout: timeout, Work: s.cfg.Work,
		IncludeDeleted: req.IncludeDeleted})
}

// Query runs a query for p and encodes the answer in req.Format under req.MaxBytes.
// Errors: those of Run, and FORMAT_NOT_SUPPORTED.
func (s *Service) Query(ctx context.Context, p *meridian.Principal, req Request) (*Answer, error) {
	if req.Format == "" {
		req.Format = FormatJSON
	}
	if _, err := ParseFormat(string(req.Format)); err != nil {
		return nil, err
	}
	res, err := s.Run(ctx, p, req)
	if err != nil {
		return nil, err
	}
	body, comp, err := Encode(res, req.Format, req.MaxBytes)
	if err != nil {
		return nil, err
	}
	return &Answer{Form: res.Form, Format: req.Format, ContentType: ContentType(req.Format, res.Form), Body: body,
		Completeness: comp, Count: len(res.Rows) + len(res.Triples)}, nil
}
