package queryrunner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// JobTypeTestConnection is the type of the durable jobs test-connection starts.
const JobTypeTestConnection = "queryrunner.testConnection"

// Time bounds of the calls made with a caller's credentials.
const (
	pingTimeout       = 20 * time.Second
	introspectTimeout = 30 * time.Second
	maxNames          = 10000 // roles, databases or schemas answered
)

// testParams are a test-connection job's parameters: which config it tests.
type testParams struct {
	Scope    string `json:"scope"` // "user" or "team"
	ConfigID string `json:"configId"`
}

func scopeNamed(name string) scope {
	if name == LayerTeam {
		return teamScope
	}
	return userScope
}

// TestStarted is the answer of test-connection: the workflow (durable job) that runs
// SELECT 1 with the stored credentials; GET /v1/jobs/{id} follows it.
type TestStarted struct {
	WorkflowID  string `json:"workflowId"`
	JobID       string `json:"jobId"`
	Status      string `json:"status"`
	ServiceName string `json:"serviceName"`
	ConfigID    string `json:"configId"`
}

// TestConnection starts a workflow that runs SELECT 1 with the stored credentials of
// the caller's config of a service (or, with team, of that team's config: the team's
// owner or an admin). The workflow records its outcome as the config's connection
// status when it ends; UpdateConnectionStatus records it again on request. Errors:
// EUnauthorized, EForbidden, EInvalid, ENotFound (no service, admin config or config),
// EConflict (a test of the config is running), EUnavailable (no job service),
// ETooManyRequests.
func (s *Service) TestConnection(ctx context.Context, p *meridian.Principal, service, team string) (TestStarted, error) {
	if err := caller(p); err != nil {
		return TestStarted{}, err
	}
	if s.jobs == nil {
		return TestStarted{}, meridian.Errorf(meridian.EUnavailable, "Query Runner workflows are not available on this server")
	}
	var (
		c  credConfig
		sc = userScope
	)
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		c2, scope2, err := s.ownedConfig(ctx, tx, p, service, team)
		c, sc = c2, scope2
		if err != nil {
			return err
		}
		_, err = s.activeAdmin(ctx, tx, serviceRef{ID: c.ServiceID, Name: c.ServiceName})
		return err
	})
	if err != nil {
		return TestStarted{}, err
	}
	params := testParams{Scope: LayerUser, ConfigID: c.ID}
	if sc == teamScope {
		params.Scope = LayerTeam
	}
	// One test of a config at a time on this server: a caller cannot fill the job
	// queue with tests of their own config.
	if running, busy := s.testing.LoadOrStore(c.ID, ""); busy {
		return TestStarted{}, meridian.Errorf(meridian.EConflict, "A connection test of this config is already running (workflow %v): wait for it to end", running)
	}
	ids := make(chan string, 1)
	id, err := s.jobs.Start(ctx, p, JobTypeTestConnection, params, func(ctx context.Context, _ store.JobProgress) (any, error) {
		defer s.testing.Delete(c.ID)
		var id string
		select {
		case id = <-ids:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return s.runTest(ctx, id, params)
	})
	if err != nil {
		s.testing.Delete(c.ID)
		return TestStarted{}, err
	}
	s.testing.Store(c.ID, id)
	ids <- id
	return TestStarted{WorkflowID: id, JobID: id, Status: jobs.StatusPending, ServiceName: c.ServiceName, ConfigID: c.ID}, nil
}

// ResumeTestConnection runs again a test-connection job a stopped server left behind
// (jobs.Service.Register).
func (s *Service) ResumeTestConnection(ctx context.Context, j jobs.Job, _ store.JobProgress) (any, error) {
	var params testParams
	if err := json.Unmarshal(j.Params, &params); err != nil {
		return nil, meridian.Errorf(meridian.EInternal, "bad test-connection parameters")
	}
	return s.runTest(ctx, j.ID, params)
}

// ownedConfig reads, in tx, the caller's config of a service, or with team that
// team's config (the team's owner or an admin).
func (s *Service) ownedConfig(ctx context.Context, tx store.Tx, p *meridian.Principal, service, team string) (credConfig, scope, error) {
	owner, sc := p.ID, userScope
	if strings.TrimSpace(team) != "" {
		t, err := s.managedTeam(ctx, tx, p, team)
		if err != nil {
			return credConfig{}, sc, err
		}
		owner, sc = t.ID, teamScope
	}
	svc, err := s.service(ctx, tx, p, service)
	if err != nil {
		return credConfig{}, sc, err
	}
	c, err := s.loadCred(ctx, tx, sc, svc, owner)
	return c, sc, err
}

