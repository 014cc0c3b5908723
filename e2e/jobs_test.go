package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// bigTree creates database service svc with one database, schemas schemas and, in each,
// tables tables of 20 columns, with 4 concurrent writers.
func bigTree(t *testing.T, s *server, svc string, schemas, tables int) {
	t.Helper()
	s.admin.must(201, "POST", "/api/v1/services/databaseServices", map[string]any{"name": svc, "serviceType": "Mysql"})
	s.admin.must(201, "POST", "/api/v1/databases", map[string]any{"name": "db", "service": svc})
	cols := make([]any, 20)
	for i := range cols {
		cols[i] = map[string]any{"name": fmt.Sprintf("c%02d", i), "dataType": "VARCHAR", "dataLength": 64,
			"description": "column " + fmt.Sprint(i)}
	}
	work := make(chan [2]int)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.client(t, s.adminToken)
			for job := range work {
				c.must(201, "POST", "/api/v1/tables", map[string]any{"name": fmt.Sprintf("t%04d", job[1]),
					"databaseSchema": fmt.Sprintf("%s.db.s%02d", svc, job[0]), "columns": cols})
			}
		}()
	}
	for i := 0; i < schemas; i++ {
		s.admin.must(201, "POST", "/api/v1/databaseSchemas", map[string]any{"name": fmt.Sprintf("s%02d", i), "database": svc + ".db"})
		for j := 0; j < tables; j++ {
			work <- [2]int{i, j}
		}
	}
	close(work)
	wg.Wait()
}

// job GETs a job and returns its status and body.
func job(c *client, id string) (string, map[string]any) {
	c.t.Helper()
	j := c.must(http.StatusOK, "GET", "/api/v1/jobs/"+id, nil)
	st, _ := j["status"].(string)
	return st, j
}

// TestAsyncDeleteInterruptedByKill9 starts a recursive delete of a large database as an
// asynchronous job, kills the server with SIGKILL while the job runs, restarts it, and
// checks that the job is settled from what committed: failed with a reason and nothing
// deleted, or completed with the database deleted. The job is shown to its starter and
// admins only.
func TestAsyncDeleteInterruptedByKill9(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	bigTree(t, s, "big", 10, 80)
	dbID, _ := s.admin.must(200, "GET", "/api/v1/databases/name/big.db", nil)["id"].(string)

	started := time.Now()
	accepted := s.admin.must(http.StatusAccepted, "DELETE", "/api/v1/databases/async/"+dbID+"?recursive=true", nil)
	id, _ := accepted["jobId"].(string)
	if id == "" || accepted["entityName"] != "db" || accepted["recursive"] != true {
		t.Fatalf("async delete answered %v", accepted)
	}
	for {
		st, j := job(s.admin, id)
		if st == "running" {
			break
		}
		if st != "pending" || time.Since(started) > 20*time.Second {
			t.Fatalf("the job never ran while the server was up: %v", j)
		}
		time.Sleep(2 * time.Millisecond)
	}
	s.crash() // kill -9 in the middle of the delete
	t.Logf("killed %v after the delete started", time.Since(started).Round(time.Millisecond))

	r := s.restart(t)
	deadline := time.Now().Add(30 * time.Second)
	var final map[string]any
	for {
		st, j := job(r.admin, id)
		if st == "completed" || st == "failed" {
			final = j
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the interrupted job is still %s after the restart: %v", st, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if final["attempts"] != float64(2) {
		t.Fatalf("the job was not recovered after the restart (it finished before the kill?): %v", final)
	}
	table := r.admin.do("GET", "/api/v1/tables/name/big.db.s09.t0079?include=all", nil, nil)
	switch final["status"] {
	case "failed":
		e, _ := final["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if e["code"] != float64(500) || !strings.Contains(msg, "restart") || !strings.Contains(msg, "nothing was deleted") {
			t.Fatalf("failed job error = %v, want a 500 naming the restart", final["error"])
		}
		if db := r.admin.must(200, "GET", "/api/v1/databases/"+dbID, nil); db["deleted"] == true {
			t.Fatalf("the job says nothing was deleted, but the database is: %v", db)
		}
		if table.status != 200 || table.obj(t)["deleted"] == true {
			t.Fatalf("the job says nothing was deleted, but a table is: %s", table)
		}
		t.Logf("the delete was interrupted and rolled back: %s", msg)
	case "completed":
		if db := r.admin.must(200, "GET", "/api/v1/databases/"+dbID+"?include=deleted", nil); db["deleted"] != true {
			t.Fatalf("the job completed, but the database is not deleted: %v", db)
		}
		if table.status != 200 || table.obj(t)["deleted"] != true {
			t.Fatalf("the job completed, but a table is not deleted: %s", table)
		}
		t.Log("the delete committed just before the kill; the restart recorded it as completed")
	}

	// The job is shown to its starter and admins only; anyone else gets 404.
	other := r.user(t, "other", "DataConsumer")
	expectError(t, other.c.do("GET", "/api/v1/jobs/"+id, nil, nil), http.StatusNotFound, "not found")
	expectError(t, r.admin.do("GET", "/api/v1/jobs/not-a-uuid", nil, nil), http.StatusBadRequest, "Invalid job id")
}

// TestAsyncDeleteRecordsItsOutcome deletes asynchronously as an owner and reads the job
// as that owner until it completes.
func TestAsyncDeleteRecordsItsOutcome(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	owner := s.user(t, "owner", "DataConsumer")
	g := s.admin.must(201, "POST", "/api/v1/glossaries", map[string]any{"name": "g", "description": "d",
		"owners": []any{map[string]any{"id": owner.id, "type": "user"}}})
	accepted := owner.c.must(http.StatusAccepted, "DELETE", "/api/v1/glossaries/async/"+g["id"].(string), nil)
	id, _ := accepted["jobId"].(string)
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, j := job(owner.c, id)
		if st == "completed" {
			by, _ := j["createdBy"].(map[string]any)
			res, _ := j["result"].(map[string]any)
			if by["name"] != "owner" || by["id"] != owner.id || res["entityName"] != "g" || j["attempts"] != float64(1) {
				t.Fatalf("completed job = %v", j)
			}
			break
		}
		if st == "failed" || time.Now().After(deadline) {
			t.Fatalf("job = %v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.admin.must(200, "GET", "/api/v1/jobs/"+id, nil)
	if g := s.admin.must(200, "GET", "/api/v1/glossaries/"+g["id"].(string)+"?include=deleted", nil); g["deleted"] != true {
		t.Fatalf("the glossary is not deleted: %v", g)
	}
}
