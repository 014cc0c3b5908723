package storetest

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// edge builds an AddLineage between two tables named by FQN.
func edge(from, to string, details *store.LineageDetails) store.AddLineage {
	return store.AddLineage{Edge: store.EdgeInput{
		FromEntity:     meridian.EntityRef{Type: "table", FullyQualifiedName: from},
		ToEntity:       meridian.EntityRef{Type: "table", FullyQualifiedName: to},
		LineageDetails: details,
	}}
}

// events returns the outbox events of the given types, oldest first.
func (f *Fixture) events(types ...string) []meridian.ChangeEvent {
	f.T.Helper()
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		f.T.Fatal(err)
	}
	defer tx.Rollback()
	all, err := tx.Events(f.Ctx, store.EventQuery{})
	if err != nil {
		f.T.Fatal(err)
	}
	var out []meridian.ChangeEvent
	for _, e := range all {
		for _, t := range types {
			if e.EventType == t {
				out = append(out, e)
			}
		}
	}
	return out
}

func nodeNames(l store.EntityLineage) string {
	var names []string
	for _, n := range l.Nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func edgeNames(l store.EntityLineage, edges []store.LineageEdge) string {
	name := map[string]string{l.Entity.ID: l.Entity.Name}
	for _, n := range l.Nodes {
		name[n.ID] = n.Name
	}
	var out []string
	for _, e := range edges {
		out = append(out, name[e.FromEntity]+">"+name[e.ToEntity])
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func testLineage(t *testing.T, f *Fixture) {
	f.Hierarchy()
	cols := `[{"name":"id","dataType":"INT"},{"name":"amount","dataType":"DOUBLE"}]`
	a := f.Table("raw_orders", cols)
	b := f.Table("orders", cols)
	f.Table("order_facts", cols)
	f.Table("order_report", cols)
	add := func(l store.AddLineage) string {
		t.Helper()
		change, err := f.E.AddLineage(f.Ctx, f.Admin, l)
		if err != nil {
			t.Fatalf("add lineage: %v", err)
		}
		return change
	}
	details := &store.LineageDetails{SQLQuery: "insert into orders select * from raw_orders",
		ColumnsLineage: []store.ColumnLineage{{FromColumns: []string{"svc.db.sch.raw_orders.id"}, ToColumn: "svc.db.sch.orders.id", Function: "identity"}}}
	if got := add(edge("svc.db.sch.raw_orders", "svc.db.sch.orders", details)); got != meridian.EventEntityLineageAdded {
		t.Fatalf("first add: %s", got)
	}
	// By id this time.
	byID := store.AddLineage{Description: "facts", Edge: store.EdgeInput{
		FromEntity: meridian.EntityRef{Type: "table", ID: b.ID()},
		ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: "svc.db.sch.order_facts"}}}
	add(byID)
	add(edge("svc.db.sch.order_facts", "svc.db.sch.order_report", nil))

	t.Run("walks each direction to its depth", func(t *testing.T) {
		l, err := f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.orders"), store.LineageOptions{Upstream: 1, Downstream: 1})
		if err != nil {
			t.Fatal(err)
		}
		if l.Entity.ID != b.ID() || nodeNames(l) != "order_facts,raw_orders" {
			t.Fatalf("entity %v nodes %s", l.Entity, nodeNames(l))
		}
		if edgeNames(l, l.UpstreamEdges) != "raw_orders>orders" || edgeNames(l, l.DownstreamEdges) != "orders>order_facts" {
			t.Fatalf("edges up %s down %s", edgeNames(l, l.UpstreamEdges), edgeNames(l, l.DownstreamEdges))
		}
		up := l.UpstreamEdges[0]
		if up.LineageDetails == nil || up.LineageDetails.SQLQuery != details.SQLQuery || len(up.LineageDetails.ColumnsLineage) != 1 {
			t.Fatalf("details lost: %+v", up.LineageDetails)
		}
		if l.DownstreamEdges[0].Description != "facts" {
			t.Fatalf("description %q", l.DownstreamEdges[0].Description)
		}
		l, err = f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByID(a.ID()), store.LineageOptions{Downstream: 3})
		if err != nil {
			t.Fatal(err)
		}
		if nodeNames(l) != "order_facts,order_report,orders" || len(l.UpstreamEdges) != 0 || len(l.DownstreamEdges) != 3 ||
			l.DownstreamDepth[b.ID()] != 1 {
			t.Fatalf("nodes %s, %d up, %d down, depths %v", nodeNames(l), len(l.UpstreamEdges), len(l.DownstreamEdges), l.DownstreamDepth)
		}
		b, _ := json.Marshal(l)
		if !strings.Contains(string(b), `"nodes"`) || strings.Contains(string(b), "Depth") {
			t.Fatalf("REST shape: %s", b)
		}
	})
	t.Run("same details change nothing, other details update", func(t *testing.T) {
		before := len(f.events(meridian.EventEntityLineageAdded, meridian.EventEntityLineageUpdated))
		if got := add(edge("svc.db.sch.raw_orders", "svc.db.sch.orders", details)); got != meridian.EventEntityNoChange {
			t.Fatalf("re-add: %s", got)
		}
		if n := len(f.events(meridian.EventEntityLineageAdded, meridian.EventEntityLineageUpdated)); n != before {
			t.Fatalf("a no-op recorded an event: %d -> %d", before, n)
		}
		if got := add(edge("svc.db.sch.raw_orders", "svc.db.sch.orders", &store.LineageDetails{SQLQuery: "select 2"})); got != meridian.EventEntityLineageUpdated {
			t.Fatalf("update: %s", got)
		}
		ev := f.events(meridian.EventEntityLineageUpdated)
		if len(ev) != 1 || ev[0].EntityType != "table" || ev[0].EntityID != b.ID() || ev[0].ChangeDescription == nil ||
			len(ev[0].ChangeDescription.FieldsUpdated) != 1 || ev[0].ChangeDescription.FieldsUpdated[0].Name != "upstreamEdge" ||
			ev[0].CurrentVersion != ev[0].PreviousVersion {
			t.Fatalf("update event %+v", ev)
		}
		added := f.events(meridian.EventEntityLineageAdded)
		if len(added) != 3 || !strings.Contains(added[0].ChangeDescription.FieldsAdded[0].NewValue.(string), "svc.db.sch.raw_orders") {
			t.Fatalf("added events %+v", added)
		}
	})
	t.Run("bad edges are refused", func(t *testing.T) {
		_, err := f.E.AddLineage(f.Ctx, f.Admin, edge("svc.db.sch.orders", "svc.db.sch.orders", nil))
		WantCode(t, err, meridian.EInvalid)
		_, err = f.E.AddLineage(f.Ctx, f.Admin, edge("svc.db.sch.nope", "svc.db.sch.orders", nil))
		WantCode(t, err, meridian.ENotFound)
		_, err = f.E.AddLineage(f.Ctx, f.Admin, store.AddLineage{Edge: store.EdgeInput{
			FromEntity: meridian.EntityRef{FullyQualifiedName: "svc.db.sch.orders"}, ToEntity: meridian.EntityRef{Type: "table", ID: a.ID()}}})
		WantCode(t, err, meridian.EInvalid)
		_, err = f.E.AddLineage(f.Ctx, f.Admin, edge("svc.db.sch.orders", "svc.db.sch.order_facts",
			&store.LineageDetails{ColumnsLineage: []store.ColumnLineage{{FromColumns: []string{"svc.db.sch.orders.nope"}, ToColumn: "svc.db.sch.order_facts.id"}}}))
		WantCode(t, err, meridian.EInvalid)
		_, err = f.E.AddLineage(f.Ctx, f.Admin, edge("svc.db.sch.orders", "svc.db.sch.order_facts", &store.LineageDetails{Source: "Guess"}))
		WantCode(t, err, meridian.EInvalid)
		_, err = f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByID(a.ID()), store.LineageOptions{Upstream: store.MaxLineageDepth + 1})
		WantCode(t, err, meridian.EInvalid)
	})
	t.Run("soft-deleted entities drop out unless asked for", func(t *testing.T) {
		facts, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.order_facts"), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(facts.ID()), store.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		l, err := f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByID(a.ID()), store.LineageOptions{Downstream: 3})
		if err != nil {
			t.Fatal(err)
		}
		if nodeNames(l) != "orders" || len(l.DownstreamEdges) != 1 {
			t.Fatalf("deleted node shown: %s %v", nodeNames(l), l.DownstreamEdges)
		}
		l, err = f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByID(a.ID()), store.LineageOptions{Downstream: 3, IncludeDeleted: true})
		if err != nil {
			t.Fatal(err)
		}
		if nodeNames(l) != "order_facts,order_report,orders" {
			t.Fatalf("includeDeleted: %s", nodeNames(l))
		}
		if _, err := f.E.Restore(f.Ctx, f.Admin, "table", facts.ID()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("delete removes the edge once", func(t *testing.T) {
		facts, _ := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.order_facts"), store.GetOptions{})
		if err := f.E.DeleteLineage(f.Ctx, f.Admin, "table", store.ByID(b.ID()), "table", store.ByID(facts.ID())); err != nil {
			t.Fatal(err)
		}
		err := f.E.DeleteLineage(f.Ctx, f.Admin, "table", store.ByID(b.ID()), "table", store.ByID(facts.ID()))
		WantCode(t, err, meridian.ENotFound)
		WantMessage(t, err, "Lineage edge not found")
		ev := f.events(meridian.EventEntityLineageDeleted)
		if len(ev) != 1 || ev[0].EntityID != facts.ID() || len(ev[0].ChangeDescription.FieldsDeleted) != 1 {
			t.Fatalf("delete event %+v", ev)
		}
		l, _ := f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByID(b.ID()), store.LineageOptions{Downstream: 3})
		if len(l.Nodes) != 0 || len(l.DownstreamEdges) != 0 {
			t.Fatalf("edge still there: %+v", l)
		}
	})
	t.Run("hard delete removes an entity's edges", func(t *testing.T) {
		if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(a.ID()), store.DeleteOptions{Hard: true}); err != nil {
			t.Fatal(err)
		}
		l, err := f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByID(b.ID()), store.LineageOptions{Upstream: 3, IncludeDeleted: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Nodes) != 0 || len(l.UpstreamEdges) != 0 {
			t.Fatalf("edges survived a hard delete: %+v", l)
		}
	})
}

