package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

func testCreate(t *testing.T, f *Fixture) {
	svc := f.Create("databaseService", `{"name":"prod.mysql","serviceType":"Mysql"}`)
	if svc["fullyQualifiedName"] != `"prod.mysql"` || num(svc["version"]) != 0.1 || svc["deleted"] != false {
		t.Fatalf("service = %v", svc)
	}
	f.Create("database", `{"name":"sales","service":"\"prod.mysql\""}`)
	sch := f.Create("databaseSchema", `{"name":"public","displayName":"Public schema","database":"\"prod.mysql\".sales"}`)
	tbl := f.Create("table", `{"name":"order.items","databaseSchema":"\"prod.mysql\".sales.public",
		"columns":[{"name":"id","dataType":"BIGINT"}]}`)
	if got, want := tbl.FQN(), `"prod.mysql".sales.public."order.items"`; got != want {
		t.Fatalf("fqn = %s, want %s", got, want)
	}
	schemaRef, _ := tbl["databaseSchema"].(map[string]any)
	serviceRef, _ := tbl["service"].(map[string]any)
	if schemaRef["fullyQualifiedName"] != `"prod.mysql".sales.public` || serviceRef["name"] != "prod.mysql" || tbl["serviceType"] != "Mysql" {
		t.Fatalf("parent references = %v / %v / %v", schemaRef, serviceRef, tbl["serviceType"])
	}
	if schemaRef["displayName"] != "Public schema" || schemaRef["href"] == nil || schemaRef["href"] != sch["href"] {
		t.Fatalf("the parent reference %v does not carry the schema's display name and href %v", schemaRef, sch["href"])
	}
	byName, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN(`"prod.mysql".sales.public."order.items"`), store.GetOptions{})
	if err != nil || byName.ID() != tbl.ID() {
		t.Fatalf("get by name = %v, %v", byName, err)
	}
	srv := f.Create("mcpService", `{"name":"mcp","serviceType":"Mcp"}`)
	server := f.Create("mcpServer", `{"name":"files","serverType":"FileSystem","service":"mcp","transportType":"Stdio"}`)
	if server.FQN() != "mcp.files" || srv.FQN() != "mcp" {
		t.Fatalf("mcp server fqn = %s", server.FQN())
	}
	f.Create("classification", `{"name":"PII","description":"personal data"}`)
	tag := f.Create("tag", `{"name":"Sensitive","description":"sensitive","classification":"PII"}`)
	child := f.Create("tag", `{"name":"Email","description":"email","parent":"PII.Sensitive"}`)
	if tag.FQN() != "PII.Sensitive" || child.FQN() != "PII.Sensitive.Email" {
		t.Fatalf("tag fqns = %s, %s", tag.FQN(), child.FQN())
	}
	if c, _ := child["classification"].(map[string]any); c["name"] != "PII" {
		t.Fatalf("child tag inherits classification: %v", child["classification"])
	}
	f.Create("glossary", `{"name":"Business","description":"terms"}`)
	term := f.Create("glossaryTerm", `{"name":"Revenue","description":"money in","glossary":"Business"}`)
	if term.FQN() != "Business.Revenue" || term["entityStatus"] != "Approved" {
		t.Fatalf("term = %v", term)
	}
}

