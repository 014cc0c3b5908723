// Package mysql is Query Runner's MySQL/MariaDB engine over go-sql-driver/mysql: it
// registers the Mysql service type (MySQL and MariaDB servers). Every run takes its own
// connection, sets the server-side statement timeout (MariaDB max_statement_time,
// MySQL max_execution_time), opens START TRANSACTION READ ONLY, streams rows into the
// sink up to the row cap, and on cancellation sends KILL QUERY for its connection id
// on a second connection so the statement stops on the server.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/queryrunner/sqlcheck"
)

// Engine is the MySQL/MariaDB engine.
type Engine struct{}

func init() { engine.Register(Engine{}) }

// Type is "Mysql".
func (Engine) Type() string { return "Mysql" }

// Dialect is "mysql".
func (Engine) Dialect() string { return "mysql" }

// HasRoles is false: MySQL roles are not chosen per query here.
func (Engine) HasRoles() bool { return false }

const connectTimeout = 10 * time.Second

// open returns a two-connection pool for c: one runs the statement, the other can
// kill it. The configuration is built field by field (no DSN assembled from input).
func open(c engine.Conn) (*sql.DB, error) {
	if c.Host == "" {
		return nil, engine.Errorf(c, meridian.EInvalid, "the connection has no host")
	}
	port := c.Port
	if port == 0 {
		port = 3306
	}
	if port < 1 || port > 65535 {
		return nil, engine.Errorf(c, meridian.EInvalid, "port %d is out of range", port)
	}
	cfg := gomysql.NewConfig()
	cfg.User = c.Username
	cfg.Passwd = c.Password
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(c.Host, strconv.Itoa(port))
	cfg.DBName = c.Database
	cfg.Timeout = connectTimeout
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	cfg.ParseTime = true
	cfg.AllowNativePasswords = true
	switch c.Options["tls"] {
	case "", "false":
	case "true", "skip-verify", "preferred":
		cfg.TLSConfig = c.Options["tls"]
	default:
		return nil, engine.Errorf(c, meridian.EInvalid, "tls %q is not one of false, true, skip-verify, preferred", c.Options["tls"])
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, engine.Errorf(c, meridian.EInvalid, "mysql config: %v", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	return db, nil
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
	var mye *gomysql.MySQLError
	if errors.As(err, &mye) {
		switch mye.Number {
		case 1045, 1698:
			return engine.Errorf(c, meridian.EUnauthorized, "the database refused the credentials of user %q: access denied", c.Username)
		case 1049:
			return engine.Errorf(c, meridian.EInvalid, "database %q does not exist", c.Database)
		case 1792:
			return engine.Errorf(c, meridian.EInvalid, "refused by the read-only transaction: %s", mye.Message)
		case 1317, 1969, 3024:
			return engine.Errorf(c, meridian.EInvalid, "the statement was stopped by the database (statement timeout or stop): %s", mye.Message)
		}
		return engine.Errorf(c, meridian.EInvalid, "the database refused the statement: %s (error %d)", mye.Message, mye.Number)
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, gomysql.ErrInvalidConn) {
		return engine.Errorf(c, meridian.EUnavailable, "cannot reach the database at %s:%d", c.Host, c.Port)
	}
	return engine.Errorf(c, meridian.EUnavailable, "database error: %v", err)
}

// session is one connection prepared for a read-only run.
type session struct {
	db   *sql.DB
	conn *sql.Conn
	id   int64
}

func (s *session) close() {
	if s.conn != nil {
		s.conn.Close()
	}
	s.db.Close()
}

// start connects, learns the connection id and sets the statement timeout.
func start(ctx context.Context, c engine.Conn, timeout time.Duration) (*session, error) {
	db, err := open(c)
	if err != nil {
		return nil, err
	}
	s := &session{db: db}
	s.conn, err = db.Conn(ctx)
	if err != nil {
		s.close()
		return nil, mapErr(ctx, c, err)
	}
	var version string
	if err := s.conn.QueryRowContext(ctx, "SELECT CONNECTION_ID(), VERSION()").Scan(&s.id, &version); err != nil {
		s.close()
		return nil, mapErr(ctx, c, err)
	}
	if timeout > 0 {
		// The values are numbers this engine computed, not input.
		q := "SET SESSION max_execution_time = " + strconv.FormatInt(timeout.Milliseconds(), 10)
		if strings.Contains(strings.ToLower(version), "mariadb") {
			q = "SET SESSION max_statement_time = " + strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64)
		}
		if _, err := s.conn.ExecContext(ctx, q); err != nil {
			s.close()
			return nil, mapErr(ctx, c, err)
		}
	}
	return s, nil
}

// kill stops the session's running statement on the server from a second connection.
func (s *session) kill() {
	kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = s.db.ExecContext(kctx, "KILL QUERY "+strconv.FormatInt(s.id, 10))
}

// Query runs q read-only; see engine.Engine. It classifies q again itself: MySQL
// commits implicitly before DDL, which would escape the READ ONLY transaction, so this
// engine never sends a statement the classifier refuses.
func (Engine) Query(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	if _, err := sqlcheck.Check(sqlcheck.MySQL, q); err != nil {
		return engine.Summary{}, err
	}
	return run(ctx, c, q, lim, sink)
}

// run runs q in a READ ONLY transaction without classifying it.
func run(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	s, err := start(ctx, c, lim.Timeout)
	if err != nil {
		return engine.Summary{}, err
	}
	defer s.close()
	// qctx is cancelled by the caller, by the row cap, or past the timeout; each kills
	// the statement on the server.
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if lim.Timeout > 0 {
		var c2 context.CancelFunc
		qctx, c2 = context.WithTimeout(qctx, lim.Timeout+5*time.Second)
		defer c2()
	}
	stop := context.AfterFunc(qctx, s.kill)
	defer stop()
	tx, err := s.conn.BeginTx(qctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return engine.Summary{}, mapErr(ctx, c, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: never committed
	rows, err := tx.QueryContext(qctx, q)
	if err != nil {
		return engine.Summary{}, mapErr(ctx, c, err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return engine.Summary{}, mapErr(ctx, c, err)
	}
	cols := make([]engine.Column, len(cts))
	for i, ct := range cts {
		cols[i] = engine.Column{Name: ct.Name(), Type: ct.DatabaseTypeName()}
	}
	if err := sink.Columns(cols); err != nil {
		return engine.Summary{}, err
	}
	capped := &engine.Capped{Sink: sink, Max: lim.MaxRows}
	raw := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return engine.Summary{Rows: capped.Count}, mapErr(ctx, c, err)
		}
		out := make([]any, len(cols))
		for i, v := range raw {
			out[i] = value(cols[i].Type, v)
		}
		if err := capped.Row(out); err != nil {
			cancel()
			if errors.Is(err, engine.ErrCapReached) {
				return engine.Summary{Rows: capped.Count, Truncated: true}, nil
			}
			return engine.Summary{Rows: capped.Count}, err
		}
	}
	if err := rows.Err(); err != nil {
		return engine.Summary{Rows: capped.Count}, mapErr(ctx, c, err)
	}
	return engine.Summary{Rows: capped.Count}, nil
}

// value makes a scanned value JSON-ready: integer and floating types from their text.
func value(typ string, v any) any {
	b, ok := v.([]byte)
	if !ok {
		return engine.JSONValue(v)
	}
	s := string(b)
	switch typ {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case "FLOAT", "DOUBLE":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return engine.JSONValue(f)
		}
	}
	return engine.JSONValue(b)
}

// Ping runs SELECT 1.
func (Engine) Ping(ctx context.Context, c engine.Conn) error {
	_, err := list(ctx, c, "SELECT 1")
	return err
}

// Roles is not supported: the type has no roles to pick.
func (Engine) Roles(ctx context.Context, c engine.Conn) ([]string, error) {
	return nil, engine.Errorf(c, meridian.EInvalid, "service type Mysql has no roles to choose")
}

// Databases lists the databases (schemas) the user can see.
func (Engine) Databases(ctx context.Context, c engine.Conn) ([]string, error) {
	return list(ctx, c, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1")
}

// Schemas lists the schemas of database: on MySQL a database is a schema, so it is the
// database itself when the user can see it.
func (Engine) Schemas(ctx context.Context, c engine.Conn, database string) ([]string, error) {
	if database == "" {
		database = c.Database
	}
	return list(ctx, c, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ? ORDER BY 1", database)
}

func list(ctx context.Context, c engine.Conn, q string, args ...any) ([]string, error) {
	s, err := start(ctx, c, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer s.close()
	rows, err := s.conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(ctx, c, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return nil, mapErr(ctx, c, err)
		}
		out = append(out, fmt.Sprint(engine.JSONValue(v)))
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(ctx, c, err)
	}
	return out, nil
}
