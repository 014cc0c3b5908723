package e2e

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestActivityStreamFollowsTheChanges: writes reach the activity stream (from the
// outbox), listed globally, per entity (by id and by name), per user (by name and id),
// counted and paged; the retention settings are read by anyone and changed by admins.
// Retention against a fake clock is proved by collab/activity's conformance suite.
func TestActivityStreamFollowsTheChanges(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.admin
	bob := s.user(t, "bob", "DataSteward")
	g := bob.c.must(http.StatusCreated, "POST", "/api/v1/glossaries", map[string]any{"name": "Stream", "description": "one"})
	gid := str(g["id"])
	bob.c.must(http.StatusOK, "PATCH", "/api/v1/glossaries/"+gid, ops(patchOp("replace", "/description", "two")))
	a.must(http.StatusCreated, "POST", "/api/v1/glossaries", map[string]any{"name": "Other", "description": "x"})

	var entity map[string]any
	eventually(t, 10*time.Second, "the glossary's two events are in the stream", func() bool {
		entity = a.must(http.StatusOK, "GET", "/api/v1/activity/entity/glossary/"+gid, nil)
		return len(list(entity["data"])) == 2
	})
	newest := object(list(entity["data"])[0])
	if newest["eventType"] != "entityUpdated" || object(newest["actor"])["name"] != "bob" || object(newest["entity"])["fullyQualifiedName"] != "Stream" {
		t.Fatalf("newest event: %v", newest)
	}
	if fu := list(newest["fieldsUpdated"]); len(fu) != 1 || fu[0] != "description" {
		t.Fatalf("fieldsUpdated: %v", newest)
	}
	byName := a.must(http.StatusOK, "GET", "/api/v1/activity/entity/glossary/name/Stream", nil)
	if len(list(byName["data"])) != 2 {
		t.Fatalf("by name: %v", byName)
	}
	expectError(t, a.do("GET", "/api/v1/activity/entity/glossary/name/Missing", nil, nil), 404, "")
	expectError(t, a.do("GET", "/api/v1/activity/entity/nonsense/"+gid, nil, nil), 400, "")

	// Per user, by name and by id; any authenticated user reads the stream.
	carol := s.user(t, "carol", "DataConsumer")
	for _, who := range []string{"bob", bob.id} {
		u := carol.c.must(http.StatusOK, "GET", "/api/v1/activity/user/"+who, nil)
		if len(list(u["data"])) != 2 {
			t.Fatalf("user %s: %v", who, u)
		}
	}
	expectError(t, s.client(t, "").do("GET", "/api/v1/activity", nil, nil), 401, "")

	// Global, paged and counted.
	var total float64
	eventually(t, 10*time.Second, "the admin's glossary is in the stream", func() bool {
		c := a.must(http.StatusOK, "GET", "/api/v1/activity/count?entityType=glossary", nil)
		total = num(c["total"])
		return total == 3
	})
	first := a.must(http.StatusOK, "GET", "/api/v1/activity?entityType=glossary&limit=2", nil)
	after := str(object(first["paging"])["after"])
	if len(list(first["data"])) != 2 || after == "" || num(object(first["paging"])["total"]) != 3 {
		t.Fatalf("first page: %v", first)
	}
	second := a.must(http.StatusOK, "GET", "/api/v1/activity?entityType=glossary&limit=2&after="+url.QueryEscape(after), nil)
	if len(list(second["data"])) != 1 || str(object(second["paging"])["after"]) != "" {
		t.Fatalf("second page: %v", second)
	}
	expectError(t, a.do("GET", "/api/v1/activity?after=garbage", nil, nil), 400, "cursor")
	expectError(t, a.do("GET", "/api/v1/activity?limit=100000", nil, nil), 400, "limit")

	// Retention settings: default 30 days, admins change them, per domain too.
	set := carol.c.must(http.StatusOK, "GET", "/api/v1/activity/settings", nil)
	if set["retentionDays"] != float64(30) {
		t.Fatalf("default settings: %v", set)
	}
	a.must(http.StatusCreated, "POST", "/api/v1/domains", map[string]any{"name": "Finance", "description": "d", "domainType": "Aggregate"})
	body := map[string]any{"retentionDays": 14, "domains": []any{map[string]any{"domain": "Finance", "retentionDays": 90}}}
	expectError(t, carol.c.do("PUT", "/api/v1/activity/settings", body, nil), 403, "")
	got := a.must(http.StatusOK, "PUT", "/api/v1/activity/settings", body)
	if got["retentionDays"] != float64(14) || len(list(got["domains"])) != 1 {
		t.Fatalf("put settings: %v", got)
	}
	if again := a.must(http.StatusOK, "GET", "/api/v1/activity/settings", nil); again["retentionDays"] != float64(14) {
		t.Fatalf("settings read back: %v", again)
	}
	expectError(t, a.do("PUT", "/api/v1/activity/settings", map[string]any{"retentionDays": 0}, nil), 400, "retentionDays")
	expectError(t, a.do("PUT", "/api/v1/activity/settings", map[string]any{"retentionDays": 5, "extra": 1}, nil), 400, "Unrecognized field extra")
	expectError(t, a.do("PUT", "/api/v1/activity/settings", map[string]any{"retentionDays": 5,
		"domains": []any{map[string]any{"domain": "Nowhere", "retentionDays": 5}}}, nil), 404, "")
}