func testCreateRejects(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Create("mcpService", `{"name":"mcp","serviceType":"Mcp"}`)
	f.Table("orders", `[{"name":"id","dataType":"BIGINT"}]`)
	cases := []struct {
		name, kind, body, code, msg string
	}{
		{"missing name", "glossary", `{"description":"x"}`, meridian.EInvalid, "name is required"},
		{"name not a string", "glossary", `{"name":5,"description":"x"}`, meridian.EInvalid, "name must be a string"},
		{"name with ::", "glossary", `{"name":"a::b","description":"x"}`, meridian.EInvalid, "name must not contain '::'"},
		{"name with quote", "glossary", `{"name":"a\"b","description":"x"}`, meridian.EInvalid, `Invalid name a"b`},
		{"oversized name", "glossary", `{"name":"` + strings.Repeat("n", 257) + `","description":"x"}`, meridian.EInvalid, "name size must be between 1 and 256"},
		{"missing parent", "table", `{"name":"t","columns":[]}`, meridian.EInvalid, "databaseSchema is required"},
		{"unknown parent", "table", `{"name":"t","databaseSchema":"svc.db.nope","columns":[]}`, meridian.ENotFound, "databaseSchema instance for svc.db.nope not found"},
		{"duplicate fqn", "table", `{"name":"orders","databaseSchema":"svc.db.sch","columns":[]}`, meridian.EConflict, "Entity already exists"},
		{"missing required field", "mcpServer", `{"name":"s","service":"mcp"}`, meridian.EInvalid, "serverType is required"},
		{"missing field before unknown parent", "mcpServer", `{"name":"s","service":"nope"}`, meridian.EInvalid, "serverType is required"},
		{"wrong enum", "mcpServer", `{"name":"s","service":"mcp","serverType":"Custom","transportType":"Carrier"}`, meridian.EInvalid, ""},
		{"unknown field", "glossary", `{"name":"g","description":"x","colour":"red"}`, meridian.EInvalid, ""},
		{"unknown tag", "glossary", `{"name":"g","description":"x","tags":[{"tagFQN":"No.Such"}]}`, meridian.ENotFound, "tag instance for No.Such not found"},
		{"unknown owner", "glossary", `{"name":"g","description":"x","owners":[{"id":"6f1c1a52-8f3e-4c39-9a53-0c1f0b9d3a11","type":"user"}]}`, meridian.ENotFound, ""},
		{"duplicate column", "table", `{"name":"t2","databaseSchema":"svc.db.sch","columns":[{"name":"a","dataType":"INT"},{"name":"a","dataType":"INT"}]}`, meridian.EInvalid, "columns: column a appears twice"},
		{"undeclared placeholder", "promptTemplate", `{"name":"p","templateContent":"Hello {{who}}","variables":[]}`, meridian.EInvalid, "templateContent: placeholder {{who}} names no declared variable"},
		{"unused required variable", "promptTemplate", `{"name":"p","templateContent":"Hello","variables":[{"name":"who","dataType":"String","required":true}]}`, meridian.EInvalid, "variables: required variable who is not used in templateContent"},
		{"unknown kind", "nonsense", `{"name":"x"}`, meridian.EInvalid, "Unknown entity type nonsense"},
		{"bad entity link", "testCase", `{"name":"c","entityLink":"<#E::table>","testDefinition":"x"}`, meridian.EInvalid, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.E.Create(f.Ctx, f.Admin, c.kind, f.Doc(c.body))
			WantCode(t, err, c.code)
			if c.msg != "" {
				WantMessage(t, err, c.msg)
			}
		})
	}
	ok := f.Create("promptTemplate", `{"name":"greet","templateContent":"Hello {{who}}","variables":[{"name":"who","dataType":"String","required":true}]}`)
	if ok.FQN() != "greet" {
		t.Fatalf("prompt template fqn = %s", ok.FQN())
	}
}

func testListPaging(t *testing.T, f *Fixture) {
	f.Hierarchy()
	for i := 0; i < 7; i++ {
		f.Table(fmt.Sprintf("t%d", i), `[]`)
	}
	var names []string
	after := ""
	for page := 0; ; page++ {
		p, err := f.E.List(f.Ctx, f.Admin, "table", store.ListOptions{Limit: 3, After: after})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 7 {
			t.Fatalf("total = %d, want 7", p.Total)
		}
		if (page == 0) != (p.Before == "") {
			t.Fatalf("page %d before cursor = %q", page, p.Before)
		}
		for _, e := range p.Data {
			names = append(names, e.Name())
		}
		if p.After == "" {
			break
		}
		after = p.After
		if page > 5 {
			t.Fatal("paging does not end")
		}
	}
	if strings.Join(names, ",") != "t0,t1,t2,t3,t4,t5,t6" {
		t.Fatalf("names = %v", names)
	}
	// Walk back from the last page.
	last, _ := f.E.List(f.Ctx, f.Admin, "table", store.ListOptions{Limit: 3, After: after})
	prev, err := f.E.List(f.Ctx, f.Admin, "table", store.ListOptions{Limit: 3, Before: last.Before})
	if err != nil {
		t.Fatal(err)
	}
	if len(prev.Data) != 3 || prev.Data[0].Name() != "t3" || prev.After == "" || prev.Before == "" {
		t.Fatalf("previous page = %v before=%q after=%q", names3(prev), prev.Before, prev.After)
	}
	zero, _ := f.E.List(f.Ctx, f.Admin, "table", store.ListOptions{Limit: 0})
	if len(zero.Data) != 0 || zero.Total != 7 || zero.After != "" {
		t.Fatalf("limit 0 = %+v", zero)
	}
	for _, bad := range []store.ListOptions{{Limit: 3, Before: "x", After: "y"}, {Limit: 3, After: "!!"}, {Limit: -1}, {Include: "some"}, {Fields: "nope"}} {
		_, err := f.E.List(f.Ctx, f.Admin, "table", bad)
		WantCode(t, err, meridian.EInvalid)
	}
}

