package sqlcheck

import (
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestReadOnlyStatementsAreAllowed(t *testing.T) {
	tests := []struct {
		dialect, sql string
		kind         Kind
	}{
		{Postgres, "SELECT 1", KindSelect},
		{Postgres, "select * from items where id = 1 -- a comment; DROP TABLE items", KindSelect},
		{Postgres, "SELECT 1 /* ; DELETE FROM items */", KindSelect},
		{Postgres, "SELECT 1;", KindSelect},
		{Postgres, "WITH a AS (SELECT 1 AS x) SELECT x FROM a", KindWith},
		{Postgres, "VALUES (1), (2)", KindSelect},
		{Postgres, "TABLE items", KindSelect},
		{Postgres, "EXPLAIN SELECT * FROM items", KindExplain},
		{Postgres, "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM items", KindExplain},
		{Postgres, "EXPLAIN DELETE FROM items", KindExplain},
		{Postgres, "EXPLAIN (ANALYZE false) DELETE FROM items", KindExplain},
		{Postgres, "SHOW search_path", KindShow},
		{Postgres, "SELECT pg_sleep(1)", KindSelect},
		{Postgres, "SELECT 'nextval' AS name, currval_like FROM t", KindSelect},
		{ANSI, "SELECT a, count(*) FROM t GROUP BY a", KindSelect},
		{ANSI, "SELECT a FROM t ORDER BY a OFFSET 0 ROWS FETCH NEXT 10 ROWS ONLY", KindSelect},
		{MySQL, "SELECT 1", KindSelect},
		{MySQL, "select * from items where id = 1 -- x; drop table items", KindSelect},
		{MySQL, "SELECT SLEEP(1)", KindSelect},
		{MySQL, "SELECT * FROM `items` # comment", KindSelect},
		{MySQL, "WITH a AS (SELECT 1 AS x) SELECT x FROM a", KindWith},
		{MySQL, "SELECT 1 UNION SELECT 2", KindSelect},
		{MySQL, "SHOW TABLES", KindShow},
		{MySQL, "DESCRIBE items", KindShow},
		{MySQL, "EXPLAIN SELECT * FROM items", KindExplain},
		{MySQL, "EXPLAIN DELETE FROM items", KindExplain},
		{MySQL, "EXPLAIN ANALYZE SELECT * FROM items", KindExplain},
		{MySQL, "SELECT IS_FREE_LOCK('x')", KindSelect},
	}
	for _, tc := range tests {
		t.Run(tc.dialect+" "+tc.sql, func(t *testing.T) {
			r, err := Check(tc.dialect, tc.sql)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if r.Kind != tc.kind {
				t.Fatalf("kind %s, want %s", r.Kind, tc.kind)
			}
		})
	}
}

func TestWritesAreRefusedWhateverTheirDisguise(t *testing.T) {
	tests := []struct {
		dialect, sql, reason string
	}{
		{Postgres, "", "empty"},
		{Postgres, "  -- only a comment", "no statement"},
		{Postgres, ";;", "no statement"},
		{MySQL, "\";\\00", "could not be parsed"}, // Vitess's splitter panics on it
		{Postgres, "INSERT INTO items VALUES (1)", "INSERT is not allowed"},
		{Postgres, "UPDATE items SET price = 0", "UPDATE is not allowed"},
		{Postgres, "DELETE FROM items", "DELETE is not allowed"},
		{Postgres, "MERGE INTO items USING t ON true WHEN MATCHED THEN DELETE", "MERGE is not allowed"},
		{Postgres, "DROP TABLE items", "DROP is not allowed"},
		{Postgres, "CREATE TABLE x (a int)", "CREATE TABLE is not allowed"},
		{Postgres, "ALTER TABLE items ADD COLUMN y int", "ALTER TABLE is not allowed"},
		{Postgres, "TRUNCATE items", "TRUNCATE is not allowed"},
		{Postgres, "SELECT 1; DELETE FROM items", "2 statements"},
		{Postgres, "SELECT 1 /* x */; /* y */ DROP TABLE items", "2 statements"},
		{Postgres, "SELECT 1 -- x\n; DROP TABLE items", "2 statements"},
		{Postgres, "WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d", "modifies data"},
		{Postgres, "WITH a AS (SELECT 1), d AS (UPDATE items SET price = 0 RETURNING id) SELECT * FROM a", "modifies data"},
		{Postgres, "SELECT * FROM (WITH d AS (INSERT INTO items VALUES (9) RETURNING *) SELECT * FROM d) s", "modifies data"},
		{Postgres, "SELECT * INTO xcopy FROM items", "INTO creates a table"},
		{Postgres, "CREATE TABLE x AS SELECT * FROM items", "CREATE TABLE AS is not allowed"},
		{Postgres, "COPY items TO '/tmp/items.csv'", "COPY is not allowed"},
		{Postgres, "COPY (SELECT 1) TO STDOUT", "COPY is not allowed"},
		{Postgres, "LOCK TABLE items", "LOCK is not allowed"},
		{Postgres, "SET statement_timeout = 0", "SET is not allowed"},
		{Postgres, "CALL p()", "CALL is not allowed"},
		{Postgres, "DO $$ BEGIN DELETE FROM items; END $$", "DO is not allowed"},
		{Postgres, "BEGIN", "transaction statement"},
		{Postgres, "COMMIT", "transaction statement"},
		{Postgres, "GRANT ALL ON items TO public", "GRANT is not allowed"},
		{Postgres, "VACUUM items", "VACUUM"},
		{Postgres, "SELECT * FROM items FOR UPDATE", "row locks"},
		{Postgres, "SELECT nextval('items_seq')", "nextval"},
		{Postgres, "SELECT public.setval('items_seq', 100)", "setval"},
		{Postgres, "SELECT * FROM nextval('items_seq')", "nextval"},
		{Postgres, "SELECT (SELECT NEXTVAL('items_seq'))", "nextval"},
		{Postgres, "SELECT pg_terminate_backend(1)", "pg_terminate_backend"},
		{Postgres, "SELECT pg_advisory_lock(1)", "pg_advisory_lock"},
		{Postgres, "SELECT lo_import('/etc/passwd')", "lo_import"},
		{Postgres, "SELECT * FROM dblink('host=x', 'DELETE FROM items') AS t(a int)", "dblink"},
		{Postgres, "SELECT query_to_xml('DELETE FROM items', true, true, '')", "query_to_xml"},
		{Postgres, "SELECT set_config('statement_timeout', '0', false)", "set_config"},
		{Postgres, "EXPLAIN ANALYZE DELETE FROM items", "EXPLAIN ANALYZE executes"},
		{Postgres, "EXPLAIN (ANALYZE) UPDATE items SET price = 0", "EXPLAIN ANALYZE executes"},
		{Postgres, "EXPLAIN ANALYZE SELECT nextval('items_seq')", "nextval"},
		{Postgres, "SELEC 1", "does not parse"},
		{Postgres, "PREPARE p AS DELETE FROM items", "PREPARE is not allowed"},
		{Postgres, "DECLARE c CURSOR FOR SELECT 1", "DECLARE CURSOR is not allowed"},
		{Postgres, "REFRESH MATERIALIZED VIEW mv", "REFRESH MATERIALIZED VIEW is not allowed"},
		{Postgres, "NOTIFY ch", "NOTIFY is not allowed"},
		{ANSI, "DELETE FROM t", "DELETE is not allowed"},
		{ANSI, "SELECT SYSTEM$CANCEL_ALL_QUERIES(1)", "system$cancel_all_queries"},
		{ANSI, "SELECT * FROM OPENQUERY(srv, 'DELETE FROM t')", "openquery"},
		{ANSI, "SELECT nextval('s')", "nextval"},
		{MySQL, "", "empty"},
		{MySQL, "INSERT INTO items VALUES (1, 'a', 1)", "INSERT/REPLACE is not allowed"},
		{MySQL, "REPLACE INTO items VALUES (1, 'a', 1)", "INSERT/REPLACE is not allowed"},
		{MySQL, "UPDATE items SET price = 0", "UPDATE is not allowed"},
		{MySQL, "DELETE FROM items", "DELETE is not allowed"},
		{MySQL, "DROP TABLE items", "DDL"},
		{MySQL, "CREATE TABLE x (a int)", "DDL"},
		{MySQL, "TRUNCATE items", "DDL"},
		{MySQL, "SELECT 1; DELETE FROM items", "statements"},
		{MySQL, "SELECT 1 /* x */ ; DROP TABLE items", "statements"},
		{MySQL, "SELECT 1 /*!50000 INTO OUTFILE '/tmp/x' */", "executable comments"},
		{MySQL, "SELECT 1 /*M! ; DROP TABLE items */", "executable comments"},
		{MySQL, "SELECT * FROM items INTO OUTFILE '/tmp/items'", "INTO writes"},
		{MySQL, "SELECT * INTO @a FROM items LIMIT 1", "INTO writes"},
		{MySQL, "SELECT * FROM items FOR UPDATE", "row locks"},
		{MySQL, "SELECT * FROM items LOCK IN SHARE MODE", "row locks"},
		{MySQL, "SELECT GET_LOCK('x', 10)", "locking functions"},
		{MySQL, "SELECT RELEASE_ALL_LOCKS()", "locking functions"},
		{MySQL, "SELECT LOAD_FILE('/etc/passwd')", "LOAD_FILE"},
		{MySQL, "SELECT 1 UNION SELECT load_file('/etc/passwd')", "LOAD_FILE"},
		{MySQL, "SELECT * FROM items WHERE id IN (SELECT GET_LOCK('x', 1))", "locking functions"},
		{MySQL, "SELECT 1 UNION SELECT 2 INTO OUTFILE '/tmp/x'", "INTO writes"},
		{MySQL, "KILL QUERY 1", "not allowed"},
		{MySQL, "GRANT ALL ON *.* TO 'x'@'%'", "does not parse"},
		{MySQL, "LOCK TABLES items READ", "LOCK/UNLOCK TABLES"},
		{MySQL, "SET @@session.max_execution_time = 0", "SET is not allowed"},
		{MySQL, "CALL p()", "CALL is not allowed"},
		{MySQL, "LOAD DATA INFILE '/tmp/x' INTO TABLE items", "is not allowed"},
		{MySQL, "EXPLAIN ANALYZE DELETE FROM items", "EXPLAIN ANALYZE executes"},
		{MySQL, "START TRANSACTION", "transaction statement"},
		{MySQL, "DO SLEEP(1)", "not allowed"},
		{MySQL, "HANDLER items OPEN", "does not parse"},
		{"cobol", "SELECT 1", "no classifier"},
	}
	for _, tc := range tests {
		t.Run(tc.dialect+" "+tc.sql, func(t *testing.T) {
			_, err := Check(tc.dialect, tc.sql)
			if err == nil {
				t.Fatal("allowed")
			}
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("code %s", meridian.ErrorCode(err))
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("message %q does not name %q", err.Error(), tc.reason)
			}
		})
	}
}

func TestInputIsBounded(t *testing.T) {
	long := "SELECT " + strings.Repeat("1+", MaxLength/2) + "1"
	if _, err := Check(Postgres, long); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err %v", err)
	}
	if _, err := Check(MySQL, "SELECT 1\x00; DROP TABLE x"); err == nil {
		t.Fatal("NUL allowed")
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"SELECT 1", "WITH a AS (DELETE FROM t RETURNING *) SELECT 1", "SELECT 1; DROP TABLE t",
		"EXPLAIN ANALYZE SELECT 1", "SHOW TABLES", "SELECT /*!50000 1 */", "SELECT nextval('s')", "select `a` from b"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, sql string, pg bool) {
		dialect := MySQL
		if pg {
			dialect = Postgres
		}
		r, err := Check(dialect, sql)
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("code %s for %q", meridian.ErrorCode(err), sql)
			}
			return
		}
		switch r.Kind {
		case KindSelect, KindWith, KindExplain, KindShow:
		default:
			t.Fatalf("allowed %q as %q", sql, r.Kind)
		}
		if strings.TrimSpace(sql) == "" {
			t.Fatalf("allowed empty %q", sql)
		}
	})
}
