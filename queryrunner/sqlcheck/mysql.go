package sqlcheck

import (
	"strings"
	"sync"

	"vitess.io/vitess/go/vt/sqlparser"
)

var (
	mysqlOnce   sync.Once
	mysqlParser *sqlparser.Parser
	mysqlErr    error
)

func parser() (*sqlparser.Parser, error) {
	mysqlOnce.Do(func() {
		mysqlParser, mysqlErr = sqlparser.New(sqlparser.Options{MySQLServerVersion: "8.0.40"})
	})
	return mysqlParser, mysqlErr
}

// checkMySQL parses with Vitess's MySQL grammar and walks the tree.
func checkMySQL(sql string) (Result, error) {
	lower := strings.ToLower(sql)
	if strings.Contains(lower, "/*!") || strings.Contains(lower, "/*m!") {
		return Result{}, refuse("executable comments (/*! … */ and /*M! … */) run on the server although parsers skip them")
	}
	p, err := parser()
	if err != nil {
		return Result{}, refuse("the MySQL parser is unavailable")
	}
	pieces, err := p.SplitStatementToPieces(sql)
	if err == nil && len(pieces) > 1 {
		return Result{}, refuse("the query holds %d statements; send one at a time", len(pieces))
	}
	stmt, err := p.Parse(sql)
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "single statement") {
			return Result{}, refuse("the query holds more than one statement; send one at a time")
		}
		if strings.Contains(msg, "empty statement") {
			return Result{}, refuse("the query holds no statement (only comments or semicolons)")
		}
		return Result{}, refuse("the statement does not parse as MySQL: %s", parseMessage(err))
	}
	var kind Kind
	writesOK := false
	switch s := stmt.(type) {
	case *sqlparser.Select:
		kind = KindSelect
		if s.With != nil {
			kind = KindWith
		}
	case *sqlparser.Union:
		kind = KindSelect
		if s.With != nil {
			kind = KindWith
		}
	case *sqlparser.Show, *sqlparser.ExplainTab:
		kind = KindShow
	case *sqlparser.ExplainStmt:
		kind = KindExplain
		_, isSelect := s.Statement.(sqlparser.TableStatement)
		if s.Type == sqlparser.AnalyzeType && !isSelect {
			return Result{}, refuse("EXPLAIN ANALYZE executes its statement, and %s is not a query", mysqlName(s.Statement))
		}
		writesOK = s.Type != sqlparser.AnalyzeType
	default:
		return Result{}, refuse("%s is not allowed", mysqlName(stmt))
	}
	var refused error
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *sqlparser.Insert, *sqlparser.Update, *sqlparser.Delete:
			if !writesOK {
				refused = refuse("%s inside the query modifies data", mysqlName(n.(sqlparser.Statement)))
			}
		case *sqlparser.Select:
			if n.Into != nil {
				refused = refuse("SELECT … INTO writes a file or variables")
			} else if n.Lock != sqlparser.NoLock {
				refused = refuse("FOR UPDATE/SHARE and LOCK IN SHARE MODE take row locks")
			}
		case *sqlparser.Union:
			if n.Into != nil {
				refused = refuse("SELECT … INTO writes a file or variables")
			} else if n.Lock != sqlparser.NoLock {
				refused = refuse("FOR UPDATE/SHARE and LOCK IN SHARE MODE take row locks")
			}
		case *sqlparser.LockingFunc:
			if n.Type != sqlparser.IsFreeLock {
				refused = refuse("locking functions (GET_LOCK, RELEASE_LOCK, …) hold locks beyond the statement")
			}
		case *sqlparser.FuncExpr:
			if name := n.Name.Lowered(); denied(MySQL, name) {
				refused = refuse("function %s has side effects", strings.ToUpper(name))
			}
		}
		return refused == nil, nil
	}, stmt)
	if refused != nil {
		return Result{}, refused
	}
	return Result{Kind: kind}, nil
}

// mysqlName is the SQL name of a statement node.
func mysqlName(s sqlparser.Statement) string {
	switch s.(type) {
	case *sqlparser.Insert:
		return "INSERT/REPLACE"
	case *sqlparser.Update:
		return "UPDATE"
	case *sqlparser.Delete:
		return "DELETE"
	case *sqlparser.CreateTable, *sqlparser.CreateView, *sqlparser.CreateDatabase, *sqlparser.AlterTable,
		*sqlparser.AlterView, *sqlparser.AlterDatabase, *sqlparser.DropTable, *sqlparser.DropView,
		*sqlparser.DropDatabase, *sqlparser.TruncateTable, *sqlparser.RenameTable:
		return "DDL (" + strings.ToUpper(strings.Fields(sqlparser.String(s) + " statement")[0]) + ")"
	case *sqlparser.Set:
		return "SET"
	case *sqlparser.LockTables, *sqlparser.UnlockTables:
		return "LOCK/UNLOCK TABLES"
	case *sqlparser.CallProc:
		return "CALL"
	case *sqlparser.Load:
		return "LOAD DATA"
	case *sqlparser.Begin, *sqlparser.Commit, *sqlparser.Rollback, *sqlparser.Savepoint, *sqlparser.SRollback, *sqlparser.Release:
		return "a transaction statement"
	case *sqlparser.PrepareStmt, *sqlparser.ExecuteStmt, *sqlparser.DeallocateStmt:
		return "PREPARE/EXECUTE"
	case *sqlparser.Use:
		return "USE"
	case *sqlparser.OtherAdmin:
		return "this administrative statement"
	case *sqlparser.VExplainStmt:
		return "VEXPLAIN"
	case nil:
		return "this statement"
	}
	w := strings.Fields(sqlparser.String(s))
	if len(w) == 0 {
		return "this statement"
	}
	return strings.ToUpper(w[0])
}
