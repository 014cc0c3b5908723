package storetest

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// fieldCase is one kind with immutable or privileged fields: how to create one, and a
// changed value for each such field.
type fieldCase struct {
	kind string
	// setup creates what the entity needs and returns its create body.
	setup func(f *Fixture) string
	// changed are new values, as JSON, of the kind's immutable and privileged fields.
	changed map[string]func(f *Fixture) string
	// derived are immutable fields that PUT recomputes from others (a test case's
	// entityFQN comes from its entityLink) or that name the entity (a different
	// entityLink is another test case): PUT cannot ask to change them, so only PATCH is
	// checked.
	derived map[string]bool
}

var fieldCases = []fieldCase{
	{kind: "user",
		setup: func(f *Fixture) string { return `{"name":"u1","email":"u1@example.com"}` },
		changed: map[string]func(f *Fixture) string{
			"isBot":   func(*Fixture) string { return `true` },
			"roles":   func(*Fixture) string { return `["Admin"]` },
			"isAdmin": func(*Fixture) string { return `true` },
			"teams": func(f *Fixture) string {
				t := f.Create("team", `{"name":"crew","teamType":"Group"}`)
				return `[{"id":"` + t.ID() + `","type":"team"}]`
			},
		}},
	{kind: "team",
		setup: func(f *Fixture) string { return `{"name":"t1","teamType":"Group"}` },
		changed: map[string]func(f *Fixture) string{
			"defaultRoles": func(*Fixture) string { return `[{"id":"6f1c1a52-8f3e-4c39-9a53-0c1f0b9d3a11","type":"role"}]` },
			"policies":     func(*Fixture) string { return `[{"id":"6f1c1a52-8f3e-4c39-9a53-0c1f0b9d3a12","type":"policy"}]` },
		}},
	{kind: "bot",
		setup: func(f *Fixture) string {
			f.Create("user", `{"name":"botuser","email":"botuser@example.com","isBot":true}`)
			return `{"name":"b1","botUser":"botuser"}`
		},
		changed: map[string]func(f *Fixture) string{
			"botUser": func(f *Fixture) string {
				u := f.Create("user", `{"name":"other","email":"other@example.com","isBot":true}`)
				return `{"id":"` + u.ID() + `","type":"user"}`
			},
		}},
	{kind: "classification",
		setup:   func(f *Fixture) string { return `{"name":"c1","description":"d"}` },
		changed: map[string]func(f *Fixture) string{"mutuallyExclusive": func(*Fixture) string { return `true` }}},
	{kind: "dataContract",
		setup: func(f *Fixture) string {
			f.Hierarchy()
			t := f.Table("governed", `[{"name":"id","dataType":"INT"}]`)
			return `{"name":"dc1","entity":{"id":"` + t.ID() + `","type":"table"}}`
		},
		changed: map[string]func(f *Fixture) string{
			"entity": func(f *Fixture) string {
				t := f.Table("elsewhere", `[{"name":"id","dataType":"INT"}]`)
				return `{"id":"` + t.ID() + `","type":"table"}`
			},
		}},
	{kind: "testCase",
		setup: func(f *Fixture) string {
			f.Hierarchy()
			f.Table("checked", `[{"name":"id","dataType":"INT"}]`)
			f.Create("testDefinition", `{"name":"rowsPositive","description":"d","entityType":"TABLE","testPlatforms":["OpenMetadata"]}`)
			return `{"name":"tc1","entityLink":"<#E::table::svc.db.sch.checked>","testDefinition":"rowsPositive"}`
		},
		changed: map[string]func(f *Fixture) string{
			"entityLink": func(*Fixture) string { return `"<#E::table::svc.db.sch.other>"` },
			"entityFQN":  func(*Fixture) string { return `"svc.db.sch.other"` },
		},
		derived: map[string]bool{"entityLink": true, "entityFQN": true}},
	{kind: meridian.KindTask,
		setup: func(f *Fixture) string { return `{"name":"TASK-1","type":"CustomTask"}` },
		changed: map[string]func(f *Fixture) string{
			"createdBy": func(*Fixture) string {
				return `{"id":"6f1c1a52-8f3e-4c39-9a53-0c1f0b9d3a13","type":"user","name":"mallory"}`
			},
			"createdAt": func(*Fixture) string { return `1` },
			"type":      func(*Fixture) string { return `"TierUpdate"` },
		}},
}

