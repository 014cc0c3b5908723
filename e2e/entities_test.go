package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// classificationWithTags creates classification cls and its tags.
func classificationWithTags(t *testing.T, c *client, cls string, tags ...string) map[string]map[string]any {
	t.Helper()
	c.must(201, "POST", "/api/v1/classifications", map[string]any{"name": cls, "description": cls + " data"})
	out := map[string]map[string]any{}
	for _, tag := range tags {
		out[tag] = c.must(201, "POST", "/api/v1/tags", map[string]any{"name": tag, "classification": cls, "description": "tag " + tag})
	}
	return out
}

func tagLabel(fqn string) map[string]any { return map[string]any{"tagFQN": fqn} }

// decodeJSONString decodes a changeDescription value that holds JSON in a string.
func decodeJSONString(t *testing.T, v any) any {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("value %v (%T) is not a JSON string", v, v)
	}
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("value %q is not JSON: %v", s, err)
	}
	return out
}

func TestPutCreatesThenUpdatesWithMergeRules(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	classificationWithTags(t, c, "PII", "A", "B")
	alice := s.user(t, "alice", "DataSteward")
	owner := []any{map[string]any{"id": alice.id, "type": "user"}}

	body := map[string]any{"name": "orders", "databaseSchema": schemaFQN, "columns": twoColumns(),
		"tags": []any{tagLabel("PII.A")}, "owners": owner}
	r := c.do("PUT", "/api/v1/tables", body, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("%s: want 201", r)
	}
	created := r.obj(t)
	id := str(created["id"])
	wantVersion(t, created, 0.1)
	if created["fullyQualifiedName"] != "svc.db.sch.orders" {
		t.Errorf("FQN = %v", created["fullyQualifiedName"])
	}
	if got := r.header.Get("X-OpenMetadata-Change"); got != "entityCreated" {
		t.Errorf("X-OpenMetadata-Change = %q, want entityCreated", got)
	}

	t.Run("update: tags merge and an empty owners list keeps the owners", func(t *testing.T) {
		body := map[string]any{"name": "orders", "databaseSchema": schemaFQN, "columns": twoColumns(),
			"tags": []any{tagLabel("PII.B")}, "owners": []any{}, "description": "orders table"}
		r := c.do("PUT", "/api/v1/tables", body, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: want 200", r)
		}
		if got := r.header.Get("X-OpenMetadata-Change"); got != "entityUpdated" {
			t.Errorf("X-OpenMetadata-Change = %q, want entityUpdated", got)
		}
		e := r.obj(t)
		if e["id"] != id {
			t.Errorf("PUT changed the id: %v → %v", id, e["id"])
		}
		wantVersion(t, e, 0.2)
		g := c.must(200, "GET", "/api/v1/tables/"+id+"?fields=tags,owners", nil)
		if got := strings.Join(sortedNames(g["tags"], "tagFQN"), ","); got != "PII.A,PII.B" {
			t.Errorf("tags = %s, want PII.A,PII.B", got)
		}
		if got := strings.Join(sortedNames(g["owners"], "name"), ","); got != "alice" {
			t.Errorf("owners = %v, want alice kept", g["owners"])
		}
		if g["description"] != "orders table" {
			t.Errorf("description = %v", g["description"])
		}
	})

	t.Run("a PUT that changes nothing makes no version", func(t *testing.T) {
		body := map[string]any{"name": "orders", "databaseSchema": schemaFQN, "columns": twoColumns(),
			"description": "orders table"}
		r := c.do("PUT", "/api/v1/tables", body, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: want 200", r)
		}
		wantVersion(t, r.obj(t), 0.2)
		if got := r.header.Get("X-OpenMetadata-Change"); got != "entityNoChange" {
			t.Errorf("X-OpenMetadata-Change = %q, want entityNoChange", got)
		}
	})

	t.Run("a column missing from the body is deleted with a major bump", func(t *testing.T) {
		body := map[string]any{"name": "orders", "databaseSchema": schemaFQN,
			"columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}}}
		r := c.do("PUT", "/api/v1/tables", body, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: want 200", r)
		}
		e := r.obj(t)
		wantVersion(t, e, 1.2)
		cols := list(e["columns"])
		if len(cols) != 1 || object(cols[0])["name"] != "id" {
			t.Errorf("columns = %v, want only id", e["columns"])
		}
		if fieldChange(e, "fieldsDeleted", "columns") == nil {
			t.Errorf("changeDescription = %v, want columns in fieldsDeleted", e["changeDescription"])
		}
		g := c.must(200, "GET", "/api/v1/tables/"+id+"?fields=tags", nil)
		if got := strings.Join(sortedNames(g["tags"], "tagFQN"), ","); got != "PII.A,PII.B" {
			t.Errorf("tags after PUT without tags = %s, want PII.A,PII.B kept", got)
		}
	})

	t.Run("PUT restores a soft-deleted entity", func(t *testing.T) {
		c.must(200, "DELETE", "/api/v1/tables/"+id, nil)
		body := map[string]any{"name": "orders", "databaseSchema": schemaFQN,
			"columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}}}
		r := c.do("PUT", "/api/v1/tables", body, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: want 200", r)
		}
		if e := r.obj(t); e["deleted"] != false || e["id"] != id {
			t.Errorf("PUT on a soft-deleted table = %v", e)
		}
	})

	t.Run("PUT with an unknown tag is 404", func(t *testing.T) {
		body := map[string]any{"name": "orders", "databaseSchema": schemaFQN,
			"columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}}, "tags": []any{tagLabel("PII.Nope")}}
		expectError(t, c.do("PUT", "/api/v1/tables", body, nil), 404, "PII.Nope")
	})
}

func TestMetricPatchRecordsEveryChangedField(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	m := c.must(201, "POST", "/api/v1/metrics", map[string]any{
		"name": "conversion_rate", "description": "old", "granularity": "MONTH", "metricType": "RATIO",
		"unitOfMeasurement": "PERCENTAGE", "metricExpression": map[string]any{"language": "SQL", "code": "SELECT 1"},
	})
	id := str(m["id"])
	wantVersion(t, m, 0.1)

	r := c.do("PATCH", "/api/v1/metrics/"+id, ops(
		patchOp("replace", "/description", "new"),
		patchOp("replace", "/metricExpression/code", "SELECT 2"),
		patchOp("replace", "/granularity", "DAY"),
	), nil)
	if r.status != 200 {
		t.Fatalf("%s: want 200", r)
	}
	e := r.obj(t)
	wantVersion(t, e, 0.2)
	if fc := fieldChange(e, "fieldsUpdated", "description"); fc == nil || fc["oldValue"] != "old" || fc["newValue"] != "new" {
		t.Errorf("description change = %v", fc)
	}
	if fc := fieldChange(e, "fieldsUpdated", "granularity"); fc == nil || fc["oldValue"] != "MONTH" || fc["newValue"] != "DAY" {
		t.Errorf("granularity change = %v", fc)
	}
	fc := fieldChange(e, "fieldsUpdated", "metricExpression")
	if fc == nil {
		t.Fatalf("changeDescription = %v, want metricExpression in fieldsUpdated", e["changeDescription"])
	}
	if old := object(decodeJSONString(t, fc["oldValue"])); old["code"] != "SELECT 1" {
		t.Errorf("metricExpression oldValue = %v", fc["oldValue"])
	}
	if nv := object(decodeJSONString(t, fc["newValue"])); nv["code"] != "SELECT 2" {
		t.Errorf("metricExpression newValue = %v", fc["newValue"])
	}

	t.Run("PATCH by name adds 0.1 again", func(t *testing.T) {
		e := c.must(200, "PATCH", "/api/v1/metrics/name/conversion_rate", ops(patchOp("add", "/displayName", "Conversion")))
		wantVersion(t, e, 0.3)
		if fc := fieldChange(e, "fieldsAdded", "displayName"); fc == nil || fc["newValue"] != "Conversion" {
			t.Errorf("displayName change = %v", e["changeDescription"])
		}
	})

	t.Run("a patch that changes nothing makes no version", func(t *testing.T) {
		r := c.do("PATCH", "/api/v1/metrics/"+id, ops(patchOp("replace", "/description", "new")), nil)
		if r.status != 200 {
			t.Fatalf("%s", r)
		}
		wantVersion(t, r.obj(t), 0.3)
		if got := r.header.Get("X-OpenMetadata-Change"); got != "entityNoChange" {
			t.Errorf("X-OpenMetadata-Change = %q, want entityNoChange", got)
		}
	})

	t.Run("a bad enum value is 400", func(t *testing.T) {
		expectError(t, c.do("PATCH", "/api/v1/metrics/"+id, ops(patchOp("replace", "/granularity", "FORTNIGHT")), nil), 400, "granularity")
	})

	t.Run("renaming onto an existing name is refused", func(t *testing.T) {
		c.must(201, "POST", "/api/v1/metrics", map[string]any{"name": "other"})
		r := c.do("PATCH", "/api/v1/metrics/"+id, ops(patchOp("replace", "/name", "other")), nil)
		if r.status != 400 && r.status != 409 {
			t.Errorf("%s: want 400 or 409", r)
		}
		checkErrorShape(t, r)
	})
}

func TestDataContractStatusAndSectionPatches(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	tbl := table(t, c, schemaFQN, "orders", nil)

	dc := c.must(201, "POST", "/api/v1/dataContracts", map[string]any{
		"name": "orders_contract", "entity": map[string]any{"id": tbl["id"], "type": "table"},
		"semantics": []any{map[string]any{"name": "hasOwner"}},
	})
	id := str(dc["id"])
	if dc["entityStatus"] != "Draft" {
		t.Errorf("entityStatus = %v, want Draft", dc["entityStatus"])
	}
	if ref := object(dc["entity"]); ref["id"] != tbl["id"] || ref["type"] != "table" || ref["fullyQualifiedName"] != "svc.db.sch.orders" {
		t.Errorf("entity reference = %v", dc["entity"])
	}
	wantVersion(t, dc, 0.1)
	path := "/api/v1/dataContracts/" + id

	t.Run("Draft to Active", func(t *testing.T) {
		e := c.must(200, "PATCH", path, ops(patchOp("replace", "/entityStatus", "Active")))
		if e["entityStatus"] != "Active" {
			t.Errorf("entityStatus = %v", e["entityStatus"])
		}
		wantVersion(t, e, 0.2)
		fc := fieldChange(e, "fieldsUpdated", "entityStatus")
		if fc == nil || fc["oldValue"] != "Draft" || fc["newValue"] != "Active" {
			t.Errorf("changeDescription = %v, want entityStatus Draft → Active", e["changeDescription"])
		}
	})

	t.Run("add /semantics/- appends", func(t *testing.T) {
		e := c.must(200, "PATCH", path, ops(patchOp("add", "/semantics/-", map[string]any{"name": "hasDescription", "rule": "description != ''"})))
		names := []string{}
		for _, x := range list(e["semantics"]) {
			names = append(names, str(object(x)["name"]))
		}
		if strings.Join(names, ",") != "hasOwner,hasDescription" {
			t.Errorf("semantics = %v, want hasOwner,hasDescription", names)
		}
		wantVersion(t, e, 0.3)
	})

	t.Run("remove /semantics/0 removes by index", func(t *testing.T) {
		e := c.must(200, "PATCH", path, ops(patchOp("remove", "/semantics/0", nil)))
		sem := list(e["semantics"])
		if len(sem) != 1 || object(sem[0])["name"] != "hasDescription" {
			t.Errorf("semantics = %v, want only hasDescription", e["semantics"])
		}
		wantVersion(t, e, 0.4)
	})

	t.Run("replace /sla and add /schema/-", func(t *testing.T) {
		e := c.must(200, "PATCH", path, ops(
			patchOp("add", "/sla", map[string]any{"refreshFrequency": map[string]any{"interval": 1, "unit": "day"}}),
			patchOp("replace", "/sla", map[string]any{"refreshFrequency": map[string]any{"interval": 6, "unit": "hour"}}),
			patchOp("add", "/schema", []any{}),
			patchOp("add", "/schema/-", map[string]any{"name": "id", "dataType": "BIGINT"}),
		))
		if got := object(object(e["sla"])["refreshFrequency"]); num(got["interval"]) != 6 {
			t.Errorf("sla = %v", e["sla"])
		}
		sch := list(e["schema"])
		if len(sch) != 1 || object(sch[0])["name"] != "id" {
			t.Errorf("schema = %v", e["schema"])
		}
		wantVersion(t, e, 0.5)
		e = c.must(200, "PATCH", path, ops(patchOp("add", "/schema/-", map[string]any{"name": "note", "dataType": "VARCHAR", "dataLength": 20})))
		if len(list(e["schema"])) != 2 {
			t.Errorf("schema after append = %v", e["schema"])
		}
		e = c.must(200, "PATCH", path, ops(patchOp("replace", "/sla", map[string]any{"maxLatency": map[string]any{"value": 2, "unit": "hour"}})))
		if _, ok := object(e["sla"])["refreshFrequency"]; ok || object(e["sla"])["maxLatency"] == nil {
			t.Errorf("replace /sla did not replace the whole section: %v", e["sla"])
		}
	})

	t.Run("bad patches are 400", func(t *testing.T) {
		expectError(t, c.do("PATCH", path, ops(patchOp("replace", "/entityStatus", "Retired")), nil), 400, "entityStatus")
		expectError(t, c.do("PATCH", path, ops(patchOp("remove", "/semantics/9", nil)), nil), 400, "")
		expectError(t, c.do("PATCH", path, ops(patchOp("replace", "/entity", map[string]any{"id": tbl["id"], "type": "table", "name": "x"})), nil), 400, "")
	})

	t.Run("a contract on a missing entity is 404", func(t *testing.T) {
		r := c.do("POST", "/api/v1/dataContracts", map[string]any{"name": "ghost",
			"entity": map[string]any{"id": "00000000-0000-4000-8000-000000000000", "type": "table"}}, nil)
		expectError(t, r, 404, "")
	})
}

func TestTestCasesLinkToTablesAndColumns(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	schemaFQN, _ := hierarchy(t, c, "svc", "db", "sch")
	table(t, c, schemaFQN, "orders", nil)
	steward := s.user(t, "steward", "DataSteward")

	def := c.must(201, "POST", "/api/v1/dataQuality/testDefinitions", map[string]any{
		"name": "rowCountAtLeast", "description": "Row count is at least minValue",
		"testPlatforms": []any{"OpenMetadata"}, "entityType": "TABLE",
		"parameterDefinition": []any{map[string]any{"name": "minValue", "dataType": "INT", "required": true}}})
	c.must(201, "POST", "/api/v1/dataQuality/testDefinitions", map[string]any{
		"name": "columnNotNull", "description": "No nulls", "testPlatforms": []any{"OpenMetadata"}, "entityType": "COLUMN"})
	suite := c.must(201, "POST", "/api/v1/dataQuality/testSuites", map[string]any{"name": "orders_suite"})

	tc := c.must(201, "POST", "/api/v1/dataQuality/testCases", map[string]any{
		"name": "orders_not_empty", "entityLink": "<#E::table::svc.db.sch.orders>",
		"testDefinition": "rowCountAtLeast", "testSuite": "orders_suite",
		"parameterValues": []any{map[string]any{"name": "minValue", "value": "1"}},
		"owners":          []any{map[string]any{"id": steward.id, "type": "user"}},
	})
	id := str(tc["id"])
	if tc["fullyQualifiedName"] != "svc.db.sch.orders.orders_not_empty" {
		t.Errorf("table test case FQN = %v", tc["fullyQualifiedName"])
	}
	if ref := object(tc["testDefinition"]); ref["type"] != "testDefinition" || ref["id"] != def["id"] {
		t.Errorf("testDefinition reference = %v", tc["testDefinition"])
	}
	if ref := object(tc["testSuite"]); ref["type"] != "testSuite" || ref["id"] != suite["id"] {
		t.Errorf("testSuite reference = %v", tc["testSuite"])
	}

	col := c.must(201, "POST", "/api/v1/dataQuality/testCases", map[string]any{
		"name": "id_not_null", "entityLink": "<#E::table::svc.db.sch.orders::columns::id>",
		"testDefinition": map[string]any{"fullyQualifiedName": "columnNotNull", "type": "testDefinition"}})
	if col["fullyQualifiedName"] != "svc.db.sch.orders.id.id_not_null" {
		t.Errorf("column test case FQN = %v", col["fullyQualifiedName"])
	}

	// A result is recorded through the results endpoint; it makes no new version.
	c.must(200, "PUT", "/api/v1/dataQuality/testCases/"+esc("svc.db.sch.orders.orders_not_empty")+"/testCaseResult",
		map[string]any{"timestamp": time.Now().UnixMilli(), "testCaseStatus": "Success", "result": "rows: 10"})

	t.Run("without fields, testCaseResult and owners are absent", func(t *testing.T) {
		e := c.must(200, "GET", "/api/v1/dataQuality/testCases/"+id, nil)
		for _, f := range []string{"testCaseResult", "owners"} {
			if _, ok := e[f]; ok {
				t.Errorf("%s present without fields: %v", f, e[f])
			}
		}
		if e["entityLink"] != "<#E::table::svc.db.sch.orders>" {
			t.Errorf("entityLink = %v", e["entityLink"])
		}
	})

	t.Run("fields=owners adds only owners", func(t *testing.T) {
		e := c.must(200, "GET", "/api/v1/dataQuality/testCases/"+id+"?fields=owners", nil)
		if got := strings.Join(sortedNames(e["owners"], "name"), ","); got != "steward" {
			t.Errorf("owners = %v", e["owners"])
		}
		if _, ok := e["testCaseResult"]; ok {
			t.Errorf("testCaseResult present with fields=owners")
		}
	})

	t.Run("every field with include", func(t *testing.T) {
		for _, p := range []string{
			"/api/v1/dataQuality/testCases/" + id,
			"/api/v1/dataQuality/testCases/name/" + esc("svc.db.sch.orders.orders_not_empty"),
		} {
			e := c.must(200, "GET", p+"?fields=owners,testSuite,testDefinition,testCaseResult&include=all", nil)
			if object(e["testCaseResult"])["testCaseStatus"] != "Success" {
				t.Errorf("%s: testCaseResult = %v", p, e["testCaseResult"])
			}
			if object(e["testDefinition"])["name"] != "rowCountAtLeast" || object(e["testSuite"])["name"] != "orders_suite" {
				t.Errorf("%s: testDefinition = %v testSuite = %v", p, e["testDefinition"], e["testSuite"])
			}
			if len(list(e["owners"])) != 1 {
				t.Errorf("%s: owners = %v", p, e["owners"])
			}
		}
	})

	t.Run("soft-deleted test case needs include", func(t *testing.T) {
		c.must(200, "DELETE", "/api/v1/dataQuality/testCases/"+str(col["id"]), nil)
		expectError(t, c.do("GET", "/api/v1/dataQuality/testCases/"+str(col["id"]), nil, nil), 404, "")
		e := c.must(200, "GET", "/api/v1/dataQuality/testCases/"+str(col["id"])+"?include=deleted&fields=testDefinition", nil)
		if e["deleted"] != true {
			t.Errorf("deleted = %v", e["deleted"])
		}
	})

	bad := []struct{ name, link string }{
		{"not a link", "svc.db.sch.orders"},
		{"missing closing bracket", "<#E::table::svc.db.sch.orders"},
		{"empty fqn", "<#E::table::>"},
		{"column without a name", "<#E::table::svc.db.sch.orders::columns>"},
	}
	for _, b := range bad {
		t.Run("bad entity link: "+b.name, func(t *testing.T) {
			r := c.do("POST", "/api/v1/dataQuality/testCases", map[string]any{"name": "bad", "entityLink": b.link,
				"testDefinition": "rowCountAtLeast"}, nil)
			expectError(t, r, 400, "")
		})
	}
	t.Run("link to a missing table is 404", func(t *testing.T) {
		r := c.do("POST", "/api/v1/dataQuality/testCases", map[string]any{"name": "bad",
			"entityLink": "<#E::table::svc.db.sch.nope>", "testDefinition": "rowCountAtLeast"}, nil)
		expectError(t, r, 404, "")
	})
	t.Run("a bad testCaseResult status is 400", func(t *testing.T) {
		r := c.do("PATCH", "/api/v1/dataQuality/testCases/"+id, ops(patchOp("add", "/testCaseResult",
			map[string]any{"timestamp": time.Now().UnixMilli(), "testCaseStatus": "Great"})), nil)
		expectError(t, r, 400, "")
	})
}

func TestVersionHistoryListsSnapshotsNewestFirst(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	tags := classificationWithTags(t, c, "Tier", "Gold")
	tagID := str(tags["Gold"]["id"])
	c.must(200, "PATCH", "/api/v1/tags/"+tagID, ops(patchOp("replace", "/description", "second")))
	c.must(200, "PATCH", "/api/v1/tags/"+tagID, ops(patchOp("add", "/style", map[string]any{"color": "#FFD700"})))
	_, schemaID := hierarchy(t, c, "svc", "db", "sch")
	c.must(200, "PATCH", "/api/v1/databaseSchemas/"+schemaID, ops(patchOp("add", "/description", "schema v2")))
	c.must(200, "PATCH", "/api/v1/databaseSchemas/"+schemaID, ops(patchOp("replace", "/description", "schema v3")))

	cases := []struct {
		kind, collection, id string
		descAt02             string
	}{
		{"tag", "tags", tagID, "second"},
		{"databaseSchema", "databaseSchemas", schemaID, "schema v2"},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			base := "/api/v1/" + tc.collection + "/" + tc.id
			h := c.must(200, "GET", base+"/versions", nil)
			if h["entityType"] != tc.kind {
				t.Errorf("entityType = %v, want %s", h["entityType"], tc.kind)
			}
			vs := list(h["versions"])
			if len(vs) != 3 {
				t.Fatalf("versions = %d items, want 3: %v", len(vs), vs)
			}
			want := []float64{0.3, 0.2, 0.1}
			for i, v := range vs {
				snap := object(decodeJSONString(t, v))
				if snap["id"] != tc.id {
					t.Errorf("versions[%d] id = %v", i, snap["id"])
				}
				wantVersion(t, snap, want[i])
			}
			v := c.must(200, "GET", base+"/versions/0.2", nil)
			wantVersion(t, v, 0.2)
			if v["description"] != tc.descAt02 {
				t.Errorf("version 0.2 description = %v, want %s", v["description"], tc.descAt02)
			}
			if tc.kind == "tag" {
				if _, ok := v["style"]; ok {
					t.Errorf("version 0.2 already has style: %v", v["style"])
				}
				cur := c.must(200, "GET", base+"/versions/0.3", nil)
				if object(cur["style"])["color"] != "#FFD700" {
					t.Errorf("version 0.3 style = %v", cur["style"])
				}
			}
			expectError(t, c.do("GET", base+"/versions/0.9", nil, nil), 404, "version 0.9 not found")
			expectError(t, c.do("GET", base+"/versions/abc", nil, nil), 400, "")
			expectError(t, c.do("GET", "/api/v1/"+tc.collection+"/not-a-uuid/versions", nil, nil), 400, "")
			expectError(t, c.do("GET", "/api/v1/"+tc.collection+"/not-a-uuid/versions/0.1", nil, nil), 400, "")
			expectError(t, c.do("GET", "/api/v1/"+tc.collection+"/00000000-0000-4000-8000-000000000000/versions", nil, nil), 404, "")
		})
	}

	t.Run("soft delete is a version and stays in the history", func(t *testing.T) {
		c.must(200, "DELETE", "/api/v1/tags/"+tagID, nil)
		h := c.must(200, "GET", "/api/v1/tags/"+tagID+"/versions", nil)
		vs := list(h["versions"])
		if len(vs) != 4 {
			t.Fatalf("versions after soft delete = %d, want 4", len(vs))
		}
		snap := object(decodeJSONString(t, vs[0]))
		if snap["deleted"] != true {
			t.Errorf("newest version deleted = %v", snap["deleted"])
		}
		wantVersion(t, snap, 0.4)
	})
}
