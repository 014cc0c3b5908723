// Package postgres is Query Runner's PostgreSQL-protocol engine over pgx v5: it
// registers the Postgres and Redshift service types. Every run takes its own
// connection, opens a READ ONLY transaction with statement_timeout set on the server,
// streams rows into the sink up to the row cap, and on cancellation sends the
// PostgreSQL cancel request so the statement stops on the server.
package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
)

// Engine is a PostgreSQL-protocol engine.
type Engine struct {
	typ      string
	hasRoles bool
	port     int
}

func init() {
	engine.Register(&Engine{typ: "Postgres", port: 5432})
	engine.Register(&Engine{typ: "Redshift", hasRoles: true, port: 5439})
}

// Type is the service type.
func (e *Engine) Type() string { return e.typ }

// Dialect is "postgres": Redshift's SQL is parsed with the PostgreSQL grammar.
func (e *Engine) Dialect() string { return "postgres" }

// HasRoles is true for Redshift.
func (e *Engine) HasRoles() bool { return e.hasRoles }

// connectTimeout bounds connecting and authenticating.
const connectTimeout = 10 * time.Second

// config builds the connection settings from c field by field (no connection string
// is assembled from input). Options: sslmode disable (default), require or
// verify-full.
func (e *Engine) config(c engine.Conn, timeout time.Duration) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, engine.Errorf(c, meridian.EInternal, "postgres config: %v", err)
	}
	if c.Host == "" {
		return nil, engine.Errorf(c, meridian.EInvalid, "the connection has no host")
	}
	port := c.Port
	if port == 0 {
		port = e.port
	}
	if port < 1 || port > 65535 {
		return nil, engine.Errorf(c, meridian.EInvalid, "port %d is out of range", port)
	}
	cfg.Host = c.Host
	cfg.Port = uint16(port)
	cfg.User = c.Username
	cfg.Password = c.Password
	if c.AuthType == "oauth" && c.Token != "" {
		cfg.Password = c.Token
	}
	cfg.Database = c.Database
	if cfg.Database == "" {
		cfg.Database = "postgres"
	}
	cfg.Fallbacks = nil
	cfg.ConnectTimeout = connectTimeout
	switch c.Options["sslmode"] {
	case "", "disable":
		cfg.TLSConfig = nil
	case "require":
		cfg.TLSConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // libpq's sslmode=require does not verify
	case "verify-full":
		cfg.TLSConfig = &tls.Config{ServerName: c.Host}
	default:
		return nil, engine.Errorf(c, meridian.EInvalid, "sslmode %q is not one of disable, require, verify-full", c.Options["sslmode"])
	}
	cfg.RuntimeParams = map[string]string{
		"application_name":              "meridian-queryrunner",
		"default_transaction_read_only": "on",
	}
	if timeout > 0 {
		cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	// Cancelling ctx sends the cancel request: the statement stops on the server, not
	// only on this side of the socket.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, CancelRequestDelay: 0, DeadlineDelay: 2 * time.Second}
	}
	return cfg, nil
}

func (e *Engine) connect(ctx context.Context, c engine.Conn, timeout time.Duration) (*pgx.Conn, error) {
	cfg, err := e.config(c, timeout)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, mapErr(ctx, c, err)
	}
	return conn, nil
}

// mapErr turns a driver error into a meridian error whose message never holds a secret.
func mapErr(ctx context.Context, c engine.Conn, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var me *meridian.Error
	if errors.As(err, &me) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return engine.Errorf(c, meridian.EUnauthorized, "the database refused the credentials of user %q: %s", c.Username, pe.Message)
		case pe.Code == "57014":
			return engine.Errorf(c, meridian.EInvalid, "the statement was cancelled by the database (statement timeout or stop): %s", pe.Message)
		case pe.Code == "3D000":
			return engine.Errorf(c, meridian.EInvalid, "database %q does not exist", c.Database)
		case pe.Code == "25006":
			return engine.Errorf(c, meridian.EInvalid, "refused by the read-only transaction: %s", pe.Message)
		case len(pe.Code) == 5 && pe.Code[:2] == "08":
			return engine.Errorf(c, meridian.EUnavailable, "connection failure: %s", pe.Message)
		}
		return engine.Errorf(c, meridian.EInvalid, "the database refused the statement: %s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ne) || errors.As(err, &ce) {
		return engine.Errorf(c, meridian.EUnavailable, "cannot reach the database at %s:%d", c.Host, c.Port)
	}
	return engine.Errorf(c, meridian.EUnavailable, "database error: %v", err)
}