// testImmutableAndPrivilegedFieldsHoldForEveryVerb checks, for every kind with
// immutable or privileged fields, that PUT refuses the changes PATCH refuses, with the
// same error: immutable fields for everyone, privileged ones for non-admins.
func testImmutableAndPrivilegedFieldsHoldForEveryVerb(t *testing.T, f *Fixture) {
	byKind := map[string]fieldCase{}
	for _, c := range fieldCases {
		byKind[c.kind] = c
	}
	for _, k := range f.E.Registry().Kinds() {
		if len(k.Immutable)+len(k.Privileged) == 0 {
			continue
		}
		c, ok := byKind[k.Name]
		if !ok {
			t.Errorf("kind %s has immutable or privileged fields but no case here", k.Name)
			continue
		}
		for _, field := range append(append([]string{}, k.Immutable...), k.Privileged...) {
			if c.changed[field] == nil {
				t.Errorf("kind %s: no changed value for field %s", k.Name, field)
			}
		}
	}
	consumer := &meridian.Principal{ID: "6f1c1a52-8f3e-4c39-9a53-0c1f0b9d3a99", Name: "someone", Roles: []string{meridian.RoleDataConsumer}}
	for _, c := range fieldCases {
		k, _ := f.E.Registry().Kind(c.kind)
		fields := append(append([]string{}, k.Immutable...), k.Privileged...)
		for _, field := range fields {
			t.Run(c.kind+"/"+field, func(t *testing.T) {
				g := newFixture(t, f.open)
				g.E = store.New(store.Config{Driver: g.Driver, Registry: meridian.DefaultRegistry(), Validator: g.valid,
					Policy: adminOnlyPrivileged{}, Sealer: rot13{}})
				body := g.Doc(c.setup(g))
				created, err := g.E.Create(g.Ctx, g.Admin, c.kind, body)
				if err != nil {
					t.Fatalf("create %s: %v", c.kind, err)
				}
				value := c.changed[field](g)
				who := g.Admin
				if !contains(k.Immutable, field) {
					who = consumer
				}
				patch := fmt.Sprintf(`[{"op":"add","path":"/%s","value":%s}]`, field, value)
				_, perr := g.E.Patch(g.Ctx, who, c.kind, store.ByID(created.Entity.ID()), []byte(patch), "")
				if perr == nil {
					t.Fatalf("PATCH changed %s.%s", c.kind, field)
				}
				if c.derived[field] {
					return
				}
				put := body.Clone()
				put[field] = g.Doc(`{"v":` + value + `}`)["v"]
				_, uerr := g.E.CreateOrUpdate(g.Ctx, who, c.kind, put)
				if uerr == nil {
					t.Fatalf("PUT changed %s.%s (PATCH said %v)", c.kind, field, perr)
				}
				WantCode(t, uerr, meridian.ErrorCode(perr))
				WantMessage(t, uerr, meridian.ErrorMessage(perr))
				if got := g.Get(c.kind, created.Entity.ID(), "", store.IncludeAll); num(got["version"]) != 0.1 {
					t.Fatalf("a refused write made version %v", got["version"])
				}
			})
		}
	}
}

