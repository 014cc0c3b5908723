package e2e

import (
	"net/http"
	"testing"
)

// TestTokenBelongsToAUserNotToAName: a token carries its user's id (claim uid), so a
// token issued to carol stops working when carol is hard-deleted, and does not come back
// to life for a new user who takes the name carol (issue 8, item 5).
func TestTokenBelongsToAUserNotToAName(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	old := s.user(t, "carol", "DataConsumer")
	if uid := jwtPayload(t, old.token)["uid"]; uid != old.id {
		t.Fatalf("carol's token carries uid %v, want her id %s", uid, old.id)
	}
	old.c.must(http.StatusOK, "GET", "/api/v1/users/me", nil)

	s.admin.must(http.StatusOK, "DELETE", "/api/v1/users/"+old.id+"?hardDelete=true", nil)
	expectError(t, old.c.do("GET", "/api/v1/users/me", nil, nil), http.StatusUnauthorized, "")

	// A new carol, with other roles, and her own token.
	carol := s.user(t, "carol", "DataSteward")
	if carol.id == old.id {
		t.Fatalf("the new carol has the old carol's id %s", old.id)
	}
	me := carol.c.must(http.StatusOK, "GET", "/api/v1/users/me", nil)
	if me["id"] != carol.id {
		t.Fatalf("the new carol's token answers as %v", me["id"])
	}
	for _, path := range []string{"/api/v1/users/me", "/api/v1/tables", "/api/v1/users/" + carol.id} {
		expectError(t, old.c.do("GET", path, nil, nil), http.StatusUnauthorized, "")
	}
}
