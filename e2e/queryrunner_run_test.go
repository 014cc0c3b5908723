package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/queryrunner/dbtest"
)

// Query Runner execution, black box: the binary, a real PostgreSQL and a real MariaDB
// target the test creates and seeds, configs made through the REST API, and queries
// run through /api/v1/platform/apps/queryRunner.

const qrRun = "/api/v1/platform/apps/queryRunner"

// qrService creates a database service and its Query Runner admin config for a
// target, letting queries run with the admin's credentials.
func qrService(t *testing.T, s *server, name, serviceType string, tg dbtest.Target, maxResultSize int) {
	t.Helper()
	s.admin.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices", map[string]any{"name": name, "serviceType": serviceType})
	s.admin.must(http.StatusCreated, "POST", "/api/v1/queryRunner/configs", map[string]any{
		"serviceName": name, "serviceType": serviceType, "enabled": true, "allowAdminCredentials": true,
		"hostPort":      tg.Conn.Host + ":" + strconv.Itoa(tg.Conn.Port),
		"authConfig":    map[string]any{"authType": "Basic", "username": tg.Conn.Username, "password": tg.Conn.Password, "database": tg.Conn.Database},
		"querySettings": map[string]any{"maxResultSize": maxResultSize},
	})
}

// qrWait polls a workflow's results until it is no longer RUNNING.
func qrWait(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	var page map[string]any
	eventually(t, time.Minute, "workflow "+id+" to finish", func() bool {
		page = c.must(http.StatusOK, "GET", qrRun+"/results/"+id+"?size=1", nil)
		return str(page["status"]) != "RUNNING"
	})
	return page
}

