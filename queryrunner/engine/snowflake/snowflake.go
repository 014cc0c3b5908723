// Package snowflake is Query Runner's Snowflake engine over Snowflake's SQL API (v2,
// HTTPS and JSON with net/http): it registers the Snowflake service type. The official
// Go driver pulls cloud-storage SDKs and Arrow into the build, which this one-statement
// read path does not need.
//
// Authentication is OAuth (AuthType "oauth": the token is sent as a bearer token;
// Options["tokenType"] may name KEYPAIR_JWT instead); the SQL API takes no password.
// Each statement is sent with MULTI_STATEMENT_COUNT 1 and the statement timeout
// (Snowflake cancels it past it); cancelling ctx posts the statement's cancel request.
// Snowflake has no READ ONLY transaction: besides the classifier, give the config a
// role that can only read. Registered and tested against a fake of the API
// (httptest); not against Snowflake itself.
package snowflake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/queryrunner/sqlcheck"
)

// Engine is the Snowflake engine.
type Engine struct {
	// Client sends the requests; nil means a client with a 2-minute timeout per request.
	Client *http.Client
}

func init() { engine.Register(&Engine{}) }

// Type is "Snowflake".
func (*Engine) Type() string { return "Snowflake" }

// Dialect is "ansi": Snowflake SQL is classified with the strict PostgreSQL grammar.
func (*Engine) Dialect() string { return sqlcheck.ANSI }

// HasRoles is true.
func (*Engine) HasRoles() bool { return true }

// maxBody bounds one API answer (a result partition is at most a few MB compressed).
const maxBody = 256 << 20

func (e *Engine) client() *http.Client {
	if e.Client != nil {
		return e.Client
	}
	return &http.Client{Timeout: 2 * time.Minute}
}

// base is the account URL: https://<host>[:port] (Options["scheme"] "http" only for
// tests against a local fake).
func base(c engine.Conn) (*url.URL, error) {
	if c.Host == "" {
		return nil, engine.Errorf(c, meridian.EInvalid, "the connection has no host (the account URL, <account>.snowflakecomputing.com)")
	}
	scheme := "https"
	if c.Options["scheme"] == "http" {
		scheme = "http"
	}
	host := c.Host
	if c.Port != 0 {
		host = net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	}
	return &url.URL{Scheme: scheme, Host: host}, nil
}