func names3(p store.Page) []string {
	var n []string
	for _, e := range p.Data {
		n = append(n, e.Name())
	}
	return n
}

func testListFilters(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Create("databaseSchema", `{"name":"other","database":"svc.db"}`)
	f.Table("a", `[]`)
	f.Create("table", `{"name":"b","databaseSchema":"svc.db.other","columns":[]}`)
	gone := f.Table("c", `[]`)
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(gone.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		opts store.ListOptions
		want string
	}{
		{store.ListOptions{Limit: 10}, "a,b"},
		{store.ListOptions{Limit: 10, Filters: map[string]string{"databaseSchema": "svc.db.sch"}}, "a"},
		{store.ListOptions{Limit: 10, Filters: map[string]string{"databaseSchema": "svc.db.sch"}, Include: store.IncludeAll}, "a,c"},
		{store.ListOptions{Limit: 10, Include: store.IncludeDeleted}, "c"},
		{store.ListOptions{Limit: 10, Filters: map[string]string{"service": "svc"}}, "a,b"},
	}
	for _, c := range cases {
		p, err := f.E.List(f.Ctx, f.Admin, "table", c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names3(p), ","); got != c.want || p.Total != len(p.Data) {
			t.Fatalf("list %+v = %s (total %d), want %s", c.opts, got, p.Total, c.want)
		}
	}
}

func testFields(t *testing.T, f *Fixture) {
	f.Hierarchy()
	user := f.Create("user", `{"name":"alice","email":"alice@example.com"}`)
	f.Create("classification", `{"name":"PII","description":"personal"}`)
	f.Create("tag", `{"name":"Sensitive","description":"s","classification":"PII"}`)
	tbl := f.Create("table", `{"name":"t","databaseSchema":"svc.db.sch","columns":[],
		"owners":[{"id":"`+user.ID()+`","type":"user"}],"tags":[{"tagFQN":"PII.Sensitive"}]}`)
	plain := f.Get("table", tbl.ID(), "", "")
	for _, field := range []string{"owners", "tags", "followers"} {
		if _, ok := plain[field]; ok {
			t.Fatalf("%s present without fields: %v", field, plain)
		}
	}
	if _, ok := plain["columns"]; !ok {
		t.Fatalf("columns missing without fields (a table's columns are always answered): %v", plain)
	}
	full := f.Get("table", tbl.ID(), "owners,tags,columns", "")
	owners, _ := full["owners"].([]any)
	if len(owners) != 1 || owners[0].(map[string]any)["name"] != "alice" {
		t.Fatalf("owners = %v", full["owners"])
	}
	tags, _ := full["tags"].([]any)
	if len(tags) != 1 || tags[0].(map[string]any)["labelType"] != "Manual" {
		t.Fatalf("tags = %v", full["tags"])
	}
	if _, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), store.GetOptions{Fields: "owners,bogus"}); meridian.ErrorMessage(err) != "Invalid field name bogus" {
		t.Fatalf("bad field error = %v", err)
	}
}

