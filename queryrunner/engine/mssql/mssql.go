// Package mssql is Query Runner's SQL Server engine over microsoft/go-mssqldb: it
// registers the Mssql service type. SQL Server has no READ ONLY transaction, so every
// run is a transaction that is always rolled back (DDL is transactional there, so it
// is undone too), opened with ApplicationIntent=ReadOnly (an availability group then
// routes it to a read-only replica), behind the classifier. The statement timeout is
// the context deadline: on expiry or cancellation the driver sends a TDS attention,
// which stops the statement on the server. Registered but not tested here: no SQL
// Server runs on this machine.
package mssql

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"

	gomssql "github.com/microsoft/go-mssqldb"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/queryrunner/engine/sqldb"
	"github.com/meridian-catalog/meridian/queryrunner/sqlcheck"
)

// Engine is the SQL Server engine.
type Engine struct{}

func init() { engine.Register(Engine{}) }

// Type is "Mssql".
func (Engine) Type() string { return "Mssql" }

// Dialect is "ansi": there is no maintained Go T-SQL parser, so statements are
// classified with the strict PostgreSQL grammar (write OFFSET … FETCH, not TOP).
func (Engine) Dialect() string { return sqlcheck.ANSI }

// HasRoles is false.
func (Engine) HasRoles() bool { return false }

// open builds the connector from a URL assembled by net/url (every part escaped).
func open(c engine.Conn) (*sql.DB, error) {
	if c.Host == "" {
		return nil, engine.Errorf(c, meridian.EInvalid, "the connection has no host")
	}
	port := c.Port
	if port == 0 {
		port = 1433
	}
	q := url.Values{}
	if c.Database != "" {
		q.Set("database", c.Database)
	}
	q.Set("ApplicationIntent", "ReadOnly")
	q.Set("app name", "meridian-queryrunner")
	q.Set("dial timeout", "10")
	switch e := c.Options["encrypt"]; e {
	case "", "true", "false", "disable", "strict":
		if e != "" {
			q.Set("encrypt", e)
		}
	default:
		return nil, engine.Errorf(c, meridian.EInvalid, "encrypt %q is not one of true, false, disable, strict", e)
	}
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(c.Username, c.Password),
		Host: net.JoinHostPort(c.Host, strconv.Itoa(port)), RawQuery: q.Encode()}
	var (
		conn *gomssql.Connector
		err  error
	)
	if c.AuthType == "oauth" {
		u.User = nil
		token := c.Token
		conn, err = gomssql.NewConnectorWithAccessTokenProvider(u.String(), func(context.Context) (string, error) { return token, nil })
	} else {
		conn, err = gomssql.NewConnector(u.String())
	}
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
	var se gomssql.Error
	if errors.As(err, &se) {
		switch se.Number {
		case 18456:
			return engine.Errorf(c, meridian.EUnauthorized, "the database refused the credentials of user %q: login failed", c.Username)
		case 4060:
			return engine.Errorf(c, meridian.EInvalid, "database %q cannot be opened", c.Database)
		}
		return engine.Errorf(c, meridian.EInvalid, "the database refused the statement: %s (error %d)", se.Message, se.Number)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return engine.Errorf(c, meridian.EUnavailable, "cannot reach the database at %s:%d", c.Host, c.Port)
	}
	return engine.Errorf(c, meridian.EUnavailable, "database error: %v", err)
}

// Query runs q in a transaction that is rolled back; see the package comment.
func (Engine) Query(ctx context.Context, c engine.Conn, q string, lim engine.Limits, sink engine.Sink) (engine.Summary, error) {
	if _, err := sqlcheck.Check(sqlcheck.ANSI, q); err != nil {
		return engine.Summary{}, err
	}
	db, err := open(c)
	if err != nil {
		return engine.Summary{}, err
	}
	defer db.Close()
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if lim.Timeout > 0 {
		var c2 context.CancelFunc
		qctx, c2 = context.WithTimeout(qctx, lim.Timeout)
		defer c2()
	}
	tx, err := db.BeginTx(qctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return engine.Summary{}, mapErr(ctx, c, err)
	}
	defer tx.Rollback() //nolint:errcheck // always rolled back
	return sqldb.Stream(qctx, tx, q, lim, sink, cancel, func(err error) error { return mapErr(ctx, c, err) })
}

func list(ctx context.Context, c engine.Conn, q string, args ...any) ([]string, error) {
	db, err := open(c)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx2, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return sqldb.Strings(ctx2, db, q, func(err error) error { return mapErr(ctx, c, err) }, args...)
}

// Ping runs SELECT 1.
func (Engine) Ping(ctx context.Context, c engine.Conn) error {
	_, err := list(ctx, c, "SELECT 1")
	return err
}

// Roles is not supported for this type.
func (Engine) Roles(ctx context.Context, c engine.Conn) ([]string, error) {
	return nil, engine.Errorf(c, meridian.EInvalid, "service type Mssql has no roles to choose")
}

// Databases lists the databases the login can access.
func (Engine) Databases(ctx context.Context, c engine.Conn) ([]string, error) {
	return list(ctx, c, "SELECT name FROM sys.databases WHERE HAS_DBACCESS(name) = 1 ORDER BY name")
}

// Schemas lists the schemas of database (the connection's database when empty).
func (Engine) Schemas(ctx context.Context, c engine.Conn, database string) ([]string, error) {
	if database != "" {
		c.Database = database
	}
	return list(ctx, c, "SELECT name FROM sys.schemas ORDER BY name")
}
