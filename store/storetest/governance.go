package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
)

// Governance rules: owners, reviewers, data products, tag settings, team membership and
// system test definitions.

// userRef is a reference object to a user by name; teamRef to a team.
func userRef(name string) string { return `{"type":"user","name":"` + name + `"}` }
func teamRef(name string) string { return `{"type":"team","name":"` + name + `"}` }

func refList(refs ...string) string { return "[" + strings.Join(refs, ",") + "]" }

// createUsers creates users with a DataConsumer role, named as given.
func (f *Fixture) createUsers(names ...string) map[string]meridian.Entity {
	f.T.Helper()
	out := map[string]meridian.Entity{}
	for _, n := range names {
		out[n] = f.Create("user", `{"name":"`+n+`","email":"`+n+`@example.com","roles":["DataConsumer"]}`)
	}
	return out
}

// wantRejected runs a write and checks it fails with EInvalid and the message.
func wantRejected(t *testing.T, msg string, err error) {
	t.Helper()
	WantCode(t, err, meridian.EInvalid)
	WantMessage(t, err, msg)
}

// withPolicy replaces the fixture's engine by one with the owner policy (and the schema
// validator), over the same driver.
func (f *Fixture) withPolicy() {
	f.T.Helper()
	v, err := schema.New()
	if err != nil {
		f.T.Fatalf("schema: %v", err)
	}
	f.E = store.New(store.Config{Driver: f.Driver, Registry: meridian.DefaultRegistry(), Validator: v, Policy: ownerPolicy{}})
}

const (
	msgDepartmentOwner = "Team of type Department can't own entities. Only Team of type Group can own entities."
	msgOneTeamOwner    = "Only One Team is allowed to own Data Assets."
	msgUsersOrTeam     = "Data Assets can have up to 5 users or a Team but not both as owners."
	msgReviewerType    = "Invalid Reviewer Type. Only one team or multiple users can be assigned as reviewer."
	msgOneTeamReviewer = "Only one team can be assigned as reviewer."
	msgProductDomain   = "Domain cannot be empty when data products are provided."
)

func testOwnerRules(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.createUsers("u1", "u2", "u3", "u4", "u5", "u6")
	f.Create("team", `{"name":"grp","teamType":"Group"}`)
	f.Create("team", `{"name":"grp2"}`) // teamType defaults to Group
	f.Create("team", `{"name":"dept","teamType":"Department"}`)
	sixUsers := []string{userRef("u1"), userRef("u2"), userRef("u3"), userRef("u4"), userRef("u5"), userRef("u6")}
	create := func(name, owners string) error {
		_, err := f.E.Create(f.Ctx, f.Admin, "table", f.Doc(`{"name":"`+name+`","databaseSchema":"svc.db.sch","columns":[],"owners":`+owners+`}`))
		return err
	}
	t.Run("create", func(t *testing.T) {
		wantRejected(t, msgDepartmentOwner, create("t", refList(teamRef("dept"))))
		wantRejected(t, msgOneTeamOwner, create("t", refList(teamRef("grp"), teamRef("grp2"))))
		wantRejected(t, msgUsersOrTeam, create("t", refList(userRef("u1"), teamRef("grp"))))
		wantRejected(t, msgUsersOrTeam, create("t", refList(sixUsers...)))
		if err := create("five", refList(sixUsers[:5]...)); err != nil {
			t.Fatalf("five user owners: %v", err)
		}
		if err := create("team_owned", refList(teamRef("grp2"))); err != nil {
			t.Fatalf("a Group team owner: %v", err)
		}
		_, err := f.E.Create(f.Ctx, f.Admin, "glossary", f.Doc(`{"name":"g","description":"d","owners":`+refList(teamRef("dept"))+`}`))
		wantRejected(t, msgDepartmentOwner, err)
	})
	five, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.five"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("patch", func(t *testing.T) {
		_, err := f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(five.ID()), []byte(`[{"op":"add","path":"/owners/-","value":`+userRef("u6")+`}]`), "")
		wantRejected(t, msgUsersOrTeam, err)
		_, err = f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(five.ID()), []byte(`[{"op":"add","path":"/owners/-","value":`+teamRef("grp")+`}]`), "")
		wantRejected(t, msgUsersOrTeam, err)
		_, err = f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(five.ID()), []byte(`[{"op":"replace","path":"/owners","value":`+refList(teamRef("dept"))+`}]`), "")
		wantRejected(t, msgDepartmentOwner, err)
		e := f.Patch("table", five.ID(), `[{"op":"replace","path":"/owners","value":`+refList(teamRef("grp"))+`}]`)
		if o, _ := e["owners"].([]any); len(o) != 1 || o[0].(map[string]any)["name"] != "grp" {
			t.Fatalf("owners = %v", e["owners"])
		}
		// Unrelated edits pass, and so do edits that keep the owners.
		f.Patch("table", five.ID(), `[{"op":"add","path":"/description","value":"d"}]`)
	})
	t.Run("put", func(t *testing.T) {
		put := func(owners string) error {
			_, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"five","databaseSchema":"svc.db.sch","columns":[],"owners":`+owners+`}`))
			return err
		}
		wantRejected(t, msgDepartmentOwner, put(refList(teamRef("dept"))))
		wantRejected(t, msgOneTeamOwner, put(refList(teamRef("grp"), teamRef("grp2"))))
		wantRejected(t, msgUsersOrTeam, put(refList(userRef("u1"), teamRef("grp"))))
		if err := put(refList(userRef("u1"), userRef("u2"))); err != nil {
			t.Fatalf("PUT two user owners: %v", err)
		}
		// A PUT that creates is checked as a create.
		_, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"new","databaseSchema":"svc.db.sch","columns":[],"owners":`+refList(teamRef("dept"))+`}`))
		wantRejected(t, msgDepartmentOwner, err)
	})
}