func testPatchVersions(t *testing.T, f *Fixture) {
	m := f.Create("metric", `{"name":"churn","metricExpression":{"language":"SQL","code":"select 1"},
		"metricType":"RATIO","unitOfMeasurement":"PERCENTAGE","granularity":"MONTH"}`)
	p1 := f.Patch("metric", m.ID(), `[{"op":"add","path":"/description","value":"Monthly churn"}]`)
	if num(p1["version"]) != 0.2 {
		t.Fatalf("version = %v", p1["version"])
	}
	c := changes(t, p1)
	if len(c["fieldsAdded"]) != 1 || c["fieldsAdded"][0]["name"] != "description" || c["fieldsAdded"][0]["newValue"] != "Monthly churn" {
		t.Fatalf("changes = %v", c)
	}
	p2 := f.Patch("metric", m.ID(), `[{"op":"replace","path":"/description","value":"Churn"},{"op":"replace","path":"/metricExpression/code","value":"select 2"}]`)
	c = changes(t, p2)
	if num(p2["version"]) != 0.3 || len(c["fieldsUpdated"]) != 2 || num(c["previousVersion"][0]["v"]) != 0.2 {
		t.Fatalf("version %v changes %v", p2["version"], c)
	}
	upd := map[string]map[string]any{}
	for _, u := range c["fieldsUpdated"] {
		upd[u["name"].(string)] = u
	}
	if upd["description"]["oldValue"] != "Monthly churn" || upd["description"]["newValue"] != "Churn" {
		t.Fatalf("description change = %v", upd["description"])
	}
	if s, ok := upd["metricExpression"]["newValue"].(string); !ok || !strings.Contains(s, `"select 2"`) {
		t.Fatalf("object change must be a JSON string: %v", upd["metricExpression"])
	}
	same := f.Patch("metric", m.ID(), `[{"op":"replace","path":"/description","value":"Churn"}]`)
	if num(same["version"]) != 0.3 {
		t.Fatalf("a no-op patch made version %v", same["version"])
	}
	// Data contract flow from the specification.
	f.Hierarchy()
	tbl := f.Table("orders", `[{"name":"id","dataType":"BIGINT"}]`)
	dc := f.Create("dataContract", `{"name":"orders_contract","entity":{"id":"`+tbl.ID()+`","type":"table"},"entityStatus":"Draft",
		"semantics":[{"name":"hasOwner"}]}`)
	dc = f.Patch("dataContract", dc.ID(), `[{"op":"replace","path":"/entityStatus","value":"Active"}]`)
	c = changes(t, dc)
	if dc["entityStatus"] != "Active" || c["fieldsUpdated"][0]["oldValue"] != "Draft" || c["fieldsUpdated"][0]["newValue"] != "Active" {
		t.Fatalf("status change = %v", c)
	}
	dc = f.Patch("dataContract", dc.ID(), `[{"op":"add","path":"/semantics/-","value":{"name":"fresh"}}]`)
	if c = changes(t, dc); c["fieldsAdded"][0]["name"] != "semantics" || !strings.Contains(c["fieldsAdded"][0]["newValue"].(string), "fresh") {
		t.Fatalf("semantics add = %v", c)
	}
	dc = f.Patch("dataContract", dc.ID(), `[{"op":"remove","path":"/semantics/0"}]`)
	if c = changes(t, dc); len(dc["semantics"].([]any)) != 1 || !strings.Contains(c["fieldsDeleted"][0]["oldValue"].(string), "hasOwner") {
		t.Fatalf("semantics remove = %v / %v", dc["semantics"], c)
	}
	dc = f.Patch("dataContract", dc.ID(), `[{"op":"replace","path":"/sla","value":{"refreshFrequency":{"interval":1,"unit":"day"}}},
		{"op":"add","path":"/schema","value":[{"name":"id","dataType":"BIGINT"}]}]`)
	if num(dc["version"]) != 0.5 {
		t.Fatalf("contract version = %v", dc["version"])
	}
}

func testMajorVersion(t *testing.T, f *Fixture) {
	f.Hierarchy()
	tbl := f.Table("orders", `[{"name":"id","dataType":"BIGINT"},{"name":"note","dataType":"VARCHAR","dataLength":200}]`)
	steps := []struct {
		patch   string
		version float64
	}{
		{`[{"op":"add","path":"/columns/0/description","value":"key"}]`, 0.2},
		{`[{"op":"add","path":"/columns/-","value":{"name":"extra","dataType":"INT"}}]`, 0.3},
		{`[{"op":"replace","path":"/columns/1/dataLength","value":100}]`, 1.3},
		{`[{"op":"replace","path":"/columns/1/dataLength","value":300}]`, 1.4},
		{`[{"op":"remove","path":"/columns/2"}]`, 2.4},
		{`[{"op":"replace","path":"/columns/0/dataType","value":"INT"}]`, 3.4},
	}
	for _, s := range steps {
		e := f.Patch("table", tbl.ID(), s.patch)
		if num(e["version"]) != s.version {
			t.Fatalf("after %s version = %v, want %v (%v)", s.patch, e["version"], s.version, e["changeDescription"])
		}
	}
	e := f.Get("table", tbl.ID(), "columns", "")
	c := changes(t, e)
	if c["fieldsDeleted"][0]["name"] != "columns" || c["fieldsAdded"][0]["name"] != "columns" {
		t.Fatalf("type change recorded as %v", c)
	}
	v2 := f.Patch("table", tbl.ID(), `[{"op":"add","path":"/columns/0/description","value":"the key"}]`)
	if c := changes(t, v2); c["fieldsUpdated"][0]["name"] != "columns.id.description" {
		t.Fatalf("column change name = %v", c)
	}
}

