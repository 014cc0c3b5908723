package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/queryrunner/sqlcheck"
)

// TriggerRequest is the body of POST …/queryRunner/trigger with its query parameters.
type TriggerRequest struct {
	Query        string          `json:"query"`
	ServiceName  string          `json:"serviceName"`
	WorkflowName string          `json:"workflowName"`
	Transpile    json.RawMessage `json:"transpile,omitempty"`
	TeamID       string          `json:"-"`
	PreferTeam   bool            `json:"-"`
}

// Triggered is the answer of Trigger: the run's id and what the server resolved
// before dispatch (never the secret).
type Triggered struct {
	WorkflowID     string `json:"workflowId"`
	WorkflowName   string `json:"workflowName"`
	Status         string `json:"status"`
	ServiceName    string `json:"serviceName"`
	UserID         string `json:"userId"`
	ConfigID       string `json:"configId"`
	CredentialFrom string `json:"credentialLayer"`
	ConnectionType string `json:"connectionType"`
	AuthType       string `json:"authType"`
	MaxResultSize  int    `json:"maxResultSize"`
	StatementKind  string `json:"statementKind"`
}

// Trigger resolves the caller's credentials, classifies the query for the service's
// engine, records the run and starts it as a durable job; it answers at once.
// Errors: EUnauthorized (no caller), EInvalid (bad input, a refused statement, an
// unsupported transpilation, an unknown engine type), those of the Resolver
// (ENotFound, EForbidden, …), ETooManyRequests (too many jobs wait), EInternal.
func (s *Service) Trigger(ctx context.Context, p *meridian.Principal, req TriggerRequest) (Triggered, error) {
	if p == nil || (p.ID == "" && p.Name == "") {
		return Triggered{}, meridian.Errorf(meridian.EUnauthorized, "Not authenticated")
	}
	if strings.TrimSpace(req.Query) == "" {
		return Triggered{}, meridian.Errorf(meridian.EInvalid, "query is required")
	}
	if len(req.Query) > MaxQueryBytes {
		return Triggered{}, meridian.Errorf(meridian.EInvalid, "query is %d bytes; the limit is %d", len(req.Query), MaxQueryBytes)
	}
	if !utf8.ValidString(req.Query) {
		return Triggered{}, meridian.Errorf(meridian.EInvalid, "query is not valid UTF-8")
	}
	if strings.TrimSpace(req.ServiceName) == "" {
		return Triggered{}, meridian.Errorf(meridian.EInvalid, "serviceName is required")
	}
	if err := checkName("serviceName", req.ServiceName); err != nil {
		return Triggered{}, err
	}
	if req.WorkflowName == "" {
		req.WorkflowName = "query-" + uuid.NewString()
	}
	if err := checkName("workflowName", req.WorkflowName); err != nil {
		return Triggered{}, err
	}
	if req.TeamID != "" {
		if _, err := uuid.Parse(req.TeamID); err != nil {
			return Triggered{}, meridian.Errorf(meridian.EInvalid, "teamId %q is not a UUID", truncate(req.TeamID, 64))
		}
	}
	if s.c.Resolver == nil {
		return Triggered{}, meridian.Errorf(meridian.EUnavailable, "Query Runner credentials are not configured on this server")
	}
	res, err := s.c.Resolver.Resolve(ctx, p, req.ServiceName, req.TeamID, req.PreferTeam)
	if err != nil {
		return Triggered{}, err
	}
	eng, ok := engine.Lookup(res.ConnectionType)
	if !ok {
		return Triggered{}, meridian.Errorf(meridian.EInvalid, "service type %q has no Query Runner engine; engines: %s",
			res.ConnectionType, strings.Join(engine.Types(), ", "))
	}
	if err := checkTranspile(req.Transpile, eng.Dialect(), eng.Type(), req.Query); err != nil {
		return Triggered{}, err
	}
	class, err := sqlcheck.Check(eng.Dialect(), req.Query)
	if err != nil {
		return Triggered{}, err
	}
	maxRows := res.MaxResultSize
	if maxRows <= 0 {
		maxRows = DefaultMaxResults
	}
	maxRows = min(maxRows, s.c.MaxRows)
	userID := res.UserID
	if userID == "" {
		userID = p.ID
	}
	id := uuid.NewString()
	_, err = s.exec(ctx, `INSERT INTO qr_runs (id, workflow_name, owner_id, owner_name, service_name, connection_type,
auth_type, config_id, layer, query_text, max_result_size, status, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		id, req.WorkflowName, ownerID(p), p.Name, req.ServiceName, res.ConnectionType, res.AuthType, res.ConfigID,
		res.Layer, req.Query, maxRows, StatusRunning, s.now())
	if err != nil {
		return Triggered{}, err
	}
	run := &execution{s: s, id: id, eng: eng, conn: res.Conn, query: req.Query,
		lim: engine.Limits{MaxRows: maxRows, Timeout: s.c.StatementTimeout}}
	jobID, err := s.c.Jobs.Start(ctx, p, JobType, map[string]string{"runId": id}, run.do)
	if err != nil {
		s.finishFailed(context.WithoutCancel(ctx), id, err)
		return Triggered{}, err
	}
	if _, err := s.exec(ctx, `UPDATE qr_runs SET job_id = $1 WHERE id = $2`, jobID, id); err != nil {
		s.log.Warn("queryrunner: job id not recorded", "run", id, "err", err)
	}
	return Triggered{WorkflowID: id, WorkflowName: req.WorkflowName, Status: StatusRunning, ServiceName: req.ServiceName,
		UserID: userID, ConfigID: res.ConfigID, CredentialFrom: res.Layer, ConnectionType: res.ConnectionType,
		AuthType: res.AuthType, MaxResultSize: maxRows, StatementKind: string(class.Kind)}, nil
}

// ownerID is who owns a run: the principal's id, or its name for a principal
// without one.
func ownerID(p *meridian.Principal) string {
	if p.ID != "" {
		return p.ID
	}
	return "name:" + p.Name
}

func checkName(field, v string) error {
	if len(v) > MaxNameLength {
		return meridian.Errorf(meridian.EInvalid, "%s is longer than %d bytes", field, MaxNameLength)
	}
	if !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\r\n") {
		return meridian.Errorf(meridian.EInvalid, "%s holds invalid characters", field)
	}
	return nil
}

// transpileRequest is the object form of transpile.
type transpileRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Source and target are accepted as synonyms of from and to.
	Source string `json:"sourceDialect"`
	Target string `json:"targetDialect"`
}

// checkTranspile accepts transpile when it asks for nothing or for no translation:
// absent, null, false, true (run as written when the statement is already in the
// service's dialect), the service's dialect by name, or {from, to} naming the same
// dialect. Any other translation is refused: Meridian does not transpile SQL.
func checkTranspile(raw json.RawMessage, dialect, engType, query string) error {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" || t == "false" {
		return nil
	}
	unsupported := func(from string) error {
		return meridian.Errorf(meridian.EInvalid, "transpile: translating SQL from %s to %s is not supported; send the query in the service's dialect (%s) with transpile false",
			from, dialect, dialect)
	}
	if t == "true" {
		if _, err := sqlcheck.Check(dialect, query); err != nil {
			var me *meridian.Error
			if errors.As(err, &me) && strings.Contains(me.Message, "does not parse") {
				return unsupported("another dialect")
			}
		}
		return nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		if sameDialect(name, dialect, engType) {
			return nil
		}
		return unsupported(truncate(name, 40))
	}
	var tr transpileRequest
	if err := json.Unmarshal(raw, &tr); err != nil {
		return meridian.Errorf(meridian.EInvalid, "transpile must be a boolean, a dialect name or {from, to}")
	}
	from := firstNonEmpty(tr.From, tr.Source)
	to := firstNonEmpty(tr.To, tr.Target, dialect)
	if !sameDialect(to, dialect, engType) {
		return meridian.Errorf(meridian.EInvalid, "transpile: the target dialect %s is not the service's (%s)", truncate(to, 40), dialect)
	}
	if from != "" && !sameDialect(from, dialect, engType) {
		return unsupported(truncate(from, 40))
	}
	return nil
}

func sameDialect(name, dialect, engType string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == strings.ToLower(engType) {
		return true
	}
	switch dialect {
	case sqlcheck.Postgres:
		return n == "postgres" || n == "postgresql" || n == "redshift"
	case sqlcheck.MySQL:
		return n == "mysql" || n == "mariadb"
	}
	return n == dialect
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
