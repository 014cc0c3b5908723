// Package sqlcheck classifies a Query Runner statement with a real SQL parser for its
// dialect and refuses everything that is not one read-only statement.
//
// Allowed: exactly one statement that is SELECT (including VALUES and TABLE), WITH
// whose every part is a query, EXPLAIN (EXPLAIN ANALYZE only of a query, since ANALYZE
// executes it) or SHOW (MySQL also DESCRIBE). Refused, with a message naming the
// reason: empty input, more than one statement, INSERT/UPDATE/DELETE/MERGE, DDL and
// every other statement (COPY, LOCK, SET, CALL, DO, GRANT, VACUUM, PREPARE, …),
// data-modifying CTEs anywhere in the tree, SELECT … INTO (a new table, OUTFILE,
// DUMPFILE or variables), row-locking clauses (FOR UPDATE/SHARE, LOCK IN SHARE MODE),
// MySQL executable comments (/*! … */, /*M! … */, which the server runs but parsers
// treat as comments), and the functions with side effects listed in DeniedFunctions.
//
// Dialects: "postgres" (PostgreSQL, Redshift) uses libpg_query through
// pg_query_go, the server's own grammar; "mysql" (MySQL, MariaDB) uses Vitess's
// sqlparser. Every other dialect ("ansi": Trino, Snowflake, BigQuery, SQL Server)
// has no maintained Go parser, so it is classified with the PostgreSQL grammar, the
// strictest of the two: a statement that grammar cannot parse is refused, never run
// unclassified.
package sqlcheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
)

// MaxLength bounds the statement text (bytes).
const MaxLength = 1 << 20

// Dialects.
const (
	Postgres = "postgres"
	MySQL    = "mysql"
	ANSI     = "ansi"
)

// Kind is what an allowed statement is.
type Kind string

// Kinds of allowed statements.
const (
	KindSelect  Kind = "SELECT"
	KindWith    Kind = "WITH"
	KindExplain Kind = "EXPLAIN"
	KindShow    Kind = "SHOW"
)

// Result is a classified, allowed statement.
type Result struct {
	Kind Kind
	// Dialect is the grammar that parsed it.
	Dialect string
}

// DeniedFunctions are the functions with side effects refused per dialect: they
// change state outside the transaction (sequences, advisory locks, large objects,
// other sessions, server files, remote databases) or run SQL text the classifier
// cannot see. Names are lower case; an entry ending in '*' is a prefix.
var DeniedFunctions = map[string][]string{
	Postgres: {
		"nextval", "setval", "set_config",
		"pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
		"pg_promote", "pg_switch_wal", "pg_create_restore_point", "pg_backup_start", "pg_backup_stop",
		"pg_start_backup", "pg_stop_backup", "pg_wal_replay_pause", "pg_wal_replay_resume",
		"pg_advisory_*", "pg_try_advisory_*",
		"lo_*", "loread", "lowrite",
		"dblink*",
		"pg_read_file", "pg_read_binary_file", "pg_ls_*", "pg_stat_file", "pg_file_*",
		"pg_logical_emit_message", "pg_notify",
		"pg_replication_*", "pg_create_*", "pg_drop_replication_slot", "pg_copy_*_replication_slot",
		"pg_stat_reset*", "pg_import_system_collations", "pg_log_backend_memory_contexts",
		"query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema",
		"txid_current", "pg_current_xact_id",
	},
	// ANSI adds, for the engines classified with the PostgreSQL grammar (Trino,
	// Snowflake, SQL Server), their own: Snowflake's SYSTEM$ functions (cancel
	// queries, abort sessions, …) and SQL Server's ad-hoc remote queries, which run
	// arbitrary SQL elsewhere.
	ANSI: {"system$*", "openquery", "openrowset", "opendatasource", "openxml"},
	MySQL: {
		"get_lock", "release_lock", "release_all_locks", "is_used_lock",
		"load_file", "sys_exec", "sys_eval",
		"master_pos_wait", "source_pos_wait", "wait_for_executed_gtid_set", "wait_until_sql_thread_after_gtids",
	},
}

// Check classifies sql in dialect and returns what it is, or an EInvalid error naming
// why it is refused. Errors: EInvalid.
func Check(dialect, sql string) (r Result, err error) {
	// A parser that panics on some input (Vitess's statement splitter does on a few
	// unterminated quotes) refuses the query instead of taking the caller down.
	defer func() {
		if p := recover(); p != nil {
			r, err = Result{}, refuse("the statement could not be parsed")
		}
	}()
	if len(sql) > MaxLength {
		return Result{}, refuse("the query is %d bytes; the limit is %d", len(sql), MaxLength)
	}
	if strings.TrimSpace(sql) == "" {
		return Result{}, refuse("the query is empty")
	}
	if strings.IndexByte(sql, 0) >= 0 {
		return Result{}, refuse("the query contains a NUL byte")
	}
	switch dialect {
	case Postgres, "":
		r, err := checkPostgres(sql, Postgres)
		r.Dialect = Postgres
		return r, err
	case ANSI:
		r, err := checkPostgres(sql, ANSI)
		r.Dialect = ANSI
		return r, err
	case MySQL:
		r, err := checkMySQL(sql)
		r.Dialect = MySQL
		return r, err
	}
	return Result{}, refuse("dialect %q has no classifier", dialect)
}

func refuse(format string, args ...any) error {
	return &meridian.Error{Code: meridian.EInvalid, Message: "Query refused: " + fmt.Sprintf(format, args...) +
		". Query Runner runs exactly one read-only statement (SELECT, WITH without data-modifying parts, EXPLAIN, SHOW)"}
}

// denied reports whether name (any case, possibly schema-qualified: the last part
// counts) is a denied function of dialect. The ANSI dialect denies PostgreSQL's list
// too, since it is parsed with that grammar.
func denied(dialect, name string) bool {
	name = strings.ToLower(name)
	list := DeniedFunctions[dialect]
	if dialect == ANSI {
		list = append(append([]string(nil), DeniedFunctions[Postgres]...), list...)
	}
	for _, d := range list {
		if p, ok := strings.CutSuffix(d, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == d {
			return true
		}
	}
	return false
}

// ListDenied returns the denied function entries of dialect, sorted.
func ListDenied(dialect string) []string {
	out := append([]string(nil), DeniedFunctions[dialect]...)
	sort.Strings(out)
	return out
}