func testPatchRejects(t *testing.T, f *Fixture) {
	f.Hierarchy()
	tbl := f.Table("orders", `[{"name":"id","dataType":"BIGINT"}]`)
	cases := []struct{ name, patch, msg string }{
		{"not an array", `{"op":"add"}`, "Invalid JSON Patch: the body must be a JSON array of operations"},
		{"unknown op", `[{"op":"frobnicate","path":"/description"}]`, ""},
		{"missing value", `[{"op":"add","path":"/description"}]`, ""},
		{"bad pointer", `[{"op":"add","path":"description","value":"x"}]`, ""},
		{"missing path target", `[{"op":"replace","path":"/nope/deeper","value":"x"}]`, ""},
		{"failed test", `[{"op":"test","path":"/name","value":"other"}]`, ""},
		{"id", `[{"op":"replace","path":"/id","value":"6f1c1a52-8f3e-4c39-9a53-0c1f0b9d3a11"}]`, "table attribute id can't be modified"},
		{"fqn", `[{"op":"replace","path":"/fullyQualifiedName","value":"x.y"}]`, "table attribute fullyQualifiedName can't be modified"},
		{"deleted", `[{"op":"replace","path":"/deleted","value":true}]`, "table attribute deleted can't be modified"},
		{"schema violation", `[{"op":"replace","path":"/tableType","value":"Spreadsheet"}]`, ""},
		{"unknown field", `[{"op":"add","path":"/colour","value":"red"}]`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), []byte(c.patch), "")
			WantCode(t, err, meridian.EInvalid)
			if c.msg != "" {
				WantMessage(t, err, c.msg)
			}
		})
	}
	if e := f.Get("table", tbl.ID(), "", ""); num(e["version"]) != 0.1 {
		t.Fatalf("a rejected patch changed the version: %v", e["version"])
	}
	_, err := f.E.Patch(f.Ctx, f.Admin, "table", store.ByFQN("svc.db.sch.none"), []byte(`[]`), "")
	WantCode(t, err, meridian.ENotFound)
}

func testIfMatch(t *testing.T, f *Fixture) {
	g := f.Create("glossary", `{"name":"g","description":"one"}`)
	etag := store.ETag(g)
	if _, err := f.E.Patch(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), []byte(`[{"op":"replace","path":"/description","value":"two"}]`), etag); err != nil {
		t.Fatal(err)
	}
	_, err := f.E.Patch(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), []byte(`[{"op":"replace","path":"/description","value":"three"}]`), etag)
	WantCode(t, err, meridian.EPreconditionFailed)
	WantMessage(t, err, "The entity has been modified by another user. Please refresh and retry.")
}

func testPutMerge(t *testing.T, f *Fixture) {
	f.Hierarchy()
	alice := f.Create("user", `{"name":"alice","email":"alice@example.com"}`)
	f.Create("classification", `{"name":"PII","description":"personal"}`)
	f.Create("tag", `{"name":"A","description":"a","classification":"PII"}`)
	f.Create("tag", `{"name":"B","description":"b","classification":"PII"}`)
	body := `{"name":"orders","databaseSchema":"svc.db.sch","description":"first",
		"owners":[{"id":"` + alice.ID() + `","type":"user"}],"tags":[{"tagFQN":"PII.A"}],
		"columns":[{"name":"id","dataType":"BIGINT","description":"key"},{"name":"gone","dataType":"INT"}]}`
	res, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(body))
	if err != nil || !res.Created || res.Change != meridian.EventEntityCreated {
		t.Fatalf("first PUT = %+v, %v", res, err)
	}
	res, err = f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"orders","databaseSchema":"svc.db.sch",
		"owners":[],"tags":[{"tagFQN":"PII.B"}],"columns":[{"name":"id","dataType":"BIGINT"}]}`))
	if err != nil || res.Created {
		t.Fatalf("second PUT = %+v, %v", res, err)
	}
	e := f.Get("table", res.Entity.ID(), "owners,tags,columns", "")
	if owners, _ := e["owners"].([]any); len(owners) != 1 {
		t.Fatalf("an empty owners list must keep owners: %v", e["owners"])
	}
	if tags, _ := e["tags"].([]any); len(tags) != 2 {
		t.Fatalf("tags must merge: %v", e["tags"])
	}
	cols, _ := e["columns"].([]any)
	if len(cols) != 1 || cols[0].(map[string]any)["description"] != "key" {
		t.Fatalf("columns = %v", cols)
	}
	if num(e["version"]) != 1.1 || e["description"] != "first" {
		t.Fatalf("a removed column is a major change; description kept: version %v description %v", e["version"], e["description"])
	}
	res, err = f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", f.Doc(`{"name":"orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"BIGINT"}]}`))
	if err != nil || res.Change != meridian.EventEntityNoChange || num(res.Entity["version"]) != 1.1 {
		t.Fatalf("unchanged PUT = %v, %+v", err, res)
	}
	bot := &meridian.Principal{Name: "ingestion-bot", Roles: []string{meridian.RoleAdmin}, IsBot: true}
	res, err = f.E.CreateOrUpdate(f.Ctx, bot, "table", f.Doc(`{"name":"orders","databaseSchema":"svc.db.sch","description":"from bot","columns":[{"name":"id","dataType":"BIGINT"}]}`))
	if err != nil || res.Entity["description"] != "first" {
		t.Fatalf("a bot must not overwrite a description: %v %v", err, res.Entity["description"])
	}
}