// Query runs sql read-only; see engine.Engine.
func (e *Engine) Query(ctx context.Context, c engine.Conn, sql string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	conn, err := e.connect(ctx, c, lim.Timeout)
	if err != nil {
		return engine.Summary{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// qctx is cancelled when the row cap is reached, which sends the cancel request so
	// the server stops producing rows nobody reads.
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if lim.Timeout > 0 {
		var c2 context.CancelFunc
		qctx, c2 = context.WithTimeout(qctx, lim.Timeout+5*time.Second)
		defer c2()
	}
	tx, err := conn.BeginTx(qctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return engine.Summary{}, mapErr(ctx, c, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only: never committed
	if err := e.sessionSettings(qctx, tx, c); err != nil {
		return engine.Summary{}, err
	}
	rows, err := tx.Query(qctx, sql)
	if err != nil {
		return engine.Summary{}, mapErr(ctx, c, err)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	cols := make([]engine.Column, len(fds))
	tm := conn.TypeMap()
	for i, fd := range fds {
		typ := "unknown"
		if t, ok := tm.TypeForOID(fd.DataTypeOID); ok {
			typ = t.Name
		} else {
			typ = "oid:" + strconv.FormatUint(uint64(fd.DataTypeOID), 10)
		}
		cols[i] = engine.Column{Name: fd.Name, Type: typ}
	}
	if err := sink.Columns(cols); err != nil {
		return engine.Summary{}, err
	}
	capped := &engine.Capped{Sink: sink, Max: lim.MaxRows}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return engine.Summary{Rows: capped.Count}, mapErr(ctx, c, err)
		}
		out := make([]any, len(vals))
		for i, v := range vals {
			out[i] = pgValue(v)
		}
		if err := capped.Row(out); err != nil {
			if errors.Is(err, engine.ErrCapReached) {
				cancel()
				return engine.Summary{Rows: capped.Count, Truncated: true}, nil
			}
			cancel()
			return engine.Summary{Rows: capped.Count}, err
		}
	}
	if err := rows.Err(); err != nil {
		return engine.Summary{Rows: capped.Count}, mapErr(ctx, c, err)
	}
	return engine.Summary{Rows: capped.Count}, nil
}

// sessionSettings applies the connection's role and schema inside the transaction,
// with identifiers quoted by the driver.
func (e *Engine) sessionSettings(ctx context.Context, tx pgx.Tx, c engine.Conn) error {
	if c.Role != "" {
		if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+pgx.Identifier{c.Role}.Sanitize()); err != nil {
			return mapErr(ctx, c, err)
		}
	}
	if c.Schema != "" {
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+pgx.Identifier{c.Schema}.Sanitize()); err != nil {
			return mapErr(ctx, c, err)
		}
	}
	return nil
}

// pgValue makes a pgx value JSON-ready, using the text form of the types pgx returns as
// structs (numeric, intervals, ranges, …).
func pgValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int64, int32, int16, int8, int, float64, float32, time.Time, []byte:
		return engine.JSONValue(x)
	case [16]byte: // uuid
		return formatUUID(x)
	case interface{ Value() (any, error) }:
		if dv, err := x.Value(); err == nil {
			return engine.JSONValue(dv)
		}
	}
	return engine.JSONValue(v)
}

func formatUUID(b [16]byte) string {
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexd[c>>4], hexd[c&15])
	}
	return string(out)
}

// Ping runs SELECT 1.
func (e *Engine) Ping(ctx context.Context, c engine.Conn) error {
	return e.list(ctx, c, 30*time.Second, "SELECT 1", nil)
}

// Roles lists the roles the user is a member of (Redshift: the roles granted to it).
func (e *Engine) Roles(ctx context.Context, c engine.Conn) ([]string, error) {
	var out []string
	q := "SELECT rolname FROM pg_roles WHERE pg_has_role(current_user, oid, 'MEMBER') ORDER BY 1"
	if e.typ == "Redshift" {
		q = "SELECT role_name FROM svv_user_grants WHERE user_name = current_user ORDER BY 1"
	}
	err := e.list(ctx, c, 30*time.Second, q, &out)
	return out, err
}

// Databases lists the databases the user may connect to.
func (e *Engine) Databases(ctx context.Context, c engine.Conn) ([]string, error) {
	var out []string
	err := e.list(ctx, c, 30*time.Second, "SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate AND has_database_privilege(datname, 'CONNECT') ORDER BY 1", &out)
	return out, err
}

// Schemas lists the schemas of database the user may use.
func (e *Engine) Schemas(ctx context.Context, c engine.Conn, database string) ([]string, error) {
	if database != "" {
		c.Database = database
	}
	var out []string
	err := e.list(ctx, c, 30*time.Second, "SELECT nspname FROM pg_namespace WHERE has_schema_privilege(nspname, 'USAGE') AND nspname NOT LIKE 'pg\\_toast%' AND nspname NOT LIKE 'pg\\_temp%' ORDER BY 1", &out)
	return out, err
}

// list runs a fixed query read-only and collects its first column as text.
func (e *Engine) list(ctx context.Context, c engine.Conn, timeout time.Duration, q string, out *[]string) error {
	conn, err := e.connect(ctx, c, timeout)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return mapErr(ctx, c, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	rows, err := tx.Query(ctx, q)
	if err != nil {
		return mapErr(ctx, c, err)
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return mapErr(ctx, c, err)
		}
		if out != nil && len(vals) > 0 {
			*out = append(*out, toString(vals[0]))
		}
	}
	if err := rows.Err(); err != nil {
		return mapErr(ctx, c, err)
	}
	if out != nil && *out == nil {
		*out = []string{}
	}
	return nil
}

func toString(v any) string {
	if s, ok := engine.JSONValue(v).(string); ok {
		return s
	}
	return fmt.Sprint(engine.JSONValue(v))
}