// testResult is a finished test-connection job's result.
type testResult struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// runTest pings the database with a config's credentials and records the outcome on
// the config. A failed ping fails the job with the database's reason, secrets removed.
func (s *Service) runTest(ctx context.Context, jobID string, params testParams) (any, error) {
	sc := scopeNamed(params.Scope)
	var (
		c     credConfig
		admin adminConfig
		svc   serviceRef
	)
	err := s.inTx(ctx, true, func(tx store.Tx) error {
		var err error
		if c, err = s.loadCredByID(ctx, tx, sc, params.ConfigID); err != nil {
			return err
		}
		row, doc, err := s.ents.Load(ctx, tx, meridian.System, store.OpView, kindDatabaseService, store.ByID(c.ServiceID), store.IncludeNonDeleted)
		if err != nil {
			return err
		}
		svc = serviceRef{ID: row.ID, Name: row.FQN, Doc: doc}
		if admin, err = s.activeAdmin(ctx, tx, svc); err != nil {
			return err
		}
		return setStatus(ctx, tx, sc, c.ID, Status{Status: StatusTesting, UpdatedAt: s.millis(), WorkflowID: jobID})
	})
	if err != nil {
		return nil, err
	}
	layer := LayerUser
	if sc == teamScope {
		layer = LayerTeam
	}
	lc := layerConfig{layer: layer, scope: sc, id: c.ID, auth: c.Auth}
	pingErr := func() error {
		if lc.auth.Type == AuthOAuth && s.tokenStale(lc.auth) {
			a, err := s.refresh(ctx, admin, lc)
			if err != nil {
				return err
			}
			lc.auth = a
		}
		conn, err := connFor(svc, admin, lc)
		if err != nil {
			return err
		}
		eng, err := lookupEngine(admin.ServiceType)
		if err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		defer cancel()
		return dbError(eng.Ping(pctx, conn), admin.ServiceName, conn)
	}()
	st := Status{Status: StatusSuccessful, Message: "SELECT 1 succeeded", UpdatedAt: s.millis(), WorkflowID: jobID}
	if pingErr != nil {
		st.Status, st.Message = StatusFailed, meridian.ErrorMessage(pingErr)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := s.inTx(ctx, true, func(tx store.Tx) error { return setStatus(ctx, tx, sc, c.ID, st) }); err != nil {
		return nil, err
	}
	if pingErr != nil {
		return nil, pingErr
	}
	return testResult{Status: st.Status, Message: st.Message}, nil
}

// lookupEngine returns the engine of a service type. Errors: EInvalid.
func lookupEngine(serviceType string) (engine.Engine, error) {
	eng, ok := engine.Lookup(serviceType)
	if !ok {
		return nil, meridian.Errorf(meridian.EInvalid, "serviceType %q has no Query Runner engine on this server", serviceType)
	}
	return eng, nil
}

// dbError turns an engine's error into one safe to answer: the engine's code and
// message with every secret of conn replaced by the mask. A refused login is
// EInvalid (the config's credentials are wrong; 401 would say the caller's token is),
// and an error of no known code is EUnavailable.
func dbError(err error, service string, conn engine.Conn) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return meridian.Errorf(meridian.EUnavailable, "The database of service %s did not answer in time", service)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	code, msg := meridian.ErrorCode(err), err.Error()
	msg = scrub(msg, conn.Password, conn.Token)
	switch code {
	case meridian.EUnauthorized:
		return meridian.Errorf(meridian.EInvalid, "The database of service %s refused the credentials: %s", service, msg)
	case meridian.EInvalid, meridian.EUnavailable, meridian.EForbidden, meridian.ENotFound:
		return meridian.Errorf(code, "%s", msg)
	}
	return meridian.Errorf(meridian.EUnavailable, "The database of service %s cannot be used: %s", service, msg)
}

// scrub replaces every secret in msg with the mask.
func scrub(msg string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 3 {
			msg = strings.ReplaceAll(msg, sec, store.Mask)
		}
	}
	return msg
}

