package rest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// waitJob polls GET /api/v1/jobs/{id} with a token until the job has finished.
func (f *fixture) waitJob(t *testing.T, token, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := f.do("GET", "/api/v1/jobs/"+id, token, nil)
		if r.status != 200 {
			t.Fatalf("GET job: %d %s", r.status, r.body)
		}
		j := r.json(t)
		if j["status"] == "completed" || j["status"] == "failed" {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %v: %s", j["status"], r.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAsyncDeleteJobIsShownToItsStarterAndAdmins(t *testing.T) {
	f := newFixture(t)
	alice := f.userToken("alice", []string{meridian.RoleDataConsumer}, false)
	bob := f.userToken("bob", []string{meridian.RoleDataConsumer}, false)
	aliceID := f.call("GET", "/api/v1/users/name/alice", "").json(t)["id"].(string)
	g := f.call("POST", "/api/v1/glossaries", `{"name":"g","description":"d","owners":[{"id":"`+aliceID+`","type":"user"}]}`)
	if g.status != 201 {
		t.Fatalf("create glossary: %d %s", g.status, g.body)
	}
	r := f.do("DELETE", "/api/v1/glossaries/async/"+g.json(t)["id"].(string), alice, nil)
	if r.status != 202 {
		t.Fatalf("async delete: %d %s", r.status, r.body)
	}
	id, _ := r.json(t)["jobId"].(string)
	j := f.waitJob(t, alice, id)
	if j["status"] != "completed" || j["type"] != store.JobTypeDelete || j["progress"] != float64(100) || j["attempts"] != float64(1) {
		t.Fatalf("job = %v", j)
	}
	if by, _ := j["createdBy"].(map[string]any); by["id"] != aliceID || by["name"] != "alice" {
		t.Errorf("createdBy = %v", j["createdBy"])
	}
	if res, _ := j["result"].(map[string]any); res["entityName"] != "g" || res["entityType"] != "glossary" || res["hardDelete"] != false {
		t.Errorf("result = %v", j["result"])
	}
	if _, ok := j["error"]; ok {
		t.Errorf("a completed job has an error: %v", j)
	}
	if r := f.call("GET", "/api/v1/jobs/"+id, ""); r.status != 200 {
		t.Errorf("an admin cannot see the job: %d %s", r.status, r.body)
	}
	// Someone else is told the job does not exist, exactly as for a missing one.
	wantError(t, f.do("GET", "/api/v1/jobs/"+id, bob, nil), 404, "Job "+id+" not found")
	missing := uuid.NewString()
	wantError(t, f.call("GET", "/api/v1/jobs/"+missing, ""), 404, "Job "+missing+" not found")
	wantError(t, f.call("GET", "/api/v1/jobs/nope", ""), 400, `Invalid job id "nope"`)
	wantError(t, f.do("GET", "/api/v1/jobs/"+id, "", nil), 401, "")
}

func TestAFailedJobShowsItsErrorAsCodeAndMessage(t *testing.T) {
	f := newFixture(t)
	admin := &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}
	id, err := f.jobs.Start(context.Background(), admin, "test.fail", nil, func(context.Context, store.JobProgress) (any, error) {
		return nil, meridian.Errorf(meridian.EInvalid, "glossary is not empty")
	})
	if err != nil {
		t.Fatal(err)
	}
	j := f.waitJob(t, f.admin, id)
	b, _ := json.Marshal(j["error"])
	if j["status"] != "failed" || string(b) != `{"code":400,"message":"glossary is not empty"}` {
		t.Fatalf("failed job = %v", j)
	}
	if _, ok := j["result"]; ok {
		t.Errorf("a failed job has a result: %v", j)
	}
}
