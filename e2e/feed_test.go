package e2e

// The feed, black box: conversations with posts and reactions about an entity, the
// time window, the 400s (announcements, a blank about, task types outside the four
// legacy kinds) and the legacy task threads' read, resolve and close.

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestFeedRefusesAnnouncementsBlankAboutAndOtherTaskTypes(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	const moved = "Announcements are no longer served from /v1/feed. Use /v1/announcements instead."
	expectError(t, w.alice.c.do("GET", "/api/v1/feed?type=Announcement", nil, nil), 400, moved)
	expectError(t, w.alice.c.do("POST", "/api/v1/feed", map[string]any{"message": "m", "about": w.link, "type": "Announcement"}, nil), 400, moved)
	expectError(t, w.alice.c.do("POST", "/api/v1/feed", map[string]any{"message": "m", "about": w.link,
		"announcementDetails": map[string]any{"startTime": 1, "endTime": 2}}, nil), 400, moved)
	expectError(t, w.alice.c.do("POST", "/api/v1/feed", map[string]any{"message": "m", "about": "  "}, nil), 400, "about")
	expectError(t, w.alice.c.do("POST", "/api/v1/feed", map[string]any{"message": "m"}, nil), 400, "about")
	for _, typ := range []string{"Generic", "Suggestion", "DataAccessRequest"} {
		expectError(t, w.alice.c.do("POST", "/api/v1/feed", map[string]any{"message": "m", "about": w.link, "type": "Task",
			"taskDetails": map[string]any{"type": typ, "assignees": []any{"bob"}}}, nil), 400, "can't be created through the feed")
	}
	expectError(t, w.alice.c.do("POST", "/api/v1/feed", map[string]any{"message": "m", "about": w.link, "type": "Task"}, nil), 400, "taskDetails")
	expectError(t, w.alice.c.do("POST", "/api/v1/feed", map[string]any{"message": "m", "about": "<#E::table::svc.db.sch.nope>"}, nil), 404, "")
	expectError(t, w.nobody.c.do("POST", "/api/v1/feed", map[string]any{"message": "m", "about": w.link, "type": "Task",
		"taskDetails": map[string]any{"type": "RequestDescription", "assignees": []any{"bob"}}}, nil), 403, "CreateTask")
}

func TestFeedConversationsPostsReactionsAndWindow(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	th := w.alice.c.must(http.StatusCreated, "POST", "/api/v1/feed", map[string]any{"message": "Is note free text?", "about": w.link})
	id := str(th["id"])
	if th["type"] != "Conversation" || object(th["entityRef"])["id"] != w.tableID {
		t.Fatalf("thread: %v", th)
	}
	th = w.bob.c.must(http.StatusOK, "POST", "/api/v1/feed/"+id+"/posts", map[string]any{"message": "Yes."})
	post := str(object(list(th["posts"])[0])["id"])
	w.alice.c.must(http.StatusOK, "PUT", "/api/v1/feed/"+id+"/reactions/thumbsUp", nil)
	th = w.alice.c.must(http.StatusOK, "PUT", "/api/v1/feed/"+id+"/posts/"+post+"/reactions/heart", nil)
	if len(list(th["reactions"])) != 1 || len(list(object(list(th["posts"])[0])["reactions"])) != 1 {
		t.Fatalf("reactions: %v", th)
	}
	expectError(t, w.alice.c.do("PUT", "/api/v1/feed/"+id+"/reactions/shrug", nil, nil), 400, "reactionType")
	posts := w.carol.c.must(http.StatusOK, "GET", "/api/v1/feed/"+id+"/posts", nil)
	if len(list(posts["data"])) != 1 {
		t.Fatalf("posts: %v", posts)
	}
	future := time.Now().Add(time.Hour).UnixMilli()
	page := w.carol.c.must(http.StatusOK, "GET", fmt.Sprintf("/api/v1/feed?entityLink=%s&startTs=1&endTs=%d", esc(w.link), future), nil)
	if len(list(page["data"])) != 1 {
		t.Fatalf("feed about the table: %v", page)
	}
	page = w.carol.c.must(http.StatusOK, "GET", fmt.Sprintf("/api/v1/feed?startTs=%d", future), nil)
	if len(list(page["data"])) != 0 {
		t.Fatalf("feed after the window: %v", page)
	}
	expectError(t, w.carol.c.do("GET", "/api/v1/feed?after=garbage", nil, nil), 400, "cursor")
	expectError(t, w.bob.c.do("DELETE", "/api/v1/feed/"+id, nil, nil), 403, "")
	w.alice.c.must(http.StatusNoContent, "DELETE", "/api/v1/feed/"+id, nil)
	expectError(t, w.alice.c.do("GET", "/api/v1/feed/"+id, nil, nil), 404, "")
}

func TestFeedLegacyTaskThreadsResolveAndClose(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	column := "<#E::table::svc.db.sch.orders::columns::note::description>"
	th := w.alice.c.must(http.StatusCreated, "POST", "/api/v1/feed", map[string]any{"message": "Describe note", "about": column, "type": "Task",
		"taskDetails": map[string]any{"type": "RequestDescription", "assignees": []any{"bob"}, "suggestion": "Customer note"}})
	taskID := fmt.Sprint(num(object(th["task"])["id"]))
	got := w.carol.c.must(http.StatusOK, "GET", "/api/v1/feed/tasks/"+taskID, nil)
	if got["id"] != th["id"] || object(got["task"])["status"] != "Open" {
		t.Fatalf("task thread: %v", got)
	}
	expectError(t, w.alice.c.do("PUT", "/api/v1/feed/tasks/"+taskID+"/resolve", map[string]any{"newValue": "x"}, nil), 403, "")
	expectError(t, w.carol.c.do("PUT", "/api/v1/feed/tasks/"+taskID+"/resolve", map[string]any{"newValue": "x"}, nil), 403, "")
	done := w.bob.c.must(http.StatusOK, "PUT", "/api/v1/feed/tasks/"+taskID+"/resolve", map[string]any{"newValue": "What the customer wrote"})
	if object(done["task"])["status"] != "Closed" || noteDescription(w.table(t)) != "What the customer wrote" {
		t.Fatalf("resolved: %v; note %v", done["task"], noteDescription(w.table(t)))
	}
	expectError(t, w.bob.c.do("PUT", "/api/v1/feed/tasks/"+taskID+"/close", nil, nil), 400, "closed")
	ap := w.alice.c.must(http.StatusCreated, "POST", "/api/v1/feed", map[string]any{"message": "Approve the table", "about": w.link, "type": "Task",
		"taskDetails": map[string]any{"type": "RequestApproval", "assignees": []any{"bob"}}})
	apID := fmt.Sprint(num(object(ap["task"])["id"]))
	closed := w.alice.c.must(http.StatusOK, "PUT", "/api/v1/feed/tasks/"+apID+"/close", map[string]any{"comment": "not needed"})
	if object(closed["task"])["status"] != "Closed" {
		t.Fatalf("closed: %v", closed)
	}
	open := w.alice.c.must(http.StatusOK, "GET", "/api/v1/feed?type=Task&taskStatus=Open", nil)
	if len(list(open["data"])) != 0 {
		t.Fatalf("open task threads: %v", open)
	}
	expectError(t, w.alice.c.do("GET", "/api/v1/feed/tasks/999", nil, nil), 404, "")
}