func testDeleteRestore(t *testing.T, f *Fixture) {
	_, db, sch := f.Hierarchy()
	tbl := f.Table("orders", `[]`)
	_, err := f.E.Delete(f.Ctx, f.Admin, "databaseSchema", store.ByID(sch.ID()), store.DeleteOptions{})
	WantCode(t, err, meridian.EInvalid)
	WantMessage(t, err, "databaseSchema is not empty")
	res, err := f.E.Delete(f.Ctx, f.Admin, "database", store.ByID(db.ID()), store.DeleteOptions{Recursive: true})
	if err != nil || !res.Entity.Deleted() || num(res.Entity["version"]) != 0.2 || res.Change != meridian.EventEntitySoftDeleted {
		t.Fatalf("recursive soft delete = %+v, %v", res, err)
	}
	if _, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), store.GetOptions{}); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("a soft-deleted child must be hidden: %v", err)
	}
	gone := f.Get("table", tbl.ID(), "", store.IncludeDeleted)
	if !gone.Deleted() || num(gone["version"]) != 0.2 {
		t.Fatalf("child after cascade = %v", gone)
	}
	res, err = f.E.Restore(f.Ctx, f.Admin, "database", db.ID())
	if err != nil || res.Entity.Deleted() || num(res.Entity["version"]) != 0.3 || res.Change != meridian.EventEntityRestored {
		t.Fatalf("restore = %+v, %v", res, err)
	}
	back := f.Get("table", tbl.ID(), "", "")
	if back.Deleted() || num(back["version"]) != 0.3 {
		t.Fatalf("child after restore = %v", back)
	}
	_, err = f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), []byte(`[{"op":"add","path":"/description","value":"x"}]`), "")
	if err != nil {
		t.Fatalf("patch after restore: %v", err)
	}
}

func testHardDelete(t *testing.T, f *Fixture) {
	svc, _, _ := f.Hierarchy()
	tbl := f.Table("orders", `[]`)
	_, err := f.E.Delete(f.Ctx, f.Admin, "databaseService", store.ByID(svc.ID()), store.DeleteOptions{Hard: true})
	WantMessage(t, err, "databaseService is not empty")
	res, err := f.E.Delete(f.Ctx, f.Admin, "databaseService", store.ByFQN("svc"), store.DeleteOptions{Hard: true, Recursive: true})
	if err != nil || res.Change != meridian.EventEntityDeleted {
		t.Fatalf("hard delete = %+v, %v", res, err)
	}
	for _, k := range []struct{ kind, id string }{{"table", tbl.ID()}, {"databaseService", svc.ID()}} {
		_, err := f.E.Get(f.Ctx, f.Admin, k.kind, store.ByID(k.id), store.GetOptions{Include: store.IncludeAll})
		WantCode(t, err, meridian.ENotFound)
		_, err = f.E.Versions(f.Ctx, f.Admin, k.kind, k.id)
		WantCode(t, err, meridian.ENotFound)
	}
	// The name can be reused.
	f.Hierarchy()
}