func testReviewerRules(t *testing.T, f *Fixture) {
	f.createUsers("u1", "u2")
	f.Create("team", `{"name":"grp"}`)
	f.Create("team", `{"name":"grp2"}`)
	create := func(name, reviewers string) error {
		_, err := f.E.Create(f.Ctx, f.Admin, "glossary", f.Doc(`{"name":"`+name+`","description":"d","reviewers":`+reviewers+`}`))
		return err
	}
	wantRejected(t, msgReviewerType, create("g", refList(userRef("u1"), teamRef("grp"))))
	wantRejected(t, msgOneTeamReviewer, create("g", refList(teamRef("grp"), teamRef("grp2"))))
	if err := create("by_users", refList(userRef("u1"), userRef("u2"))); err != nil {
		t.Fatalf("several user reviewers: %v", err)
	}
	if err := create("by_team", refList(teamRef("grp"))); err != nil {
		t.Fatalf("one team reviewer: %v", err)
	}
	g, err := f.E.Get(f.Ctx, f.Admin, "glossary", store.ByFQN("by_users"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.E.Patch(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), []byte(`[{"op":"add","path":"/reviewers/-","value":`+teamRef("grp")+`}]`), "")
	wantRejected(t, msgReviewerType, err)
	_, err = f.E.CreateOrUpdate(f.Ctx, f.Admin, "glossary", f.Doc(`{"name":"by_team","description":"d","reviewers":`+refList(teamRef("grp"), teamRef("grp2"))+`}`))
	wantRejected(t, msgOneTeamReviewer, err)
	// Glossary terms and other kinds with reviewers follow the same rule.
	_, err = f.E.Create(f.Ctx, f.Admin, "glossaryTerm", f.Doc(`{"name":"t","description":"d","glossary":"by_users","reviewers":`+refList(userRef("u2"), teamRef("grp"))+`}`))
	wantRejected(t, msgReviewerType, err)
}

func testDataProductsNeedDomain(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Create("domain", `{"name":"Sales","description":"d","domainType":"Aggregate"}`)
	f.Create("dataProduct", `{"name":"Revenue","description":"d","domains":["Sales"]}`)
	create := func(name, extra string) error {
		_, err := f.E.Create(f.Ctx, f.Admin, "table", f.Doc(`{"name":"`+name+`","databaseSchema":"svc.db.sch","columns":[]`+extra+`}`))
		return err
	}
	wantRejected(t, msgProductDomain, create("t", `,"dataProducts":["Revenue"]`))
	wantRejected(t, msgProductDomain, create("t", `,"dataProducts":["Revenue"],"domains":[]`))
	if err := create("t", `,"dataProducts":["Revenue"],"domains":["Sales"]`); err != nil {
		t.Fatalf("data product with a domain: %v", err)
	}
	tbl, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.t"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), []byte(`[{"op":"replace","path":"/domains","value":[]}]`), "")
	wantRejected(t, msgProductDomain, err)
	// PUT keeps the stored domains, so a body with data products only is fine here...
	if _, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"t","databaseSchema":"svc.db.sch","columns":[],"dataProducts":["Revenue"],"description":"x"}`)); err != nil {
		t.Fatalf("PUT keeping the stored domain: %v", err)
	}
	// ...but not on a table without one.
	f.Table("plain", `[]`)
	_, err = f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"plain","databaseSchema":"svc.db.sch","columns":[],"dataProducts":["Revenue"]}`))
	wantRejected(t, msgProductDomain, err)
	plain, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.plain"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(plain.ID()), []byte(`[{"op":"add","path":"/dataProducts","value":["Revenue"]}]`), "")
	wantRejected(t, msgProductDomain, err)
}

