package e2e

import (
	"fmt"
	"net/http"
	"testing"
)

// userRef and teamRef are entity references by id.
func userRef(id string) map[string]any { return map[string]any{"id": id, "type": "user"} }
func teamRef(id string) map[string]any { return map[string]any{"id": id, "type": "team"} }

func refs(r ...map[string]any) []any {
	out := make([]any, len(r))
	for i, x := range r {
		out[i] = x
	}
	return out
}

func TestGovernanceRulesAnswer400WithOpenMetadataMessages(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.admin
	schemaFQN, _ := hierarchy(t, a, "svc", "db", "sch")
	var users []map[string]any
	for i := 1; i <= 6; i++ {
		name := fmt.Sprintf("u%d", i)
		u := a.must(http.StatusCreated, "POST", "/api/v1/users", map[string]any{"name": name, "email": name + "@example.com"})
		users = append(users, userRef(str(u["id"])))
	}
	grp := teamRef(str(a.must(http.StatusCreated, "POST", "/api/v1/teams", map[string]any{"name": "grp", "teamType": "Group"})["id"]))
	grp2 := teamRef(str(a.must(http.StatusCreated, "POST", "/api/v1/teams", map[string]any{"name": "grp2"})["id"]))
	dept := teamRef(str(a.must(http.StatusCreated, "POST", "/api/v1/teams", map[string]any{"name": "dept", "teamType": "Department"})["id"]))
	body := func(name string, extra map[string]any) map[string]any {
		b := map[string]any{"name": name, "databaseSchema": schemaFQN, "columns": twoColumns()}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}

	t.Run("owners", func(t *testing.T) {
		for _, tc := range []struct {
			owners []any
			msg    string
		}{
			{refs(dept), "Team of type Department can't own entities. Only Team of type Group can own entities."},
			{refs(grp, grp2), "Only One Team is allowed to own Data Assets."},
			{refs(users[0], grp), "Data Assets can have up to 5 users or a Team but not both as owners."},
			{refs(users...), "Data Assets can have up to 5 users or a Team but not both as owners."},
		} {
			expectError(t, a.do("POST", "/api/v1/tables", body("t", map[string]any{"owners": tc.owners}), nil), 400, tc.msg)
			expectError(t, a.do("PUT", "/api/v1/tables", body("t", map[string]any{"owners": tc.owners}), nil), 400, tc.msg)
		}
		e := table(t, a, schemaFQN, "five", map[string]any{"owners": refs(users[:5]...)})
		expectError(t, a.do("PATCH", "/api/v1/tables/"+str(e["id"]), ops(patchOp("add", "/owners/-", grp)), nil), 400,
			"Data Assets can have up to 5 users or a Team but not both as owners.")
		a.must(200, "PATCH", "/api/v1/tables/"+str(e["id"]), ops(patchOp("replace", "/owners", refs(grp))))
	})

	t.Run("reviewers", func(t *testing.T) {
		g := map[string]any{"name": "g", "description": "d", "reviewers": refs(users[0], grp)}
		expectError(t, a.do("POST", "/api/v1/glossaries", g, nil), 400,
			"Invalid Reviewer Type. Only one team or multiple users can be assigned as reviewer.")
		g["reviewers"] = refs(users[0], users[1])
		e := a.must(http.StatusCreated, "POST", "/api/v1/glossaries", g)
		expectError(t, a.do("PATCH", "/api/v1/glossaries/"+str(e["id"]), ops(patchOp("add", "/reviewers/-", grp)), nil), 400,
			"Invalid Reviewer Type. Only one team or multiple users can be assigned as reviewer.")
	})

	t.Run("data products need a domain", func(t *testing.T) {
		a.must(http.StatusCreated, "POST", "/api/v1/domains", map[string]any{"name": "Sales", "description": "d", "domainType": "Aggregate"})
		a.must(http.StatusCreated, "POST", "/api/v1/dataProducts", map[string]any{"name": "Revenue", "description": "d", "domains": []any{"Sales"}})
		msg := "Domain cannot be empty when data products are provided."
		expectError(t, a.do("POST", "/api/v1/tables", body("dp", map[string]any{"dataProducts": []any{"Revenue"}}), nil), 400, msg)
		e := table(t, a, schemaFQN, "dp", map[string]any{"dataProducts": []any{"Revenue"}, "domains": []any{"Sales"}})
		expectError(t, a.do("PATCH", "/api/v1/tables/"+str(e["id"]), ops(patchOp("replace", "/domains", []any{})), nil), 400, msg)
	})

	t.Run("tags", func(t *testing.T) {
		a.must(http.StatusCreated, "POST", "/api/v1/classifications", map[string]any{"name": "PII", "description": "d", "mutuallyExclusive": true})
		a.must(http.StatusCreated, "POST", "/api/v1/tags", map[string]any{"name": "A", "description": "d", "classification": "PII"})
		a.must(http.StatusCreated, "POST", "/api/v1/tags", map[string]any{"name": "B", "description": "d", "classification": "PII"})
		a.must(http.StatusCreated, "POST", "/api/v1/classifications", map[string]any{"name": "Old", "description": "d", "disabled": true})
		a.must(http.StatusCreated, "POST", "/api/v1/tags", map[string]any{"name": "X", "description": "d", "classification": "Old"})
		label := func(fqn string) map[string]any { return map[string]any{"tagFQN": fqn} }
		expectError(t, a.do("POST", "/api/v1/tables", body("tg", map[string]any{"tags": refs(label("PII.B"), label("PII.A"))}), nil), 400,
			"Tag labels PII.A and PII.B are mutually exclusive and can't be assigned together")
		expectError(t, a.do("POST", "/api/v1/tables", body("tg", map[string]any{"tags": refs(label("Old.X"))}), nil), 400,
			"Tag label Old.X is disabled and can't be assigned to a data asset.")
		e := table(t, a, schemaFQN, "tg", map[string]any{"tags": refs(label("PII.A"))})
		expectError(t, a.do("PATCH", "/api/v1/tables/"+str(e["id"]), ops(patchOp("add", "/columns/0/tags", refs(label("PII.A"), label("PII.B")))), nil), 400,
			"are mutually exclusive")
		expectError(t, a.do("PUT", "/api/v1/tables", body("tg", map[string]any{"tags": refs(label("PII.B"))}), nil), 400,
			"Tag labels PII.B and PII.A are mutually exclusive and can't be assigned together")
	})

	t.Run("system test definitions", func(t *testing.T) {
		def := a.must(200, "GET", "/api/v1/dataQuality/testDefinitions/name/tableRowCountToBeBetween", nil)
		expectError(t, a.do("PATCH", "/api/v1/dataQuality/testDefinitions/"+str(def["id"]), ops(patchOp("add", "/description", "mine")), nil), 400,
			"System entity [tableRowCountToBeBetween] of type testDefinition can not be modified.")
		def["description"] = "mine"
		expectError(t, a.do("PUT", "/api/v1/dataQuality/testDefinitions", def, nil), 400, "can not be modified")
		expectError(t, a.do("POST", "/api/v1/dataQuality/testDefinitions", map[string]any{"name": "mine", "description": "d",
			"testPlatforms": []any{"OpenMetadata"}, "provider": "system"}, nil), 400, "can't have provider system")
	})
}