func TestQueryRunnerRunsReadOnlyQueries(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	pg := dbtest.Postgres(t)
	my := dbtest.MySQL(t)
	qrService(t, s, "qr_pg", "Postgres", pg, 1000)
	qrService(t, s, "qr_maria", "Mysql", my, 30)
	alice := s.user(t, "qr_alice", "DataConsumer")
	bob := s.user(t, "qr_bob", "DataConsumer")

	t.Run("ATriggeredQueryIsPagedForItsOwnerOnly", func(t *testing.T) {
		tr := alice.c.must(http.StatusOK, "POST", qrRun+"/trigger", map[string]any{
			"query": "SELECT id, name, price FROM items ORDER BY id", "serviceName": "qr_pg", "workflowName": "wf-page"})
		if str(tr["credentialLayer"]) != "admin" || str(tr["connectionType"]) != "Postgres" || str(tr["userId"]) != alice.id ||
			num(tr["maxResultSize"]) != 1000 || str(tr["configId"]) == "" || str(tr["authType"]) != "basic" {
			t.Fatalf("trigger answer %v", tr)
		}
		id := str(tr["workflowId"])
		if st := str(qrWait(t, alice.c, id)["status"]); st != "SUCCESS" {
			t.Fatalf("status %s", st)
		}
		page := alice.c.must(http.StatusOK, "GET", qrRun+"/results/"+id+"?page=2&size=20", nil)
		rows := list(page["rows"])
		if num(page["total"]) != 100 || len(rows) != 20 || len(list(page["columns"])) != 3 || num(list(rows[0])[0]) != 41 {
			t.Fatalf("page %v", page)
		}
		col := object(list(page["columns"])[0])
		if str(col["name"]) != "id" || str(col["type"]) == "" {
			t.Fatalf("column %v", col)
		}
		def := alice.c.must(http.StatusOK, "GET", qrRun+"/results/"+id, nil)
		if num(def["size"]) != 50 || num(def["page"]) != 0 || len(list(def["rows"])) != 50 {
			t.Fatalf("default page %v", def)
		}
		expectError(t, bob.c.do("GET", qrRun+"/results/"+id, nil, nil), http.StatusNotFound, "not found")
		s.admin.must(http.StatusOK, "GET", qrRun+"/results/"+id+"?size=10000", nil)
		expectError(t, alice.c.do("GET", qrRun+"/results/"+id+"?size=10001", nil, nil), http.StatusBadRequest, "size")
		expectError(t, alice.c.do("GET", qrRun+"/results/"+id+"?page=-1", nil, nil), http.StatusBadRequest, "page")
		expectError(t, alice.c.do("POST", qrRun+"/results/"+id, map[string]any{"rows": []any{}}, nil), http.StatusForbidden, "clients cannot")
		expectError(t, s.client(t, "").do("GET", qrRun+"/results/"+id, nil, nil), http.StatusUnauthorized, "")
	})

	t.Run("BadInputIsA400NeverA500", func(t *testing.T) {
		for _, tc := range []struct {
			method, path string
			body         any
			msg          string
		}{
			{"POST", qrRun + "/trigger", "not json", "Invalid request format"},
			{"POST", qrRun + "/trigger", "[]", "JSON object"},
			{"POST", qrRun + "/trigger", "", "body is required"},
			{"POST", qrRun + "/trigger", map[string]any{"query": 42, "serviceName": "qr_pg"}, "query"},
			{"POST", qrRun + "/trigger", map[string]any{"query": "SELECT 1"}, "serviceName is required"},
			{"POST", qrRun + "/trigger", map[string]any{"query": "SELECT 1", "serviceName": "qr_pg", "workflowName": strings.Repeat("w", 300)}, "workflowName"},
			{"POST", qrRun + "/trigger?preferTeam=maybe", map[string]any{"query": "SELECT 1", "serviceName": "qr_pg"}, "preferTeam"},
			{"POST", qrRun + "/trigger?teamId=x", map[string]any{"query": "SELECT 1", "serviceName": "qr_pg"}, "teamId"},
			{"POST", qrRun + "/trigger", map[string]any{"query": "SELECT 1", "serviceName": "qr_pg", "transpile": []any{1}}, "transpile"},
			{"PUT", qrRun + "/stop", "{", "Invalid request format"},
			{"GET", qrRun + "/results/not-a-uuid", nil, "Invalid workflow id"},
			{"GET", qrRun + "/results/00000000-0000-4000-8000-000000000001?size=abc", nil, "size"},
		} {
			expectError(t, alice.c.do(tc.method, tc.path, tc.body, nil), http.StatusBadRequest, tc.msg)
		}
		expectError(t, alice.c.do("POST", qrRun+"/trigger", map[string]any{"query": "SELECT 1", "serviceName": "no_such_service"}, nil), http.StatusNotFound, "")
		expectError(t, alice.c.do("GET", qrRun+"/results/00000000-0000-4000-8000-000000000001", nil, nil), http.StatusNotFound, "not found")
	})

	t.Run("StorageHealthAnswers", func(t *testing.T) {
		if h := alice.c.must(http.StatusOK, "GET", qrRun+"/health/storage", nil); str(h["status"]) != "healthy" {
			t.Fatalf("%v", h)
		}
	})

	t.Run("MaxResultSizeCapsTheRun", func(t *testing.T) {
		tr := alice.c.must(http.StatusOK, "POST", qrRun+"/trigger", map[string]any{"query": "SELECT id FROM items", "serviceName": "qr_maria"})
		page := qrWait(t, alice.c, str(tr["workflowId"]))
		if num(tr["maxResultSize"]) != 30 || num(page["total"]) != 30 || page["truncated"] != true {
			t.Fatalf("trigger %v page %v", tr, page)
		}
	})

	t.Run("WritesAreRefusedAndTheTargetsUnchanged", func(t *testing.T) {
		pgBefore, myBefore := dbtest.ChecksumPG(t, pg.PG), dbtest.ChecksumMySQL(t, my.DB)
		for service, qs := range map[string][]string{
			"qr_pg": {"DELETE FROM items", "SELECT 1; DROP TABLE items", "WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d",
				"SELECT * INTO x FROM items", "COPY items TO STDOUT", "SELECT nextval('items_seq')", "UPDATE items SET price = 0 -- ; SELECT 1"},
			"qr_maria": {"INSERT INTO items VALUES (1000, 'x', 1)", "DROP TABLE items", "SELECT 1 /*!50000 ; DELETE FROM items */",
				"SELECT * FROM items INTO OUTFILE '/tmp/qr_e2e'", "SELECT GET_LOCK('a', 1)"},
		} {
			for _, q := range qs {
				r := alice.c.do("POST", qrRun+"/trigger", map[string]any{"query": q, "serviceName": service}, nil)
				expectError(t, r, http.StatusBadRequest, "Query refused")
			}
		}
		if dbtest.ChecksumPG(t, pg.PG) != pgBefore || dbtest.ChecksumMySQL(t, my.DB) != myBefore {
			t.Fatal("a target changed")
		}
	})

	t.Run("TranspileToAnotherDialectIsRefused", func(t *testing.T) {
		r := alice.c.do("POST", qrRun+"/trigger", map[string]any{"query": "SELECT 1", "serviceName": "qr_pg", "transpile": map[string]any{"from": "snowflake"}}, nil)
		expectError(t, r, http.StatusBadRequest, "not supported")
		alice.c.must(http.StatusOK, "POST", qrRun+"/trigger", map[string]any{"query": "SELECT 1", "serviceName": "qr_pg", "transpile": false})
	})

	t.Run("StopEndsTheStatementOnTheServer", func(t *testing.T) {
		running := func() int {
			var n int
			if err := pg.PG.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(120)' AND datname = current_database()").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		tr := alice.c.must(http.StatusOK, "POST", qrRun+"/trigger", map[string]any{"query": "SELECT pg_sleep(120)", "serviceName": "qr_pg", "workflowName": "wf-sleep"})
		eventually(t, 20*time.Second, "the statement to run", func() bool { return running() > 0 })
		expectError(t, bob.c.do("PUT", qrRun+"/stop", map[string]any{"workflowName": "wf-sleep"}, nil), http.StatusNotFound, "")
		st := alice.c.must(http.StatusOK, "PUT", qrRun+"/stop", map[string]any{"workflowName": "wf-sleep"})
		if str(st["status"]) != "FAILED" {
			t.Fatalf("%v", st)
		}
		eventually(t, 10*time.Second, "the statement to end on the server", func() bool { return running() == 0 })
		page := alice.c.must(http.StatusOK, "GET", qrRun+"/results/"+str(tr["workflowId"]), nil)
		if str(page["status"]) != "FAILED" || !strings.Contains(str(object(page["error"])["message"]), "Stopped") {
			t.Fatalf("%v", page)
		}
		expectError(t, alice.c.do("PUT", qrRun+"/stop", map[string]any{}, nil), http.StatusBadRequest, "workflowName")
	})

	t.Run("AWrongPasswordFailsWithoutTheSecret", func(t *testing.T) {
		user := dbtest.MySQLUser(t, my.DB, my.Conn.Database, "Right-Pa55word")
		s.admin.must(http.StatusOK, "PUT", "/api/v1/queryRunner/configs?service=qr_maria", map[string]any{
			"serviceName": "qr_maria", "serviceType": "Mysql", "enabled": true, "allowAdminCredentials": true,
			"hostPort":   my.Conn.Host + ":" + strconv.Itoa(my.Conn.Port),
			"authConfig": map[string]any{"authType": "Basic", "username": user, "password": "Wrong-Pa55word-E2E", "database": my.Conn.Database},
		})
		tr := alice.c.must(http.StatusOK, "POST", qrRun+"/trigger", map[string]any{"query": "SELECT 1", "serviceName": "qr_maria"})
		page := qrWait(t, alice.c, str(tr["workflowId"]))
		msg := str(object(page["error"])["message"])
		if str(page["status"]) != "FAILED" || !strings.Contains(msg, "refused the credentials") || strings.Contains(msg, "Pa55word") {
			t.Fatalf("%v", page)
		}
		if strings.Contains(s.stderr.String(), "Wrong-Pa55word-E2E") {
			t.Fatal("the password reached the server log")
		}
	})
}
