// Package trino is Query Runner's Trino engine over trinodb/trino-go-client: it
// registers the Trino service type. Every run opens START TRANSACTION READ ONLY,
// sets the query_max_execution_time session property (the coordinator kills the
// query past it), streams up to the row cap, and on cancellation the client cancels
// the query on the coordinator. The connection's database is the Trino catalog.
// Tested against a fake of the coordinator's client protocol (httptest), not against
// Trino itself.
package trino

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"

	trino "github.com/trinodb/trino-go-client/trino"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/queryrunner/engine/sqldb"
	"github.com/meridian-catalog/meridian/queryrunner/sqlcheck"
)

// Engine is the Trino engine.
type Engine struct{}

func init() { engine.Register(Engine{}) }

// Type is "Trino".
func (Engine) Type() string { return "Trino" }

// Dialect is "ansi": Trino's SQL is classified with the strict PostgreSQL grammar.
func (Engine) Dialect() string { return sqlcheck.ANSI }

// HasRoles is false.
func (Engine) HasRoles() bool { return false }

func open(c engine.Conn, timeout time.Duration) (*sql.DB, error) {
	if c.Host == "" {
		return nil, engine.Errorf(c, meridian.EInvalid, "the connection has no host")
	}
	port := c.Port
	if port == 0 {
		port = 8080
	}
	scheme := "http"
	if c.Options["https"] == "true" || c.Password != "" || c.Token != "" {
		scheme = "https" // Trino accepts credentials only over TLS
	}
	u := url.URL{Scheme: scheme, User: url.User(c.Username), Host: net.JoinHostPort(c.Host, strconv.Itoa(port))}
	if c.AuthType != "oauth" && c.Password != "" {
		u.User = url.UserPassword(c.Username, c.Password)
	}
	cfg := &trino.Config{ServerURI: u.String(), Source: "meridian-queryrunner", Catalog: c.Database, Schema: c.Schema}
	if c.AuthType == "oauth" {
		cfg.AccessToken = c.Token
	}
	if timeout > 0 {
		cfg.SessionProperties = map[string]string{"query_max_execution_time": strconv.FormatInt(max(1, int64(timeout.Seconds())), 10) + "s"}
		cfg.QueryTimeout = &timeout
	}
	conn, err := trino.NewConnector(cfg)
	if err != nil {
		return nil, engine.Errorf(c, meridian.EInvalid, "the connection settings are not valid: %v", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	return db, nil
}

func mapErr(ctx context.Context, c engine.Conn, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var me *meridian.Error
	if errors.As(err, &me) {
		return err
	}
	var qe *trino.ErrQueryFailed
	if errors.As(err, &qe) {
		if qe.StatusCode == 401 || qe.StatusCode == 403 {
			return engine.Errorf(c, meridian.EUnauthorized, "the database refused the credentials of user %q", c.Username)
		}
		return engine.Errorf(c, meridian.EInvalid, "the database refused the statement: %v", qe.Reason)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return engine.Errorf(c, meridian.EUnavailable, "cannot reach the database at %s:%d", c.Host, c.Port)
	}
	return engine.Errorf(c, meridian.EInvalid, "database error: %v", err)
}

// Query runs q in a READ ONLY transaction; see the package comment.
func (Engine) Query(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	db, err := open(c, lim.Timeout)
	if err != nil {
		return engine.Summary{}, err
	}
	defer db.Close()
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tx, err := db.BeginTx(qctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return engine.Summary{}, mapErr(ctx, c, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	return sqldb.Stream(qctx, tx, q, lim, sink, cancel, func(err error) error { return mapErr(ctx, c, err) })
}

func list(ctx context.Context, c engine.Conn, q string) ([]string, error) {
	db, err := open(c, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return sqldb.Strings(ctx, db, q, func(err error) error { return mapErr(ctx, c, err) })
}

// Ping runs SELECT 1.
func (Engine) Ping(ctx context.Context, c engine.Conn) error {
	_, err := list(ctx, c, "SELECT 1")
	return err
}

// Roles is not supported for this type.
func (Engine) Roles(ctx context.Context, c engine.Conn) ([]string, error) {
	return nil, engine.Errorf(c, meridian.EInvalid, "service type Trino has no roles to choose")
}

// Databases lists the catalogs.
func (Engine) Databases(ctx context.Context, c engine.Conn) ([]string, error) {
	return list(ctx, c, "SHOW CATALOGS")
}

// Schemas lists the schemas of the catalog database.
func (Engine) Schemas(ctx context.Context, c engine.Conn, database string) ([]string, error) {
	if database != "" {
		c.Database = database
	}
	return list(ctx, c, "SHOW SCHEMAS")
}
