// Package bigquery is Query Runner's BigQuery engine over the BigQuery REST API (v2,
// HTTPS and JSON with net/http): it registers the BigQuery service type. The official
// Go client pulls gRPC, the Google API client and Arrow into the build, which this
// one-statement read path does not need.
//
// Authentication is OAuth (AuthType "oauth": the access token is sent as a bearer
// token); the connection's database is the project and its dataset the default
// dataset. Each query runs as a job with jobTimeoutMs (BigQuery cancels it past it);
// cancelling ctx posts jobs.cancel. BigQuery has no READ ONLY transaction: besides the
// classifier, give the config an identity that can only read (BigQuery Data Viewer and
// Job User). Statements are classified with the MySQL grammar, which reads BigQuery's
// backquoted `project.dataset.table` names. Registered and tested against a fake of
// the API (httptest); not against BigQuery itself.
package bigquery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/queryrunner/sqlcheck"
)

// Engine is the BigQuery engine.
type Engine struct {
	// Client sends the requests; nil means a client with a 2-minute timeout per request.
	Client *http.Client
}

func init() { engine.Register(&Engine{}) }

// Type is "BigQuery".
func (*Engine) Type() string { return "BigQuery" }

// Dialect is "mysql" (see the package comment).
func (*Engine) Dialect() string { return sqlcheck.MySQL }

// HasRoles is false.
func (*Engine) HasRoles() bool { return false }

const maxBody = 256 << 20

func (e *Engine) client() *http.Client {
	if e.Client != nil {
		return e.Client
	}
	return &http.Client{Timeout: 2 * time.Minute}
}

// endpoint is the API root: https://bigquery.googleapis.com, or the connection's host
// (Options["scheme"] "http" only for tests against a local fake).
func endpoint(c engine.Conn) *url.URL {
	host := "bigquery.googleapis.com"
	if c.Host != "" {
		host = c.Host
		if c.Port != 0 {
			host += ":" + strconv.Itoa(c.Port)
		}
	}
	scheme := "https"
	if c.Options["scheme"] == "http" {
		scheme = "http"
	}
	return &url.URL{Scheme: scheme, Host: host}
}