func testTagRules(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Create("classification", `{"name":"PII","description":"d","mutuallyExclusive":true}`)
	f.Create("tag", `{"name":"A","description":"d","classification":"PII"}`)
	f.Create("tag", `{"name":"B","description":"d","classification":"PII"}`)
	f.Create("classification", `{"name":"Tier","description":"d"}`)
	f.Create("tag", `{"name":"T1","description":"d","classification":"Tier"}`)
	f.Create("tag", `{"name":"T2","description":"d","classification":"Tier"}`)
	f.Create("tag", `{"name":"Gone","description":"d","classification":"Tier","disabled":true}`)
	f.Create("tag", `{"name":"Level","description":"d","classification":"Tier","mutuallyExclusive":true}`)
	f.Create("tag", `{"name":"Low","description":"d","parent":"Tier.Level"}`)
	f.Create("tag", `{"name":"High","description":"d","parent":"Tier.Level"}`)
	f.Create("classification", `{"name":"Old","description":"d","disabled":true}`)
	f.Create("tag", `{"name":"X","description":"d","classification":"Old"}`)
	label := func(fqns ...string) string {
		var l []string
		for _, q := range fqns {
			l = append(l, `{"tagFQN":"`+q+`"}`)
		}
		return "[" + strings.Join(l, ",") + "]"
	}
	create := func(name, tags, colTags string) error {
		_, err := f.E.Create(f.Ctx, f.Admin, "table", f.Doc(`{"name":"`+name+`","databaseSchema":"svc.db.sch","tags":`+tags+
			`,"columns":[{"name":"c","dataType":"INT","tags":`+colTags+`}]}`))
		return err
	}
	exclusive := "Tag labels PII.A and PII.B are mutually exclusive and can't be assigned together"
	t.Run("create", func(t *testing.T) {
		wantRejected(t, exclusive, create("t", label("PII.B", "PII.A"), "[]"))
		wantRejected(t, exclusive, create("t", "[]", label("PII.B", "PII.A")))
		wantRejected(t, "Tag labels Tier.Level.High and Tier.Level.Low are mutually exclusive and can't be assigned together",
			create("t", label("Tier.Level.Low", "Tier.Level.High"), "[]"))
		wantRejected(t, "Tag label Tier.Gone is disabled and can't be assigned to a data asset.", create("t", label("Tier.Gone"), "[]"))
		wantRejected(t, "Tag label Old.X is disabled and can't be assigned to a data asset.", create("t", "[]", label("Old.X")))
		// Tags of a classification that is not mutually exclusive go together, and one
		// tag of an exclusive one may sit beside another classification's.
		if err := create("ok", label("Tier.T1", "Tier.T2", "PII.A"), label("PII.B", "Tier.Level.Low")); err != nil {
			t.Fatalf("compatible labels: %v", err)
		}
		_, err := f.E.Create(f.Ctx, f.Admin, "glossary", f.Doc(`{"name":"g","description":"d","tags":`+label("PII.A", "PII.B")+`}`))
		WantCode(t, err, meridian.EInvalid)
	})
	tbl, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.ok"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("patch and put", func(t *testing.T) {
		_, err := f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), []byte(`[{"op":"add","path":"/tags/-","value":{"tagFQN":"PII.B"}}]`), "")
		wantRejected(t, "Tag labels PII.B and PII.A are mutually exclusive and can't be assigned together", err)
		_, err = f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), []byte(`[{"op":"add","path":"/columns/0/tags/-","value":{"tagFQN":"Tier.Gone"}}]`), "")
		wantRejected(t, "Tag label Tier.Gone is disabled and can't be assigned to a data asset.", err)
		// PUT merges tags: the stored PII.A meets the new PII.B.
		_, err = f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"ok","databaseSchema":"svc.db.sch","tags":`+label("PII.B")+
			`,"columns":[{"name":"c","dataType":"INT"}]}`))
		wantRejected(t, "Tag labels PII.B and PII.A are mutually exclusive and can't be assigned together", err)
		// Replacing one exclusive tag by the other is fine.
		e := f.Patch("table", tbl.ID(), `[{"op":"replace","path":"/tags/2","value":{"tagFQN":"PII.B"}}]`)
		if tags := e["tags"].([]any); len(tags) != 3 || tags[2].(map[string]any)["tagFQN"] != "PII.B" {
			t.Fatalf("tags = %v", e["tags"])
		}
	})
	t.Run("labels assigned before a tag is disabled stay", func(t *testing.T) {
		t1, err := f.E.Get(f.Ctx, f.Admin, "tag", store.ByFQN("Tier.T1"), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f.Patch("tag", t1.ID(), `[{"op":"add","path":"/disabled","value":true}]`)
		e := f.Patch("table", tbl.ID(), `[{"op":"add","path":"/description","value":"still tagged"}]`)
		if tags := e["tags"].([]any); tags[0].(map[string]any)["tagFQN"] != "Tier.T1" {
			t.Fatalf("tags = %v", e["tags"])
		}
		if _, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"ok","databaseSchema":"svc.db.sch","description":"put",`+
			`"columns":[{"name":"c","dataType":"INT"}]}`)); err != nil {
			t.Fatalf("PUT of a table holding a now disabled tag: %v", err)
		}
		_, err = f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), []byte(`[{"op":"add","path":"/columns/0/tags/-","value":{"tagFQN":"Tier.T1"}}]`), "")
		wantRejected(t, "Tag label Tier.T1 is disabled and can't be assigned to a data asset.", err)
	})
	t.Run("unknown tags are still not found", func(t *testing.T) {
		WantCode(t, create("t", label("PII.Nope"), "[]"), meridian.ENotFound)
	})
}