func TestMembersOfAnOwningTeamMayEdit(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.admin
	schemaFQN, _ := hierarchy(t, a, "svc", "db", "sch")
	member := s.user(t, "member", "DataConsumer")
	outsider := s.user(t, "outsider", "DataConsumer")
	team := a.must(http.StatusCreated, "POST", "/api/v1/teams", map[string]any{"name": "analysts", "users": refs(userRef(member.id))})
	owned := table(t, a, schemaFQN, "owned", map[string]any{"owners": refs(teamRef(str(team["id"])))})
	path := "/api/v1/tables/" + str(owned["id"])
	desc := ops(patchOp("add", "/description", "edited"))

	t.Run("membership shows on both sides", func(t *testing.T) {
		u := a.must(200, "GET", "/api/v1/users/"+member.id+"?fields=teams", nil)
		if l := list(u["teams"]); len(l) != 1 || object(l[0])["name"] != "analysts" {
			t.Errorf("member teams = %v", u["teams"])
		}
		tm := a.must(200, "GET", "/api/v1/teams/"+str(team["id"])+"?fields=users", nil)
		if l := list(tm["users"]); len(l) != 1 || object(l[0])["name"] != "member" {
			t.Errorf("team users = %v", tm["users"])
		}
	})
	t.Run("a member may patch, a non-member may not", func(t *testing.T) {
		e := member.c.must(200, "PATCH", path, desc)
		if e["updatedBy"] != "member" {
			t.Errorf("updatedBy = %v", e["updatedBy"])
		}
		expectError(t, outsider.c.do("PATCH", path, ops(patchOp("add", "/description", "hijack")), nil), 403, "not allowed")
	})
	t.Run("a user cannot join a team by itself", func(t *testing.T) {
		r := outsider.c.do("PATCH", "/api/v1/users/"+outsider.id, ops(patchOp("add", "/teams", refs(teamRef(str(team["id"]))))), nil)
		if r.status != 403 && r.status != 400 {
			t.Errorf("%s: want 403 (or 400)", r)
		}
		expectError(t, outsider.c.do("PATCH", path, desc, nil), 403, "")
	})
	t.Run("an admin adding the user to the team makes it an owner", func(t *testing.T) {
		a.must(200, "PATCH", "/api/v1/users/"+outsider.id, ops(patchOp("add", "/teams", refs(teamRef(str(team["id"]))))))
		outsider.c.must(200, "PATCH", path, ops(patchOp("add", "/description", "now a member")))
	})
}