// testConcurrentEditsLoseNothing runs 16 concurrent Edits that each add a different
// tag to one entity: every tag is there at the end, each Edit made one version.
func testConcurrentEditsLoseNothing(t *testing.T, f *Fixture) {
	f.Create("classification", `{"name":"Crowd","description":"d"}`)
	const n = 16
	var want []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("t%02d", i)
		f.Create("tag", `{"name":"`+name+`","description":"d","classification":"Crowd"}`)
		want = append(want, "Crowd."+name)
	}
	g := f.Create("glossary", `{"name":"g","description":"d"}`)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, fqn := range want {
		wg.Add(1)
		go func(fqn string) {
			defer wg.Done()
			_, err := f.E.Edit(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), "", func(e meridian.Entity) (meridian.Entity, error) {
				e["tags"] = append(asList(e["tags"]), map[string]any{"tagFQN": fqn})
				return e, nil
			})
			errs <- err
		}(fqn)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("edit: %v", err)
		}
	}
	got := f.Get("glossary", g.ID(), "tags", "")
	var tags []string
	for _, l := range asList(got["tags"]) {
		tags = append(tags, l.(map[string]any)["tagFQN"].(string))
	}
	sort.Strings(tags)
	if fmt.Sprint(tags) != fmt.Sprint(want) {
		t.Fatalf("tags after %d concurrent edits = %v, want %v", n, tags, want)
	}
	if v := num(got["version"]); v < 1.65 || v > 1.75 {
		t.Fatalf("version = %v, want 1.7 (0.1 + 16 edits)", v)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// testRolesAreStoredAsNamesAndAnsweredAsReferences: a user's roles may be sent as
// names or references, are stored as names (the policy reads them), and are answered
// as OpenMetadata's role references.
func testRolesAreStoredAsNamesAndAnsweredAsReferences(t *testing.T, f *Fixture) {
	u := f.Create("user", `{"name":"r1","email":"r1@example.com","roles":["DataSteward"]}`)
	ref := func(e meridian.Entity) map[string]any {
		t.Helper()
		roles := asList(e["roles"])
		if len(roles) != 1 {
			t.Fatalf("roles = %v", e["roles"])
		}
		m, ok := roles[0].(map[string]any)
		if !ok || m["type"] != "role" || m["name"] != "DataSteward" || m["id"] == "" {
			t.Fatalf("role answered as %v, want a role reference", roles[0])
		}
		return m
	}
	first := ref(u)
	// Sending the answered references back changes nothing.
	res, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "user", meridian.Entity{"name": "r1", "email": "r1@example.com",
		"roles": []any{first}})
	if err != nil || res.Change != meridian.EventEntityNoChange {
		t.Fatalf("PUT of the answered roles: %v, %v: %v", res.Change, err, res.Entity["changeDescription"])
	}
	if got := ref(res.Entity); got["id"] != first["id"] {
		t.Fatalf("the role's id changed: %v then %v", first, got)
	}
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	row, err := tx.Get(f.Ctx, "user", u.ID())
	if err != nil {
		t.Fatal(err)
	}
	var stored struct{ Roles []any }
	if err := json.Unmarshal(row.Doc, &stored); err != nil || fmt.Sprint(stored.Roles) != "[DataSteward]" {
		t.Fatalf("stored roles: %s, %v", row.Doc, err)
	}
}

// testACreatesAnswerIsTheCallersOwn: the entity a create answers, one at a time or in
// bulk, shares nothing with what the engine keeps or with the body sent. Changing the
// answer's nested values afterwards changes neither the stored entity nor the body,
// nor the next answer.
func testACreatesAnswerIsTheCallersOwn(t *testing.T, f *Fixture) {
	f.Hierarchy()
	body := func(name string) meridian.Entity {
		return meridian.Entity{"name": name, "databaseSchema": "svc.db.sch", "description": "as sent",
			"columns": []any{map[string]any{"name": "id", "dataType": "INT", "description": "as sent"}}}
	}
	scribble := func(e meridian.Entity) {
		t.Helper()
		col, ok := asList(e["columns"])[0].(map[string]any)
		if !ok {
			t.Fatalf("columns = %v", e["columns"])
		}
		col["description"] = "changed by the caller"
		col["name"] = "renamed"
		if schema, ok := e["databaseSchema"].(map[string]any); ok {
			schema["name"] = "changed by the caller"
		}
	}
	check := func(name string, sent meridian.Entity) {
		t.Helper()
		got, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch."+name), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		col := asList(got["columns"])[0].(map[string]any)
		schema, _ := got["databaseSchema"].(map[string]any)
		if col["description"] != "as sent" || col["name"] != "id" || schema["name"] != "sch" {
			t.Fatalf("%s is stored as %v, %v after its answer was changed", name, got["columns"], got["databaseSchema"])
		}
		sentCol := asList(sent["columns"])[0].(map[string]any)
		if len(sentCol) != 3 || len(sent) != 4 {
			t.Fatalf("the body sent for %s was changed: %v", name, sent)
		}
	}

	one := body("alone")
	res, err := f.E.Create(f.Ctx, f.Admin, "table", one)
	if err != nil {
		t.Fatal(err)
	}
	scribble(res.Entity)
	check("alone", one)

	many := []meridian.Entity{body("bulk1"), body("bulk2")}
	items, err := f.E.BulkCreateOrUpdate(f.Ctx, f.Admin, "table", many)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Err != nil {
			t.Fatal(it.Err)
		}
		scribble(it.Result.Entity)
	}
	check("bulk1", many[0])
	check("bulk2", many[1])

	// The next create is answered as sent, not as the last answer was changed.
	res, err = f.E.Create(f.Ctx, f.Admin, "table", body("after"))
	if err != nil {
		t.Fatal(err)
	}
	if col := asList(res.Entity["columns"])[0].(map[string]any); col["description"] != "as sent" {
		t.Fatalf("the next create is answered with %v", res.Entity["columns"])
	}
}