type field struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type queryResponse struct {
	JobComplete  bool `json:"jobComplete"`
	JobReference struct {
		ProjectID string `json:"projectId"`
		JobID     string `json:"jobId"`
		Location  string `json:"location"`
	} `json:"jobReference"`
	Schema *struct {
		Fields []field `json:"fields"`
	} `json:"schema"`
	Rows []struct {
		F []struct {
			V any `json:"v"`
		} `json:"f"`
	} `json:"rows"`
	PageToken string `json:"pageToken"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (e *Engine) call(ctx context.Context, c engine.Conn, method string, u *url.URL, body, out any) error {
	if c.AuthType != "oauth" || c.Token == "" {
		return engine.Errorf(c, meridian.EInvalid, "BigQuery takes an OAuth access token; Basic (username and password) is not supported")
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return engine.Errorf(c, meridian.EInvalid, "bad request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("User-Agent", "meridian-queryrunner")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return engine.Errorf(c, meridian.EUnavailable, "cannot reach BigQuery at %s", u.Host)
	}
	defer resp.Body.Close()
	var env struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return engine.Errorf(c, meridian.EUnavailable, "BigQuery's answer could not be read")
	}
	_ = json.Unmarshal(raw, &env)
	msg := ""
	if env.Error != nil {
		msg = env.Error.Message
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				return engine.Errorf(c, meridian.EUnavailable, "BigQuery answered an unreadable body")
			}
		}
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return engine.Errorf(c, meridian.EUnauthorized, "BigQuery refused the credentials: %s", msg)
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound:
		return engine.Errorf(c, meridian.EInvalid, "BigQuery refused the statement: %s", msg)
	}
	return engine.Errorf(c, meridian.EUnavailable, "BigQuery answered %d: %s", resp.StatusCode, msg)
}

// Query runs q as a query job; see the package comment.
func (e *Engine) Query(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	if _, err := sqlcheck.Check(sqlcheck.MySQL, q); err != nil {
		return engine.Summary{}, err
	}
	return e.run(ctx, c, q, lim, sink)
}

func (e *Engine) run(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	if c.Database == "" {
		return engine.Summary{}, engine.Errorf(c, meridian.EInvalid, "the connection has no project (database)")
	}
	root := endpoint(c)
	project := url.PathEscape(c.Database)
	body := map[string]any{"query": q, "useLegacySql": false, "timeoutMs": 10000, "requestId": uuid.NewString(),
		"maxResults": min(max(lim.MaxRows, 1), 10000)}
	if lim.Timeout > 0 {
		body["jobTimeoutMs"] = strconv.FormatInt(lim.Timeout.Milliseconds(), 10)
	}
	if c.Dataset != "" {
		body["defaultDataset"] = map[string]string{"projectId": c.Database, "datasetId": c.Dataset}
	}
	u := *root
	u.Path = "/bigquery/v2/projects/" + project + "/queries"
	var out queryResponse
	if err := e.call(ctx, c, http.MethodPost, &u, body, &out); err != nil {
		return engine.Summary{}, err
	}
	job := out.JobReference
	done := false
	defer func() {
		if !done && job.JobID != "" {
			cu := *root
			cu.Path = "/bigquery/v2/projects/" + project + "/jobs/" + url.PathEscape(job.JobID) + "/cancel"
			cu.RawQuery = url.Values{"location": {job.Location}}.Encode()
			cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer stop()
			_ = e.call(cctx, c, http.MethodPost, &cu, map[string]any{}, nil)
		}
	}()
	get := func(pageToken string) error {
		gu := *root
		gu.Path = "/bigquery/v2/projects/" + project + "/queries/" + url.PathEscape(job.JobID)
		v := url.Values{"location": {job.Location}, "timeoutMs": {"10000"}, "maxResults": {"10000"}}
		if pageToken != "" {
			v.Set("pageToken", pageToken)
		}
		gu.RawQuery = v.Encode()
		out = queryResponse{}
		return e.call(ctx, c, http.MethodGet, &gu, nil, &out)
	}
	for !out.JobComplete {
		if ctx.Err() != nil {
			return engine.Summary{}, ctx.Err()
		}
		if err := get(""); err != nil {
			return engine.Summary{}, err
		}
	}
	var cols []engine.Column
	if out.Schema != nil {
		for _, f := range out.Schema.Fields {
			cols = append(cols, engine.Column{Name: f.Name, Type: f.Type})
		}
	}
	if err := sink.Columns(cols); err != nil {
		return engine.Summary{}, err
	}
	capped := &engine.Capped{Sink: sink, Max: lim.MaxRows}
	for {
		for _, r := range out.Rows {
			vals := make([]any, len(r.F))
			for i, f := range r.F {
				vals[i] = value(cols, i, f.V)
			}
			if err := capped.Row(vals); err != nil {
				done = true
				if errors.Is(err, engine.ErrCapReached) {
					return engine.Summary{Rows: capped.Count, Truncated: true}, nil
				}
				return engine.Summary{Rows: capped.Count}, err
			}
		}
		if out.PageToken == "" {
			break
		}
		if err := get(out.PageToken); err != nil {
			return engine.Summary{Rows: capped.Count}, err
		}
	}
	done = true
	return engine.Summary{Rows: capped.Count}, nil
}

// value turns a BigQuery cell (strings for scalars) into a JSON-ready value.
func value(cols []engine.Column, i int, v any) any {
	s, ok := v.(string)
	if !ok || i >= len(cols) {
		if v == nil {
			return nil
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch cols[i].Type {
	case "INTEGER", "INT64":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case "FLOAT", "FLOAT64":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return engine.JSONValue(f)
		}
	case "BOOLEAN", "BOOL":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return s
}

// Ping runs SELECT 1.
func (e *Engine) Ping(ctx context.Context, c engine.Conn) error {
	_, err := e.run(ctx, c, "SELECT 1", engine.Limits{MaxRows: 1, Timeout: 30 * time.Second}, discard{})
	return err
}

type discard struct{}

func (discard) Columns([]engine.Column) error { return nil }
func (discard) Row([]any) error               { return nil }

// Roles is not supported for this type.
func (e *Engine) Roles(ctx context.Context, c engine.Conn) ([]string, error) {
	return nil, engine.Errorf(c, meridian.EInvalid, "service type BigQuery has no roles to choose")
}

// Databases lists the projects the token can see.
func (e *Engine) Databases(ctx context.Context, c engine.Conn) ([]string, error) {
	u := *endpoint(c)
	u.Path = "/bigquery/v2/projects"
	u.RawQuery = "maxResults=1000"
	var out struct {
		Projects []struct {
			ID string `json:"id"`
		} `json:"projects"`
	}
	if err := e.call(ctx, c, http.MethodGet, &u, nil, &out); err != nil {
		return nil, err
	}
	names := []string{}
	for _, p := range out.Projects {
		names = append(names, p.ID)
	}
	return names, nil
}

// Schemas lists the datasets of project database.
func (e *Engine) Schemas(ctx context.Context, c engine.Conn, database string) ([]string, error) {
	if database == "" {
		database = c.Database
	}
	u := *endpoint(c)
	u.Path = "/bigquery/v2/projects/" + url.PathEscape(database) + "/datasets"
	u.RawQuery = "maxResults=1000"
	var out struct {
		Datasets []struct {
			Ref struct {
				DatasetID string `json:"datasetId"`
			} `json:"datasetReference"`
		} `json:"datasets"`
	}
	if err := e.call(ctx, c, http.MethodGet, &u, nil, &out); err != nil {
		return nil, err
	}
	names := []string{}
	for _, d := range out.Datasets {
		names = append(names, d.Ref.DatasetID)
	}
	return names, nil
}