func testTeamMembership(t *testing.T, f *Fixture) {
	users := f.createUsers("alice", "bob", "carol")
	team := f.Create("team", `{"name":"grp","users":[`+userRef("alice")+`]}`)
	members := func() []string {
		t.Helper()
		e := f.Get("team", team.ID(), "users", "")
		var names []string
		for _, u := range e["users"].([]any) {
			names = append(names, u.(map[string]any)["name"].(string))
		}
		return names
	}
	teamsOf := func(name string) []string {
		t.Helper()
		e := f.Get("user", users[name].ID(), "teams", "")
		var names []string
		for _, u := range e["teams"].([]any) {
			names = append(names, u.(map[string]any)["name"].(string))
		}
		return names
	}
	relations := func() int {
		t.Helper()
		tx, err := f.Driver.Begin(f.Ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		rels, err := tx.Relations(f.Ctx, store.RelationQuery{ToID: team.ID(), Type: "teams"})
		if err != nil {
			t.Fatal(err)
		}
		return len(rels)
	}
	if got := fmt.Sprint(members(), teamsOf("alice")); got != "[alice] [grp]" {
		t.Fatalf("team users, alice's teams = %s", got)
	}
	// Joining through the user's teams shows on the team, recorded once.
	f.Patch("user", users["bob"].ID(), `[{"op":"add","path":"/teams","value":[`+teamRef("grp")+`]}]`)
	if got := fmt.Sprint(members(), teamsOf("bob"), relations()); got != "[alice bob] [grp] 2" {
		t.Fatalf("after bob joins: %s", got)
	}
	res, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "team", f.Doc(`{"name":"grp","users":[`+userRef("alice")+`,`+userRef("bob")+`]}`))
	if err != nil || res.Change != meridian.EventEntityNoChange || relations() != 2 {
		t.Fatalf("PUT of the same members = %v, %v (%d relations)", res.Change, err, relations())
	}
	// A team PATCH changes the membership of its users.
	e := f.Patch("team", team.ID(), `[{"op":"replace","path":"/users","value":[`+userRef("bob")+`,`+userRef("carol")+`]}]`)
	if num(e["version"]) != 0.2 {
		t.Fatalf("team version = %v", e["version"])
	}
	if got := fmt.Sprint(members(), teamsOf("alice"), teamsOf("carol"), relations()); got != "[bob carol] [] [grp] 2" {
		t.Fatalf("after the team PATCH: %s", got)
	}
	// A user may not put itself in a team: teams is privileged.
	f.withPolicy()
	self := &meridian.Principal{ID: users["alice"].ID(), Name: "alice", Roles: []string{meridian.RoleDataConsumer}}
	_, err = f.E.Patch(f.Ctx, self, "user", store.ByID(users["alice"].ID()), []byte(`[{"op":"add","path":"/teams","value":[`+teamRef("grp")+`]}]`), "")
	WantCode(t, err, meridian.EForbidden)
	// A hard-deleted team leaves no membership behind.
	if _, err := f.E.Delete(f.Ctx, f.Admin, "team", store.ByID(team.ID()), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(teamsOf("bob"), relations()); got != "[] 0" {
		t.Fatalf("after the team is deleted: %s", got)
	}
}

func testTeamOwnersMembersMayEdit(t *testing.T, f *Fixture) {
	f.Hierarchy()
	users := f.createUsers("member", "outsider")
	team := f.Create("team", `{"name":"owners_team","users":[`+userRef("member")+`]}`)
	tbl := f.Create("table", `{"name":"owned","databaseSchema":"svc.db.sch","columns":[],"owners":[`+teamRef("owners_team")+`]}`)
	f.Create("table", `{"name":"other","databaseSchema":"svc.db.sch","columns":[]}`)
	f.withPolicy()
	principal := func(name string) *meridian.Principal {
		return &meridian.Principal{ID: users[name].ID(), Name: name, Roles: []string{meridian.RoleDataConsumer}}
	}
	patch := func(name, fqn string) error {
		_, err := f.E.Patch(f.Ctx, principal(name), "table", store.ByFQN(fqn), []byte(`[{"op":"add","path":"/description","value":"by `+name+`"}]`), "")
		return err
	}
	if err := patch("member", "svc.db.sch.owned"); err != nil {
		t.Fatalf("a member of the owning team may edit: %v", err)
	}
	WantCode(t, patch("outsider", "svc.db.sch.owned"), meridian.EForbidden)
	WantCode(t, patch("member", "svc.db.sch.other"), meridian.EForbidden)
	if _, err := f.E.CreateOrUpdate(f.Ctx, principal("member"), "table", f.Doc(`{"name":"owned","databaseSchema":"svc.db.sch","columns":[],"description":"put"}`)); err != nil {
		t.Fatalf("a member of the owning team may PUT: %v", err)
	}
	if _, err := f.E.Delete(f.Ctx, principal("member"), "table", store.ByID(tbl.ID()), store.DeleteOptions{}); err != nil {
		t.Fatalf("a member of the owning team may soft delete: %v", err)
	}
	if _, err := f.E.Restore(f.Ctx, principal("member"), "table", tbl.ID()); err != nil {
		t.Fatalf("a member of the owning team may restore: %v", err)
	}
	_, err := f.E.Delete(f.Ctx, principal("member"), "table", store.ByID(tbl.ID()), store.DeleteOptions{Hard: true})
	WantCode(t, err, meridian.EForbidden)
	// Leaving the team ends the ownership.
	f.Patch("team", team.ID(), `[{"op":"replace","path":"/users","value":[]}]`)
	WantCode(t, patch("member", "svc.db.sch.owned"), meridian.EForbidden)
}

func testSystemTestDefinitions(t *testing.T, f *Fixture) {
	if _, err := f.E.SeedTestDefinitions(f.Ctx); err != nil {
		t.Fatal(err)
	}
	def, err := f.E.Get(f.Ctx, f.Admin, "testDefinition", store.ByFQN("tableRowCountToBeBetween"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	modified := "System entity [tableRowCountToBeBetween] of type testDefinition can not be modified."
	_, err = f.E.Patch(f.Ctx, f.Admin, "testDefinition", store.ByID(def.ID()), []byte(`[{"op":"add","path":"/description","value":"mine"}]`), "")
	wantRejected(t, modified, err)
	_, err = f.E.Patch(f.Ctx, f.Admin, "testDefinition", store.ByID(def.ID()), []byte(`[{"op":"replace","path":"/provider","value":"user"}]`), "")
	wantRejected(t, modified, err)
	body := def.Clone()
	body["description"] = "mine"
	_, err = f.E.CreateOrUpdate(f.Ctx, f.Admin, "testDefinition", body)
	wantRejected(t, modified, err)
	// Sending it back unchanged is no change, not an error.
	if res, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "testDefinition", def.Clone()); err != nil || res.Change != meridian.EventEntityNoChange {
		t.Fatalf("PUT unchanged = %v, %v", res.Change, err)
	}
	reserved := "Test definition [myCheck] can't have provider system: only the built-in test definitions are system ones. Use provider user."
	mine := `{"name":"myCheck","description":"d","testPlatforms":["OpenMetadata"],"entityType":"TABLE","provider":"system"}`
	_, err = f.E.Create(f.Ctx, f.Admin, "testDefinition", f.Doc(mine))
	wantRejected(t, reserved, err)
	_, err = f.E.CreateOrUpdate(f.Ctx, f.Admin, "testDefinition", f.Doc(mine))
	wantRejected(t, reserved, err)
	// A user named "system" is not the system principal.
	u := f.Create("user", `{"name":"system","email":"system@example.com","roles":["Admin"]}`)
	_, err = f.E.Create(f.Ctx, &meridian.Principal{ID: u.ID(), Name: "system", Roles: []string{meridian.RoleAdmin}}, "testDefinition", f.Doc(mine))
	wantRejected(t, reserved, err)
	user := f.Create("testDefinition", strings.Replace(mine, `"system"`, `"user"`, 1))
	_, err = f.E.Patch(f.Ctx, f.Admin, "testDefinition", store.ByID(user.ID()), []byte(`[{"op":"replace","path":"/provider","value":"system"}]`), "")
	wantRejected(t, reserved, err)
	f.Patch("testDefinition", user.ID(), `[{"op":"add","path":"/description","value":"a user definition changes freely"}]`)
	// The system principal changes system definitions (seeding brings them back).
	system := &meridian.Principal{Name: "system", Roles: []string{meridian.RoleAdmin}}
	if _, err := f.E.Patch(f.Ctx, system, "testDefinition", store.ByID(def.ID()), []byte(`[{"op":"add","path":"/description","value":"changed"}]`), ""); err != nil {
		t.Fatalf("system PATCH: %v", err)
	}
	if n, err := f.E.SeedTestDefinitions(f.Ctx); err != nil || n != 1 {
		t.Fatalf("reseeding restored %d definitions, %v", n, err)
	}
	if _, err := f.E.Create(f.Ctx, system, "testDefinition", f.Doc(strings.Replace(mine, "myCheck", "sysCheck", 1))); err != nil {
		t.Fatalf("system create: %v", err)
	}
}

// testPersonaUsers: a persona's users and a user's
// personas are one relation seen from both sides, apart from team membership.
func testPersonaUsers(t *testing.T, f *Fixture) {
	users := f.createUsers("alice", "bob")
	analyst := f.Create("persona", `{"name":"Analyst","users":[`+userRef("alice")+`]}`)
	namesOf := func(kind, id, field string) string {
		t.Helper()
		var names []string
		for _, r := range asList(f.Get(kind, id, field, "")[field]) {
			names = append(names, r.(map[string]any)["name"].(string))
		}
		return fmt.Sprint(names)
	}
	if got := namesOf("persona", analyst.ID(), "users") + namesOf("user", users["alice"].ID(), "personas"); got != "[alice][Analyst]" {
		t.Fatalf("persona users, alice's personas = %s", got)
	}
	f.Patch("user", users["bob"].ID(), `[{"op":"add","path":"/personas","value":[{"id":"`+analyst.ID()+`","type":"persona"}]}]`)
	if got := namesOf("persona", analyst.ID(), "users"); got != "[alice bob]" {
		t.Fatalf("after bob takes the persona: %s", got)
	}
	if got := namesOf("user", users["bob"].ID(), "teams"); got != "[]" {
		t.Fatalf("a persona is not a team: bob's teams = %s", got)
	}
}