// response is the SQL API's answer to a statement or a partition.
type response struct {
	Code              string `json:"code"`
	Message           string `json:"message"`
	StatementHandle   string `json:"statementHandle"`
	ResultSetMetaData *struct {
		NumRows int64 `json:"numRows"`
		RowType []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"rowType"`
		PartitionInfo []struct {
			RowCount int64 `json:"rowCount"`
		} `json:"partitionInfo"`
	} `json:"resultSetMetaData"`
	Data [][]*string `json:"data"`
}

// call sends one request and decodes the answer. 200 and 202 (still running) are
// answers; anything else is an error.
func (e *Engine) call(ctx context.Context, c engine.Conn, method string, u *url.URL, body any) (response, int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return response{}, 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return response{}, 0, engine.Errorf(c, meridian.EInvalid, "bad request: %v", err)
	}
	if c.AuthType != "oauth" || c.Token == "" {
		return response{}, 0, engine.Errorf(c, meridian.EInvalid, "Snowflake's SQL API takes an OAuth or key-pair token; Basic (username and password) is not supported")
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	tokenType := "OAUTH"
	if c.Options["tokenType"] == "KEYPAIR_JWT" {
		tokenType = "KEYPAIR_JWT"
	}
	req.Header.Set("X-Snowflake-Authorization-Token-Type", tokenType)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "meridian-queryrunner")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return response{}, 0, ctx.Err()
		}
		return response{}, 0, engine.Errorf(c, meridian.EUnavailable, "cannot reach Snowflake at %s", c.Host)
	}
	defer resp.Body.Close()
	var out response
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&out); err != nil && resp.StatusCode < 300 {
		return response{}, resp.StatusCode, engine.Errorf(c, meridian.EUnavailable, "Snowflake answered %d with an unreadable body", resp.StatusCode)
	}
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted:
		return out, resp.StatusCode, nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return out, resp.StatusCode, engine.Errorf(c, meridian.EUnauthorized, "Snowflake refused the credentials: %s", clip(out.Message))
	case resp.StatusCode == http.StatusUnprocessableEntity || resp.StatusCode == http.StatusBadRequest:
		return out, resp.StatusCode, engine.Errorf(c, meridian.EInvalid, "Snowflake refused the statement: %s", clip(out.Message))
	case resp.StatusCode == http.StatusRequestTimeout:
		return out, resp.StatusCode, engine.Errorf(c, meridian.EInvalid, "the statement timed out on Snowflake")
	}
	return out, resp.StatusCode, engine.Errorf(c, meridian.EUnavailable, "Snowflake answered %d: %s", resp.StatusCode, clip(out.Message))
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// Query runs q; see the package comment.
func (e *Engine) Query(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	if _, err := sqlcheck.Check(sqlcheck.ANSI, q); err != nil {
		return engine.Summary{}, err
	}
	return e.run(ctx, c, q, lim, sink)
}

func (e *Engine) run(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	b, err := base(c)
	if err != nil {
		return engine.Summary{}, err
	}
	body := map[string]any{"statement": q, "parameters": map[string]string{"MULTI_STATEMENT_COUNT": "1"}}
	if lim.Timeout > 0 {
		body["timeout"] = max(1, int64(lim.Timeout.Seconds()))
	}
	for k, v := range map[string]string{"database": c.Database, "schema": c.Schema, "warehouse": c.Warehouse, "role": c.Role} {
		if v != "" {
			body[k] = v
		}
	}
	u := *b
	u.Path = "/api/v2/statements"
	u.RawQuery = url.Values{"requestId": {newRequestID()}}.Encode()
	out, status, err := e.call(ctx, c, http.MethodPost, &u, body)
	if err != nil {
		return engine.Summary{}, err
	}
	handle := out.StatementHandle
	// cancel asks Snowflake to stop the statement when ctx ends before it finished.
	done := false
	defer func() {
		if !done && handle != "" {
			cu := *b
			cu.Path = "/api/v2/statements/" + url.PathEscape(handle) + "/cancel"
			cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer stop()
			_, _, _ = e.call(cctx, c, http.MethodPost, &cu, map[string]any{})
		}
	}()
	su := *b
	su.Path = "/api/v2/statements/" + url.PathEscape(handle)
	for status == http.StatusAccepted {
		select {
		case <-ctx.Done():
			return engine.Summary{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		if out, status, err = e.call(ctx, c, http.MethodGet, &su, nil); err != nil {
			return engine.Summary{}, err
		}
	}
	if out.ResultSetMetaData == nil {
		return engine.Summary{}, engine.Errorf(c, meridian.EUnavailable, "Snowflake answered without a result")
	}
	cols := make([]engine.Column, len(out.ResultSetMetaData.RowType))
	for i, rt := range out.ResultSetMetaData.RowType {
		cols[i] = engine.Column{Name: rt.Name, Type: strings.ToUpper(rt.Type)}
	}
	if err := sink.Columns(cols); err != nil {
		return engine.Summary{}, err
	}
	capped := &engine.Capped{Sink: sink, Max: lim.MaxRows}
	parts := max(1, len(out.ResultSetMetaData.PartitionInfo))
	for p := 0; p < parts; p++ {
		if p > 0 {
			pu := su
			pu.RawQuery = url.Values{"partition": {strconv.Itoa(p)}}.Encode()
			if out, _, err = e.call(ctx, c, http.MethodGet, &pu, nil); err != nil {
				return engine.Summary{Rows: capped.Count}, err
			}
		}
		for _, row := range out.Data {
			vals := make([]any, len(row))
			for i, v := range row {
				if v != nil {
					vals[i] = value(cols, i, *v)
				}
			}
			if err := capped.Row(vals); err != nil {
				done = true
				if errors.Is(err, engine.ErrCapReached) {
					return engine.Summary{Rows: capped.Count, Truncated: true}, nil
				}
				return engine.Summary{Rows: capped.Count}, err
			}
		}
	}
	done = true
	return engine.Summary{Rows: capped.Count}, nil
}

// value turns a Snowflake text value into a JSON-ready one by its column type.
func value(cols []engine.Column, i int, v string) any {
	if i < len(cols) {
		switch cols[i].Type {
		case "FIXED":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		case "REAL", "FLOAT", "DOUBLE":
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return engine.JSONValue(f)
			}
		case "BOOLEAN":
			if b, err := strconv.ParseBool(v); err == nil {
				return b
			}
		}
	}
	return v
}

func newRequestID() string { return uuid.NewString() }

// names runs a fixed SHOW statement and returns its "name" column.
func (e *Engine) names(ctx context.Context, c engine.Conn, q string) ([]string, error) {
	var s nameSink
	if _, err := e.run(ctx, c, q, engine.Limits{MaxRows: 10000, Timeout: 30 * time.Second}, &s); err != nil {
		return nil, err
	}
	return s.names, nil
}

type nameSink struct {
	col   int
	names []string
}

func (s *nameSink) Columns(cols []engine.Column) error {
	s.col = 0
	for i, c := range cols {
		if strings.EqualFold(c.Name, "name") {
			s.col = i
		}
	}
	s.names = []string{}
	return nil
}

func (s *nameSink) Row(v []any) error {
	if s.col < len(v) {
		if n, ok := v[s.col].(string); ok {
			s.names = append(s.names, n)
		}
	}
	return nil
}

// Ping runs SELECT 1.
func (e *Engine) Ping(ctx context.Context, c engine.Conn) error {
	_, err := e.run(ctx, c, "SELECT 1", engine.Limits{MaxRows: 1, Timeout: 30 * time.Second}, &nameSink{})
	return err
}

// Roles lists the roles granted to the user.
func (e *Engine) Roles(ctx context.Context, c engine.Conn) ([]string, error) {
	return e.names(ctx, c, "SHOW ROLES")
}

// Databases lists the databases the role can see.
func (e *Engine) Databases(ctx context.Context, c engine.Conn) ([]string, error) {
	return e.names(ctx, c, "SHOW DATABASES")
}

// Schemas lists the schemas of database (the identifier quoted, its quotes doubled).
func (e *Engine) Schemas(ctx context.Context, c engine.Conn, database string) ([]string, error) {
	if database == "" {
		database = c.Database
	}
	if database == "" {
		return nil, engine.Errorf(c, meridian.EInvalid, "database is required")
	}
	return e.names(ctx, c, `SHOW SCHEMAS IN DATABASE "`+strings.ReplaceAll(database, `"`, `""`)+`"`)
}