func testLineageCycleAndWidth(t *testing.T, f *Fixture) {
	f.Hierarchy()
	// hub <- up_i for 30 tables, and a cycle hub -> loop -> hub: walking upstream
	// reaches loop, then the edge hub -> loop (32 upstream edges).
	f.Table("hub", `[]`)
	f.Table("loop", `[]`)
	for i := 0; i < 30; i++ {
		name := "up_" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		f.Table(name, `[]`)
		if _, err := f.E.AddLineage(f.Ctx, f.Admin, edge("svc.db.sch."+name, "svc.db.sch.hub", nil)); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range [][2]string{{"hub", "loop"}, {"loop", "hub"}} {
		if _, err := f.E.AddLineage(f.Ctx, f.Admin, edge("svc.db.sch."+e[0], "svc.db.sch."+e[1], nil)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := f.E.GetLineage(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.hub"), store.LineageOptions{Upstream: 10, Downstream: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Nodes) != 31 || len(l.UpstreamEdges) != 32 || len(l.DownstreamEdges) != 2 {
		t.Fatalf("nodes %d, up %d, down %d", len(l.Nodes), len(l.UpstreamEdges), len(l.DownstreamEdges))
	}
	seen := map[string]bool{}
	for _, n := range l.Nodes {
		if seen[n.ID] || n.ID == l.Entity.ID {
			t.Fatalf("node %s listed twice or is the entity", n.Name)
		}
		seen[n.ID] = true
	}
}

func testLineageNeedsEditOnBothEnds(t *testing.T, f *Fixture) {
	f.Hierarchy()
	u := f.Create("user", `{"name":"dc","email":"dc@example.com","roles":["DataConsumer"]}`)
	dc := &meridian.Principal{ID: u.ID(), Name: "dc", Roles: []string{meridian.RoleDataConsumer}}
	owned := `,"owners":[{"type":"user","id":"` + u.ID() + `"}]`
	f.Create("table", `{"name":"mine","databaseSchema":"svc.db.sch","columns":[]`+owned+`}`)
	f.Create("table", `{"name":"mine_too","databaseSchema":"svc.db.sch","columns":[]`+owned+`}`)
	f.Create("table", `{"name":"theirs","databaseSchema":"svc.db.sch","columns":[]}`)
	f.E = store.New(store.Config{Driver: f.Driver, Registry: meridian.DefaultRegistry(), Policy: ownerPolicy{}})
	_, err := f.E.AddLineage(f.Ctx, dc, edge("svc.db.sch.mine", "svc.db.sch.theirs", nil))
	WantCode(t, err, meridian.EForbidden)
	_, err = f.E.AddLineage(f.Ctx, dc, edge("svc.db.sch.theirs", "svc.db.sch.mine", nil))
	WantCode(t, err, meridian.EForbidden)
	if _, err := f.E.AddLineage(f.Ctx, dc, edge("svc.db.sch.mine", "svc.db.sch.mine_too", nil)); err != nil {
		t.Fatalf("owner of both ends: %v", err)
	}
	if _, err := f.E.GetLineage(f.Ctx, dc, "table", store.ByFQN("svc.db.sch.theirs"), store.LineageOptions{Upstream: 1}); err != nil {
		t.Fatalf("anyone may read lineage: %v", err)
	}
}