func testVersionHistory(t *testing.T, f *Fixture) {
	f.Create("classification", `{"name":"PII","description":"personal"}`)
	tag := f.Create("tag", `{"name":"Sensitive","description":"v1","classification":"PII"}`)
	f.Patch("tag", tag.ID(), `[{"op":"replace","path":"/description","value":"v2"}]`)
	f.Patch("tag", tag.ID(), `[{"op":"add","path":"/style","value":{"color":"#ff0000"}}]`)
	versions, err := f.E.Versions(f.Ctx, f.Admin, "tag", tag.ID())
	if err != nil || len(versions) != 3 {
		t.Fatalf("versions = %v, %v", versions, err)
	}
	var newest, oldest map[string]any
	_ = json.Unmarshal([]byte(versions[0]), &newest)
	_ = json.Unmarshal([]byte(versions[2]), &oldest)
	if num(newest["version"]) != 0.3 || num(oldest["version"]) != 0.1 || oldest["description"] != "v1" {
		t.Fatalf("newest %v oldest %v", newest["version"], oldest)
	}
	v2, err := f.E.Version(f.Ctx, f.Admin, "tag", tag.ID(), "0.2")
	if err != nil || v2["description"] != "v2" {
		t.Fatalf("version 0.2 = %v, %v", v2, err)
	}
	_, err = f.E.Version(f.Ctx, f.Admin, "tag", tag.ID(), "0.9")
	WantCode(t, err, meridian.ENotFound)
	_, err = f.E.Version(f.Ctx, f.Admin, "tag", tag.ID(), "zero")
	WantCode(t, err, meridian.EInvalid)
	_, err = f.E.Versions(f.Ctx, f.Admin, "tag", "not-a-uuid")
	WantCode(t, err, meridian.EInvalid)
}

func testFollowers(t *testing.T, f *Fixture) {
	u := f.Create("user", `{"name":"bob","email":"bob@example.com"}`)
	bob := &meridian.Principal{ID: u.ID(), Name: "bob", Roles: []string{meridian.RoleDataConsumer}}
	g := f.Create("glossary", `{"name":"g","description":"d"}`)
	res, err := f.E.AddFollower(f.Ctx, bob, "glossary", g.ID(), "")
	if err != nil || res.Event == nil || res.Change != meridian.EventEntityFieldsChanged {
		t.Fatalf("follow = %+v, %v", res, err)
	}
	e := f.Get("glossary", g.ID(), "followers", "")
	if fl, _ := e["followers"].([]any); len(fl) != 1 || num(e["version"]) != 0.1 {
		t.Fatalf("followers %v version %v", e["followers"], e["version"])
	}
	other := f.Create("user", `{"name":"carol","email":"carol@example.com"}`)
	_, err = f.E.AddFollower(f.Ctx, bob, "glossary", g.ID(), other.ID())
	WantCode(t, err, meridian.EForbidden)
	if _, err := f.E.RemoveFollower(f.Ctx, bob, "glossary", g.ID(), u.ID()); err != nil {
		t.Fatal(err)
	}
	e = f.Get("glossary", g.ID(), "followers", "")
	if fl, _ := e["followers"].([]any); len(fl) != 0 {
		t.Fatalf("followers after unfollow = %v", e["followers"])
	}
}

func testOutbox(t *testing.T, f *Fixture) {
	_, db, _ := f.Hierarchy()
	f.Table("orders", `[]`)
	f.Patch("database", db.ID(), `[{"op":"add","path":"/description","value":"x"}]`)
	if _, err := f.E.Delete(f.Ctx, f.Admin, "database", store.ByID(db.ID()), store.DeleteOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	events, err := tx.Events(f.Ctx, store.EventQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.EventType+":"+e.EntityType)
	}
	want := "entityCreated:databaseService,entityCreated:database,entityCreated:databaseSchema,entityCreated:table,entityUpdated:database,entitySoftDeleted:database"
	if strings.Join(got, ",") != want {
		t.Fatalf("events = %v\nwant %s", got, want)
	}
	last := events[len(events)-1]
	if !last.Recursive || last.ChangeDescription == nil || last.Seq <= events[0].Seq {
		t.Fatalf("cascade event = %+v", last)
	}
}

