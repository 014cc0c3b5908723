package storetest

import (
	"fmt"
	"sort"
	"testing"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
)

// testReferenceForms creates teams whose users are named in every form OpenMetadata's
// create requests use: an id string (CreateTeam sends ids), a name string, and a
// reference object by id or by name. An id of no user is not found; so is a name.
func testReferenceForms(t *testing.T, f *Fixture) {
	users := f.createUsers("ann", "ben", "cat", "dan")
	names := func(e meridian.Entity) string {
		var out []string
		for _, u := range e["users"].([]any) {
			out = append(out, u.(map[string]any)["name"].(string))
		}
		sort.Strings(out)
		return fmt.Sprint(out)
	}
	body := fmt.Sprintf(`{"name":"forms","users":[%q,"ben",{"id":%q,"type":"user"},{"name":"dan","type":"user"}]}`,
		users["ann"].ID(), users["cat"].ID())
	team := f.Create("team", body)
	if got := names(f.Get("team", team.ID(), "users", "")); got != "[ann ben cat dan]" {
		t.Errorf("users = %s, want [ann ben cat dan]", got)
	}
	for _, ref := range []string{fmt.Sprintf("%q", uuid.NewString()), `"nobody"`, fmt.Sprintf("%q", team.ID())} {
		_, err := f.E.Create(f.Ctx, f.Admin, "team", f.Doc(`{"name":"bad","users":[`+ref+`]}`))
		WantCode(t, err, meridian.ENotFound)
	}
}
