package e2e

import (
	"net/http"
	"net/url"
	"testing"
)

// TestAnnouncementLifecycle: an announcement about a table is created, read, changed
// (a new version each time), soft-deleted, restored and hard-deleted; its times and its
// entity link are checked.
func TestAnnouncementLifecycle(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	sch, _ := hierarchy(t, c, "ann", "db", "sch")
	table(t, c, sch, "orders", nil)
	link := "<#E::table::ann.db.sch.orders>"
	const start, end = 1767225600000, 1767232800000
	a := c.must(http.StatusCreated, "POST", "/api/v1/announcements", map[string]any{"name": "maintenance",
		"description": "Orders is reloaded on Sunday.", "entityLink": link, "startTime": start, "endTime": end})
	id := str(a["id"])
	wantVersion(t, a, 0.1)
	if a["entityLink"] != link || num(a["startTime"]) != start || num(a["endTime"]) != end || a["fullyQualifiedName"] != "maintenance" {
		t.Fatalf("created %v", a)
	}
	c.must(http.StatusOK, "GET", "/api/v1/announcements/name/maintenance", nil)
	listed := c.must(http.StatusOK, "GET", "/api/v1/announcements?entityLink="+url.QueryEscape(link), nil)
	if len(list(listed["data"])) != 1 {
		t.Errorf("list by entityLink: %v", listed)
	}

	p := c.do("PATCH", "/api/v1/announcements/"+id, ops(patchOp("replace", "/endTime", end+3600000)), nil)
	if p.status != http.StatusOK {
		t.Fatalf("%s", p)
	}
	wantVersion(t, p.obj(t), 0.2)
	expectError(t, c.do("PATCH", "/api/v1/announcements/"+id, ops(patchOp("replace", "/endTime", start-1)), nil),
		http.StatusBadRequest, "endTime must be after startTime")
	versions := c.must(http.StatusOK, "GET", "/api/v1/announcements/"+id+"/versions", nil)
	if len(list(versions["versions"])) != 2 {
		t.Errorf("versions %v", versions)
	}
	old := c.must(http.StatusOK, "GET", "/api/v1/announcements/"+id+"/versions/0.1", nil)
	if num(old["endTime"]) != end {
		t.Errorf("version 0.1 %v", old)
	}

	del := c.must(http.StatusOK, "DELETE", "/api/v1/announcements/"+id, nil)
	if del["deleted"] != true {
		t.Errorf("soft delete %v", del)
	}
	expectError(t, c.do("GET", "/api/v1/announcements/"+id, nil, nil), http.StatusNotFound, "")
	c.must(http.StatusOK, "GET", "/api/v1/announcements/"+id+"?include=deleted", nil)
	restored := c.must(http.StatusOK, "PUT", "/api/v1/announcements/restore", map[string]any{"id": id})
	if restored["deleted"] != false {
		t.Errorf("restored %v", restored)
	}
	c.must(http.StatusOK, "DELETE", "/api/v1/announcements/"+id+"?hardDelete=true", nil)
	expectError(t, c.do("GET", "/api/v1/announcements/"+id+"?include=all", nil, nil), http.StatusNotFound, "")
}

// TestAnnouncementRules: the end must follow the start, the link must parse and point
// at an existing entity, and the required fields are required; a consumer may read but
// not create.
func TestAnnouncementRules(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	sch, _ := hierarchy(t, c, "annr", "db", "sch")
	table(t, c, sch, "orders", nil)
	ok := "<#E::table::annr.db.sch.orders>"
	cases := []struct {
		body   map[string]any
		status int
		msg    string
	}{
		{map[string]any{"name": "a", "entityLink": ok, "startTime": 2000, "endTime": 1000}, 400, "endTime must be after startTime"},
		{map[string]any{"name": "b", "entityLink": ok, "startTime": 1000, "endTime": 1000}, 400, "endTime must be after startTime"},
		{map[string]any{"name": "c", "entityLink": "orders", "startTime": 1000, "endTime": 2000}, 400, "Invalid entity link"},
		{map[string]any{"name": "d", "entityLink": "<#E::table::annr.db.sch.missing>", "startTime": 1000, "endTime": 2000}, 404, "not found"},
		{map[string]any{"name": "e", "entityLink": ok, "startTime": 1000}, 400, "endTime"},
		{map[string]any{"name": "f", "startTime": 1000, "endTime": 2000}, 400, "entityLink"},
		{map[string]any{"name": "g", "entityLink": ok, "startTime": "soon", "endTime": 2000}, 400, ""},
	}
	for _, tc := range cases {
		expectError(t, c.do("POST", "/api/v1/announcements", tc.body, nil), tc.status, tc.msg)
	}
	c.must(http.StatusCreated, "POST", "/api/v1/announcements", map[string]any{"name": "fine", "entityLink": ok, "startTime": 1000, "endTime": 2000})
	consumer := s.user(t, "reader", "DataConsumer")
	consumer.c.must(http.StatusOK, "GET", "/api/v1/announcements/name/fine", nil)
	expectError(t, consumer.c.do("POST", "/api/v1/announcements", map[string]any{"name": "mine", "entityLink": ok,
		"startTime": 1000, "endTime": 2000}, nil), http.StatusForbidden, "")
}