// UpdateConnectionStatus records on the caller's config of a service (or, with team,
// that team's config) the outcome of one of its test-connection workflows: Successful
// when it completed, Failed with its reason when it failed. The status comes from the
// workflow itself, never from the caller. Errors: EUnauthorized, EForbidden, EInvalid
// (no workflowId, or a workflow of another config), ENotFound (no config, or a
// workflow the caller did not start), EConflict (still running), EUnavailable.
func (s *Service) UpdateConnectionStatus(ctx context.Context, p *meridian.Principal, service, team, workflowID string) (map[string]any, error) {
	if err := caller(p); err != nil {
		return nil, err
	}
	if s.jobs == nil {
		return nil, meridian.Errorf(meridian.EUnavailable, "Query Runner workflows are not available on this server")
	}
	if strings.TrimSpace(workflowID) == "" {
		return nil, meridian.Errorf(meridian.EInvalid, "workflowId is required: the id test-connection answered")
	}
	j, err := s.jobs.Get(ctx, p, strings.TrimSpace(workflowID))
	if err != nil {
		return nil, err
	}
	var params testParams
	_ = json.Unmarshal(j.Params, &params)
	var view map[string]any
	err = s.inTx(ctx, true, func(tx store.Tx) error {
		c, sc, err := s.ownedConfig(ctx, tx, p, service, team)
		if err != nil {
			return err
		}
		if j.Type != JobTypeTestConnection || params.ConfigID != c.ID {
			return meridian.Errorf(meridian.EInvalid, "Workflow %s is not a test-connection workflow of this config", j.ID)
		}
		st := Status{UpdatedAt: s.millis(), WorkflowID: j.ID}
		switch j.Status {
		case jobs.StatusCompleted:
			st.Status, st.Message = StatusSuccessful, "SELECT 1 succeeded"
			var r testResult
			if json.Unmarshal(j.Result, &r) == nil && r.Message != "" {
				st.Message = r.Message
			}
		case jobs.StatusFailed:
			st.Status, st.Message = StatusFailed, j.Error
		default:
			return meridian.Errorf(meridian.EConflict, "Workflow %s is still %s: record its status once it ends", j.ID, j.Status)
		}
		if err := setStatus(ctx, tx, sc, c.ID, st); err != nil {
			return err
		}
		c.Status = st
		view = c.view(sc)
		return nil
	})
	return view, err
}

// introspect resolves p's credentials on a service as a query would (p's user config,
// else the admin's when allowed) and calls fn with the engine and connection.
func (s *Service) introspect(ctx context.Context, p *meridian.Principal, service string, fn func(ctx context.Context, eng engine.Engine, c engine.Conn) ([]string, error)) ([]string, error) {
	res, err := s.Resolve(ctx, p, service, "", false)
	if err != nil {
		return nil, err
	}
	eng, err := lookupEngine(res.ConnectionType)
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, introspectTimeout)
	defer cancel()
	names, err := fn(ictx, eng, res.Conn)
	if err != nil {
		return nil, dbError(err, res.ServiceName, res.Conn)
	}
	if names == nil {
		names = []string{}
	}
	if len(names) > maxNames {
		names = names[:maxNames]
	}
	return names, nil
}

// AccessibleRoles lists the roles the caller's credentials can use on a service; only
// engine types with roles have them (EInvalid otherwise). Errors: those of Resolve,
// EInvalid (no roles; the database refused the credentials), EUnavailable.
func (s *Service) AccessibleRoles(ctx context.Context, p *meridian.Principal, service string) ([]string, error) {
	return s.introspect(ctx, p, service, func(ctx context.Context, eng engine.Engine, c engine.Conn) ([]string, error) {
		if !eng.HasRoles() {
			return nil, meridian.Errorf(meridian.EInvalid, "Service type %s has no roles to choose: accessible-roles is for the engines with roles", eng.Type())
		}
		return eng.Roles(ctx, c)
	})
}

// AccessibleDatabases lists the databases the caller's credentials reach on a
// service. Errors: as AccessibleRoles.
func (s *Service) AccessibleDatabases(ctx context.Context, p *meridian.Principal, service string) ([]string, error) {
	return s.introspect(ctx, p, service, func(ctx context.Context, eng engine.Engine, c engine.Conn) ([]string, error) {
		return eng.Databases(ctx, c)
	})
}

// AccessibleSchemas lists the schemas of database (the connection's database when
// empty) that the caller's credentials reach on a service. Errors: as
// AccessibleRoles, EInvalid (a database name longer than 256 bytes).
func (s *Service) AccessibleSchemas(ctx context.Context, p *meridian.Principal, service, database string) ([]string, error) {
	if len(database) > maxNameLen || !utf8.ValidString(database) || strings.ContainsFunc(database, unicode.IsControl) {
		return nil, meridian.Errorf(meridian.EInvalid, "database must be text of at most %d bytes without control characters", maxNameLen)
	}
	return s.introspect(ctx, p, service, func(ctx context.Context, eng engine.Engine, c engine.Conn) ([]string, error) {
		db := strings.TrimSpace(database)
		if db == "" {
			db = c.Database
		}
		return eng.Schemas(ctx, c, db)
	})
}