func testConcurrentPatches(t *testing.T, f *Fixture) {
	g := f.Create("glossary", `{"name":"g","description":"d","extension":{}}`)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied = map[int]int{} // patch number -> version it produced
	)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			patch := fmt.Sprintf(`[{"op":"add","path":"/extension/k%d","value":"v%d"}]`, i, i)
			res, err := f.E.Patch(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), []byte(patch), "")
			switch meridian.ErrorCode(err) {
			case "":
				mu.Lock()
				applied[i] = int(num(res.Entity["version"])*10 + 0.5)
				mu.Unlock()
			case meridian.EConflict, meridian.EPreconditionFailed:
			default:
				t.Errorf("patch %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if len(applied) == 0 {
		t.Fatal("no patch applied")
	}
	versions := map[int]bool{}
	for _, v := range applied {
		if versions[v] {
			t.Fatalf("version %d given twice: %v", v, applied)
		}
		versions[v] = true
	}
	for v := 2; v <= 1+len(applied); v++ {
		if !versions[v] {
			t.Fatalf("versions are not consecutive: %v", applied)
		}
	}
	final := f.Get("glossary", g.ID(), "extension", "")
	ext, _ := final["extension"].(map[string]any)
	for i := range applied {
		if ext[fmt.Sprintf("k%d", i)] != fmt.Sprintf("v%d", i) {
			t.Fatalf("applied patch %d lost: extension %v", i, ext)
		}
	}
	if len(ext) != len(applied) || int(num(final["version"])*10+0.5) != 1+len(applied) {
		t.Fatalf("final version %v, extension %v, %d applied", final["version"], ext, len(applied))
	}
	history, _ := f.E.Versions(f.Ctx, f.Admin, "glossary", g.ID())
	if len(history) != 1+len(applied) {
		t.Fatalf("%d versions for %d applied patches", len(history), len(applied))
	}
}

func testPrivilegedFields(t *testing.T, f *Fixture) {
	u := f.Create("user", `{"name":"climber","email":"climber@example.com","roles":["DataConsumer"]}`)
	self := &meridian.Principal{ID: u.ID(), Name: "climber", Roles: []string{meridian.RoleDataConsumer}}
	f.E = store.New(store.Config{Driver: f.Driver, Registry: meridian.DefaultRegistry(), Policy: adminOnlyPrivileged{}})
	_, err := f.E.Patch(f.Ctx, self, "user", store.ByID(u.ID()), []byte(`[{"op":"add","path":"/roles/-","value":"Admin"}]`), "")
	WantCode(t, err, meridian.EForbidden)
	_, err = f.E.CreateOrUpdate(f.Ctx, self, "user", f.Doc(`{"name":"climber","email":"climber@example.com","roles":["Admin"]}`))
	WantCode(t, err, meridian.EForbidden)
	if _, err := f.E.Patch(f.Ctx, self, "user", store.ByID(u.ID()), []byte(`[{"op":"add","path":"/displayName","value":"Climber"}]`), ""); err != nil {
		t.Fatalf("a user may edit the rest of its own entity: %v", err)
	}
	if _, err := f.E.Patch(f.Ctx, f.Admin, "user", store.ByID(u.ID()), []byte(`[{"op":"add","path":"/roles/-","value":"DataSteward"}]`), ""); err != nil {
		t.Fatalf("an admin may change roles: %v", err)
	}
}

// adminOnlyPrivileged allows everything but privileged edits by non-admins.
type adminOnlyPrivileged struct{}

func (adminOnlyPrivileged) Authorize(p *meridian.Principal, op store.Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if op == store.OpEditPrivileged && !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "privileged")
	}
	return nil
}

func testReindex(t *testing.T, f *Fixture) {
	f.Create("glossary", `{"name":"revenue_terms","description":"money"}`)
	// Drop the document behind the engine's back, as a database from before search would be.
	tx, err := f.Driver.Begin(f.Ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := f.E.List(f.Ctx, f.Admin, "glossary", store.ListOptions{Limit: 1})
	if err := tx.Unindex(f.Ctx, p.Data[0].ID()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	find := func() int {
		r, err := f.E.Search(f.Ctx, f.Admin, search.Query{Terms: []string{"revenue"}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Total
	}
	if find() != 0 {
		t.Fatal("the unindexed glossary is still found")
	}
	if n, err := f.E.EnsureSearchIndex(f.Ctx); err != nil || n != 1 || find() != 1 {
		t.Fatalf("rebuild indexed %d, %v; found %d", n, err, find())
	}
	if n, err := f.E.EnsureSearchIndex(f.Ctx); err != nil || n != 0 {
		t.Fatalf("a current index must not be rebuilt: %d, %v", n, err)
	}
}
