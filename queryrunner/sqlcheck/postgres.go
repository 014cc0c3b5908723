package sqlcheck

import (
	"encoding/json"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// maxDepth bounds the walk of a parse tree (the parser bounds nesting itself too).
const maxDepth = 10000

// checkPostgres parses with libpg_query and walks the JSON parse tree.
func checkPostgres(sql, dialect string) (Result, error) {
	tree, err := pg_query.ParseToJSON(sql)
	if err != nil {
		return Result{}, refuse("the statement does not parse as PostgreSQL: %s", parseMessage(err))
	}
	var doc struct {
		Stmts []struct {
			Stmt map[string]json.RawMessage `json:"stmt"`
		} `json:"stmts"`
	}
	d := json.NewDecoder(strings.NewReader(tree))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return Result{}, refuse("the statement could not be read")
	}
	switch len(doc.Stmts) {
	case 0:
		return Result{}, refuse("the query holds no statement (only comments or semicolons)")
	case 1:
	default:
		return Result{}, refuse("the query holds %d statements; send one at a time", len(doc.Stmts))
	}
	var typ string
	var body json.RawMessage
	for k, v := range doc.Stmts[0].Stmt {
		typ, body = k, v
	}
	var node map[string]any
	dd := json.NewDecoder(strings.NewReader(string(body)))
	dd.UseNumber()
	if err := dd.Decode(&node); err != nil {
		return Result{}, refuse("the statement could not be read")
	}
	switch typ {
	case "SelectStmt":
		kind := KindSelect
		if _, ok := node["withClause"]; ok {
			kind = KindWith
		}
		if err := walkPG(node, dialect, false, 0); err != nil {
			return Result{}, err
		}
		return Result{Kind: kind}, nil
	case "ExplainStmt":
		analyze := false
		if opts, ok := node["options"].([]any); ok {
			for _, o := range opts {
				if de, ok := field(o, "DefElem"); ok {
					if name, _ := de["defname"].(string); name == "analyze" {
						analyze = !falseArg(de)
					}
				}
			}
		}
		q, _ := node["query"].(map[string]any)
		_, isSelect := q["SelectStmt"]
		if analyze && !isSelect {
			return Result{}, refuse("EXPLAIN ANALYZE executes its statement, and %s is not a query", statementName(keyOf(q)))
		}
		// Without ANALYZE the statement is only planned: a write may be explained,
		// but side-effect functions are refused all the same.
		if err := walkPG(node, dialect, !analyze, 0); err != nil {
			return Result{}, err
		}
		return Result{Kind: KindExplain}, nil
	case "VariableShowStmt":
		return Result{Kind: KindShow}, nil
	}
	return Result{}, refuse("%s is not allowed", statementName(typ))
}

// falseArg reports whether an EXPLAIN option's argument turns it off (ANALYZE false).
func falseArg(de map[string]any) bool {
	arg, ok := de["arg"].(map[string]any)
	if !ok {
		return false
	}
	if s, ok := field(arg, "String"); ok {
		v, _ := s["sval"].(string)
		v = strings.ToLower(v)
		return v == "false" || v == "off" || v == "0" || v == "no"
	}
	if c, ok := field(arg, "Boolean"); ok {
		b, _ := c["boolval"].(bool)
		return !b
	}
	if c, ok := field(arg, "Integer"); ok {
		return c["ival"] == nil
	}
	return false
}

func field(v any, key string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	f, ok := m[key].(map[string]any)
	return f, ok
}

func keyOf(m map[string]any) string {
	for k := range m {
		return k
	}
	return ""
}

// walkPG refuses data-modifying statements anywhere in the tree (unless writesOK, for
// a plain EXPLAIN), SELECT … INTO, row-locking clauses and denied functions.
func walkPG(v any, dialect string, writesOK bool, depth int) error {
	if depth > maxDepth {
		return refuse("the statement is nested too deeply")
	}
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			switch k {
			case "InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt":
				if !writesOK {
					return refuse("%s inside the query modifies data (data-modifying WITH or subquery)", statementName(k))
				}
			case "intoClause":
				return refuse("SELECT … INTO creates a table")
			case "lockingClause":
				return refuse("FOR UPDATE/SHARE takes row locks")
			case "FuncCall":
				if fc, ok := child.(map[string]any); ok {
					if name := funcName(fc); name != "" && denied(dialect, name) {
						return refuse("function %s has side effects", name)
					}
				}
			}
			if err := walkPG(child, dialect, writesOK, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range x {
			if err := walkPG(child, dialect, writesOK, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// funcName is the last part of a FuncCall's name.
func funcName(fc map[string]any) string {
	parts, _ := fc["funcname"].([]any)
	if len(parts) == 0 {
		return ""
	}
	s, ok := field(parts[len(parts)-1], "String")
	if !ok {
		return ""
	}
	name, _ := s["sval"].(string)
	return name
}

// statementName turns a parse node name into the statement's SQL name.
func statementName(node string) string {
	names := map[string]string{
		"InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE",
		"CreateStmt": "CREATE TABLE", "CreateTableAsStmt": "CREATE TABLE AS", "DropStmt": "DROP",
		"AlterTableStmt": "ALTER TABLE", "TruncateStmt": "TRUNCATE", "CopyStmt": "COPY", "LockStmt": "LOCK",
		"VariableSetStmt": "SET", "CallStmt": "CALL", "DoStmt": "DO", "GrantStmt": "GRANT",
		"GrantRoleStmt": "GRANT", "VacuumStmt": "VACUUM/ANALYZE", "TransactionStmt": "a transaction statement",
		"PrepareStmt": "PREPARE", "ExecuteStmt": "EXECUTE", "DeclareCursorStmt": "DECLARE CURSOR",
		"IndexStmt": "CREATE INDEX", "ViewStmt": "CREATE VIEW", "CreateFunctionStmt": "CREATE FUNCTION",
		"RenameStmt": "ALTER … RENAME", "CommentStmt": "COMMENT", "ListenStmt": "LISTEN", "NotifyStmt": "NOTIFY",
		"RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW", "CreateSchemaStmt": "CREATE SCHEMA",
		"CreatedbStmt": "CREATE DATABASE", "DropdbStmt": "DROP DATABASE", "DiscardStmt": "DISCARD",
		"CheckPointStmt": "CHECKPOINT", "ReindexStmt": "REINDEX", "ClusterStmt": "CLUSTER",
		"CreateRoleStmt": "CREATE ROLE", "AlterRoleStmt": "ALTER ROLE", "DropRoleStmt": "DROP ROLE",
		"VariableShowStmt": "SHOW", "SelectStmt": "SELECT", "ExplainStmt": "EXPLAIN", "FetchStmt": "FETCH",
		"ClosePortalStmt": "CLOSE", "LoadStmt": "LOAD", "CreateExtensionStmt": "CREATE EXTENSION",
		"AlterSystemStmt": "ALTER SYSTEM", "SecLabelStmt": "SECURITY LABEL", "CreateSeqStmt": "CREATE SEQUENCE",
		"AlterSeqStmt": "ALTER SEQUENCE", "CreateTrigStmt": "CREATE TRIGGER", "RuleStmt": "CREATE RULE",
	}
	if n, ok := names[node]; ok {
		return n
	}
	if node == "" {
		return "this statement"
	}
	return strings.TrimSuffix(node, "Stmt") + " statement"
}

// parseMessage is the parser's message without internal details.
func parseMessage(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}
