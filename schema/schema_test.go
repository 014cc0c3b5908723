package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/meridian-catalog/meridian"
)

var updateDocs = flag.Bool("update", false, "rewrite ../docs/kinds.md")

// createBodies are minimal create bodies, one per kind, as a client sends them: parents
// and references are named by FQN string. docs/kinds.md shows them.
var createBodies = map[string]string{
	"databaseService":    `{"name": "mysql_prod", "serviceType": "Mysql"}`,
	"dashboardService":   `{"name": "looker", "serviceType": "Looker"}`,
	"messagingService":   `{"name": "kafka", "serviceType": "Kafka"}`,
	"pipelineService":    `{"name": "airflow", "serviceType": "Airflow"}`,
	"storageService":     `{"name": "s3", "serviceType": "S3"}`,
	"mlmodelService":     `{"name": "mlflow", "serviceType": "Mlflow"}`,
	"metadataService":    `{"name": "atlas", "serviceType": "Atlas"}`,
	"searchService":      `{"name": "elastic", "serviceType": "ElasticSearch"}`,
	"apiService":         `{"name": "rest_api", "serviceType": "Rest"}`,
	"mcpService":         `{"name": "mcp_hub", "serviceType": "Mcp"}`,
	"llmService":         `{"name": "openai", "serviceType": "OpenAI"}`,
	"database":           `{"name": "sales", "service": "mysql_prod"}`,
	"databaseSchema":     `{"name": "public", "database": "mysql_prod.sales"}`,
	"table":              `{"name": "orders", "databaseSchema": "mysql_prod.sales.public", "columns": [{"name": "id", "dataType": "BIGINT"}, {"name": "note", "dataType": "VARCHAR", "dataLength": 200}]}`,
	"storedProcedure":    `{"name": "refresh_orders", "databaseSchema": "mysql_prod.sales.public", "storedProcedureCode": {"language": "SQL", "code": "CALL refresh_orders()"}}`,
	"dashboard":          `{"name": "sales_overview", "service": "looker"}`,
	"chart":              `{"name": "revenue_by_month", "service": "looker"}`,
	"dashboardDataModel": `{"name": "orders_model", "service": "looker"}`,
	"pipeline":           `{"name": "nightly_load", "service": "airflow", "tasks": [{"name": "extract"}, {"name": "load", "downstreamTasks": []}]}`,
	"topic":              `{"name": "order_events", "service": "kafka", "partitions": 3}`,
	"container":          `{"name": "raw_bucket", "service": "s3"}`,
	"mlmodel":            `{"name": "churn_model", "service": "mlflow", "algorithm": "xgboost"}`,
	"searchIndex":        `{"name": "orders_index", "service": "elastic"}`,
	"apiCollection":      `{"name": "orders_api", "service": "rest_api"}`,
	"apiEndpoint":        `{"name": "list_orders", "apiCollection": "rest_api.orders_api", "requestMethod": "GET"}`,
	"metric":             `{"name": "conversion_rate", "metricExpression": {"language": "SQL", "code": "SELECT 1"}, "metricType": "RATIO", "unitOfMeasurement": "PERCENTAGE", "granularity": "MONTH"}`,
	"dataContract":       `{"name": "orders_contract", "entity": {"type": "table", "fullyQualifiedName": "mysql_prod.sales.public.orders"}, "semantics": [{"name": "hasOwner"}]}`,
	"testDefinition":     `{"name": "rowCountAtLeast", "description": "Row count is at least minValue", "entityType": "TABLE", "testPlatforms": ["OpenMetadata"]}`,
	"testSuite":          `{"name": "orders_suite"}`,
	"testCase":           `{"name": "orders_not_empty", "entityLink": "<#E::table::mysql_prod.sales.public.orders>", "testDefinition": "tableRowCountToBeBetween", "parameterValues": [{"name": "minValue", "value": "1"}]}`,
	"classification":     `{"name": "PII", "description": "Personal data"}`,
	"tag":                `{"name": "Sensitive", "classification": "PII", "description": "Sensitive personal data"}`,
	"glossary":           `{"name": "Business", "description": "Business terms"}`,
	"glossaryTerm":       `{"name": "Revenue", "glossary": "Business", "description": "Income from sales"}`,
	"domain":             `{"name": "Sales", "description": "The sales domain", "domainType": "Source-aligned"}`,
	"dataProduct":        `{"name": "orders_360", "description": "Everything about orders"}`,
	"user":               `{"name": "alice", "email": "alice@example.com"}`,
	"team":               `{"name": "data_platform", "teamType": "Group"}`,
	"bot":                `{"name": "ingestion_bot", "botUser": "ingestion-bot"}`,
	"mcpServer":          `{"name": "postgres_mcp", "service": "mcp_hub", "serverType": "Database", "transportType": "Stdio"}`,
	"llmModel":           `{"name": "gpt4o", "service": "openai", "baseModel": "gpt-4o"}`,
	"aiApplication":      `{"name": "sales_assistant", "applicationType": "Assistant"}`,
	"eventSubscription":  `{"name": "orders_hook", "destinations": [{"type": "Webhook", "config": {"endpoint": "https://hooks.example.com/meridian"}}]}`,
	"announcement":       `{"name": "orders_maintenance", "entityLink": "<#E::table::svc.db.sch.orders>", "startTime": 1767225600000, "endTime": 1767232800000}`,
	"promptTemplate":     `{"name": "summarize", "templateContent": "Summarize {{text}}", "variables": [{"name": "text", "dataType": "String", "required": true}]}`,
	"contextPlugin":      `{"name": "confluence", "pluginType": "Confluence", "provider": "Atlassian", "connectionConfig": {"baseUrl": "https://example.atlassian.net"}}`,
	"page":               `{"name": "Refund_policy", "pageType": "Article", "description": "How refunds are booked", "content": "# Refunds\n\nRefunds are booked as negative orders."}`,
	"contextMemory":      `{"name": "fiscal_year", "question": "When does our fiscal year start?", "answer": "On 1 February.", "memoryType": "Fact", "memoryScope": "Organization"}`,
	"task":               `{"name": "TASK-00001", "type": "Suggestion", "category": "MetadataUpdate", "about": "<#E::table::svc.db.sch.orders>", "payload": {"fieldPath": "columns.zip.description", "suggestionType": "SuggestDescription", "suggestedValue": "The postal code."}}`,
	"taskFormSchema":     `{"name": "access_request_form", "taskType": "DataAccessRequest", "formSchema": {"type": "object", "properties": {"justification": {"type": "string"}}}}`,
	"shaclShape":         `{"name": "tables_have_owners", "shapes": "@prefix sh: <http://www.w3.org/ns/shacl#> . <urn:s> a sh:NodeShape ; sh:targetClass <urn:T> ."}`,
	"persona":            `{"name": "DataEngineer", "displayName": "Data Engineer", "description": "Builds pipelines", "context": "Prefer lineage and data quality details."}`,
}

func newValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

func kindByName(t *testing.T, name string) *meridian.Kind {
	t.Helper()
	for _, k := range meridian.DefaultKinds() {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no kind %s", name)
	return nil
}

var testUUID = "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f"

func refTo(typ, fqn string) map[string]any {
	parts := strings.Split(fqn, ".")
	return map[string]any{"id": testUUID, "type": typ, "name": parts[len(parts)-1],
		"fullyQualifiedName": fqn, "deleted": false}
}

// document turns a create body into the full document the engine validates: system
// fields set, parent, inherited and reference fields turned into reference objects.
func document(t *testing.T, v *Validator, kindName, body string) meridian.Entity {
	t.Helper()
	k := kindByName(t, kindName)
	e, err := meridian.DecodeEntity([]byte(body))
	if err != nil {
		t.Fatalf("%s body: %v", kindName, err)
	}
	fqn := meridian.QuoteName(e.Name())
	for _, p := range k.Parents {
		if s, ok := e[p.Field].(string); ok {
			e[p.Field] = refTo(p.Kind, s)
			fqn = s + "." + fqn
			break
		}
	}
	for field, types := range k.Refs {
		typ := field
		if len(types) > 0 {
			typ = types[0]
		}
		switch x := e[field].(type) {
		case string:
			e[field] = refTo(typ, x)
		case map[string]any:
			x["id"] = testUUID
		}
	}
	for _, field := range k.Inherit {
		if _, ok := e[field]; ok {
			continue
		}
		if field == "serviceType" {
			e[field] = "Mysql"
		} else {
			e[field] = refTo(field, "parent."+field)
		}
	}
	e["id"] = testUUID
	e["fullyQualifiedName"] = fqn
	e["version"] = 0.1
	e["updatedAt"] = float64(1735689600000)
	e["updatedBy"] = "admin"
	e["href"] = "http://localhost:8585/api/v1/" + k.Collection + "/" + testUUID
	e["deleted"] = false
	v.Defaults(kindName, e)
	return e
}

func TestEveryKindHasACompiledSchema(t *testing.T) {
	v := newValidator(t)
	want := map[string]bool{}
	for _, k := range meridian.DefaultKinds() {
		want[k.Name] = true
		if _, ok := v.schemas[k.Name]; !ok {
			t.Errorf("kind %s has no schema kinds/%s.json", k.Name, k.Name)
		}
		raw, ok := v.Schema(k.Name)
		if !ok || !json.Valid(raw) {
			t.Errorf("Schema(%s) = %v, valid JSON %v", k.Name, ok, json.Valid(raw))
		}
	}
	for _, name := range Kinds() {
		if !want[name] {
			t.Errorf("schema kinds/%s.json names no kind in DefaultKinds", name)
		}
	}
	if _, ok := v.Schema("common"); !ok {
		t.Error("Schema(common) is missing")
	}
	if _, ok := v.Schema("nope"); ok {
		t.Error("Schema(nope) should be missing")
	}
}

type rawSchema struct {
	Properties           map[string]map[string]any `json:"properties"`
	Required             []string                  `json:"required"`
	AdditionalProperties *bool                     `json:"additionalProperties"`
}

func readRaw(t *testing.T, v *Validator, kind string) rawSchema {
	t.Helper()
	b, ok := v.Schema(kind)
	if !ok {
		t.Fatalf("no schema %s", kind)
	}
	var s rawSchema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return s
}

func TestSchemasDeclareEveryKindField(t *testing.T) {
	v := newValidator(t)
	shared := []string{"id", "name", "displayName", "fullyQualifiedName", "description", "version", "updatedAt",
		"updatedBy", "href", "deleted", "changeDescription", "incrementalChangeDescription", "owners", "followers",
		"domains", "reviewers", "experts", "dataProducts", "tags", "extension", "votes", "style", "entityStatus",
		"sourceUrl", "lifeCycle", "certification"}
	const ref = "common.json#/$defs/EntityReference"
	for _, k := range meridian.DefaultKinds() {
		s := readRaw(t, v, k.Name)
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: top level must set additionalProperties false", k.Name)
		}
		has := func(f string) bool { _, ok := s.Properties[f]; return ok }
		for _, f := range append(append([]string{}, shared...), k.Fields...) {
			if !has(f) {
				t.Errorf("%s: no property %s", k.Name, f)
			}
		}
		var refs []string
		for _, p := range k.Parents {
			refs = append(refs, p.Field)
		}
		for f := range k.Refs {
			refs = append(refs, f)
		}
		for _, f := range k.Inherit {
			if f == "serviceType" {
				if s.Properties[f]["type"] != "string" {
					t.Errorf("%s: serviceType must be a string", k.Name)
				}
				continue
			}
			refs = append(refs, f)
		}
		for _, f := range refs {
			if s.Properties[f]["$ref"] != ref {
				t.Errorf("%s: %s must be an EntityReference, got %v", k.Name, f, s.Properties[f])
			}
		}
		if len(s.Required) == 0 || s.Required[0] != "name" {
			t.Errorf("%s: required must start with name, got %v", k.Name, s.Required)
		}
	}
}

func TestMinimalDocumentOfEveryKindIsValid(t *testing.T) {
	v := newValidator(t)
	for _, k := range meridian.DefaultKinds() {
		t.Run(k.Name, func(t *testing.T) {
			body, ok := createBodies[k.Name]
			if !ok {
				t.Fatalf("no create body for %s", k.Name)
			}
			e := document(t, v, k.Name, body)
			if err := v.Validate(k.Name, e); err != nil {
				t.Fatalf("Validate: %v\n%v", err, e)
			}
		})
	}
}

func TestValidateNamesTheFailingField(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		name   string
		kind   string
		body   string
		change func(e meridian.Entity)
		want   string
	}{
		{"missing name", "mcpService", createBodies["mcpService"],
			func(e meridian.Entity) { delete(e, "name") }, "name is required"},
		{"null counts as missing", "mcpServer", createBodies["mcpServer"],
			func(e meridian.Entity) { e["serverType"] = nil }, "serverType is required"},
		{"missing serverType", "mcpServer", createBodies["mcpServer"],
			func(e meridian.Entity) { delete(e, "serverType") }, "serverType is required"},
		{"missing service", "llmModel", createBodies["llmModel"],
			func(e meridian.Entity) { delete(e, "service") }, "service is required"},
		{"missing baseModel", "llmModel", createBodies["llmModel"],
			func(e meridian.Entity) { delete(e, "baseModel") }, "baseModel is required"},
		{"missing templateContent", "promptTemplate", `{"name": "p"}`, nil, "templateContent is required"},
		{"missing columns", "table", `{"name": "t", "databaseSchema": "s.d.sch"}`, nil, "columns is required"},
		{"missing column dataType", "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a", "dataType": "INT"}, {"name": "b"}]}`,
			nil, "columns[1].dataType is required"},
		{"missing nested child dataType", "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a", "dataType": "STRUCT", "children": [{"name": "x"}]}]}`,
			nil, "columns[0].children[0].dataType is required"},
		{"missing glossary description", "glossary", `{"name": "g"}`, nil, "description is required"},
		{"missing domainType", "domain", `{"name": "d", "description": "x"}`, nil, "domainType is required"},
		{"missing testPlatforms", "testDefinition", `{"name": "d", "description": "x"}`, nil, "testPlatforms is required"},
		{"missing entityLink", "testCase", `{"name": "c", "testDefinition": "d"}`, nil, "entityLink is required"},
		{"missing contract entity", "dataContract", `{"name": "c"}`, nil, "entity is required"},
		{"missing pluginType", "contextPlugin", `{"name": "c", "provider": "p"}`, nil, "pluginType is required"},
		{"missing semantics name", "dataContract", `{"name": "c", "entity": {"type": "table"}, "semantics": [{"description": "x"}]}`,
			nil, "semantics[0].name is required"},
		{"missing tagFQN", "table", createBodies["table"],
			func(e meridian.Entity) { e["tags"] = []any{map[string]any{"source": "Classification"}} }, "tags[0].tagFQN is required"},

		{"bad transportType", "mcpServer", createBodies["mcpServer"],
			func(e meridian.Entity) { e["transportType"] = "HTTP" }, "transportType must be one of [Stdio, SSE, StreamableHTTP]"},
		{"bad serverType", "mcpServer", createBodies["mcpServer"],
			func(e meridian.Entity) { e["serverType"] = "Nope" },
			"serverType must be one of [DataAccess, FileSystem, WebAPI, Database, Cloud, Security, Development, Communication, Custom]"},
		{"bad mcp serviceType", "mcpService", `{"name": "m", "serviceType": "Http"}`, nil, "serviceType must be one of [Mcp]"},
		{"bad llm serviceType", "llmService", `{"name": "m", "serviceType": "Acme"}`, nil,
			"serviceType must be one of [OpenAI, Anthropic, AzureOpenAI, Bedrock, VertexAI, Cohere, Mistral, CustomLLM]"},
		{"bad applicationType", "aiApplication", `{"name": "a", "applicationType": "Robot"}`, nil,
			"applicationType must be one of [Chatbot, Agent, Copilot, Assistant, RAG, CodeGenerator, DataAnalyst, AutomationBot, MultiAgent, Custom]"},
		{"bad metric language", "metric", `{"name": "m", "metricExpression": {"language": "Cobol", "code": "x"}}`, nil,
			"metricExpression.language must be one of [SQL, Java, JavaScript, Python, External]"},
		{"bad granularity", "metric", `{"name": "m", "granularity": "DECADE"}`, nil,
			"granularity must be one of [SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR]"},
		{"bad contract status", "dataContract", `{"name": "c", "entity": {"type": "table"}, "entityStatus": "Live"}`, nil,
			"entityStatus must be one of [Draft, Active, Deprecated, In Review, Approved, Rejected]"},
		{"bad column constraint", "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a", "dataType": "INT", "constraint": "CHECK"}]}`,
			nil, "columns[0].constraint must be one of [NULL, NOT_NULL, UNIQUE, PRIMARY_KEY]"},
		{"bad column dataType", "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a", "dataType": "WIDGET"}]}`,
			nil, "columns[0].dataType must be one of ["},
		{"bad test platform", "testDefinition", `{"name": "d", "description": "x", "testPlatforms": ["Jenkins"]}`, nil,
			"testPlatforms[0] must be one of [OpenMetadata, GreatExpectations, DBT, Deequ, Soda, Other]"},
		{"bad domainType", "domain", `{"name": "d", "description": "x", "domainType": "Central"}`, nil,
			"domainType must be one of [Source-aligned, Consumer-aligned, Aggregate]"},
		{"bad test result status", "testCase", createBodies["testCase"],
			func(e meridian.Entity) {
				e["testCaseResult"] = map[string]any{"timestamp": 1.7e12, "testCaseStatus": "Passed"}
			},
			"testCaseResult.testCaseStatus must be one of [Success, Failed, Aborted, Queued]"},

		{"name not a string", "mcpService", createBodies["mcpService"],
			func(e meridian.Entity) { e["name"] = 42.0 }, "name must be a string"},
		{"columns not an array", "table", createBodies["table"],
			func(e meridian.Entity) { e["columns"] = "id" }, "columns must be an array"},
		{"dataLength not an integer", "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a", "dataType": "VARCHAR", "dataLength": 2.5}]}`,
			nil, "columns[0].dataLength must be an integer"},
		{"updatedAt not an integer", "table", createBodies["table"],
			func(e meridian.Entity) { e["updatedAt"] = "yesterday" }, "updatedAt must be an integer"},
		{"deleted not a boolean", "table", createBodies["table"],
			func(e meridian.Entity) { e["deleted"] = "no" }, "deleted must be a boolean"},
		{"version not a number", "table", createBodies["table"],
			func(e meridian.Entity) { e["version"] = "0.1" }, "version must be a number"},
		{"extension not an object", "table", createBodies["table"],
			func(e meridian.Entity) { e["extension"] = []any{} }, "extension must be an object"},
		{"parameter value not a string", "testCase", `{"name": "c", "entityLink": "<#E::table::a.b.c.d>", "testDefinition": "x", "parameterValues": [{"name": "minValue", "value": 1}]}`,
			nil, "parameterValues[0].value must be a string"},
		{"owner without id", "table", createBodies["table"],
			func(e meridian.Entity) { e["owners"] = []any{map[string]any{"type": "user"}} }, "owners[0].id is required"},
		{"owner id not a uuid", "table", createBodies["table"],
			func(e meridian.Entity) { e["owners"] = []any{map[string]any{"id": "alice", "type": "user"}} },
			"owners[0].id must be a valid UUID"},
		{"bad email", "user", `{"name": "u", "email": "not-an-email"}`, nil, "email must be a valid email address"},

		{"unknown top-level field", "mcpServer", createBodies["mcpServer"],
			func(e meridian.Entity) { e["colour"] = "red" }, "Unrecognized field colour"},
		{"two unknown fields, first by name", "mcpServer", createBodies["mcpServer"],
			func(e meridian.Entity) { e["zeta"] = 1.0; e["alpha"] = 1.0 }, "Unrecognized field alpha"},
		{"unknown column field", "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a", "dataType": "INT", "nullable": true}]}`,
			nil, "Unrecognized field columns[0].nullable"},
		{"unknown reference field", "table", createBodies["table"],
			func(e meridian.Entity) {
				e["owners"] = []any{map[string]any{"id": testUUID, "type": "user", "team": "x"}}
			}, "Unrecognized field owners[0].team"},

		{"empty name", "mcpService", createBodies["mcpService"],
			func(e meridian.Entity) { e["name"] = "" }, "name size must be between 1 and 256"},
		{"long name", "mcpService", createBodies["mcpService"],
			func(e meridian.Entity) { e["name"] = strings.Repeat("n", 257) }, "name size must be between 1 and 256"},
		{"name with ::", "mcpService", createBodies["mcpService"],
			func(e meridian.Entity) { e["name"] = "a::b" }, `name must not contain "::"`},
		{"no test platform", "testDefinition", `{"name": "d", "description": "x", "testPlatforms": []}`, nil,
			"testPlatforms must have at least 1 item"},
		{"zero partitions", "topic", `{"name": "t", "service": "kafka", "partitions": 0}`, nil,
			"partitions must be greater than or equal to 1"},

		{"shallowest error wins", "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a"}], "tableType": "Heap"}`,
			nil, "tableType must be one of ["},
		{"unknown field before missing field", "mcpServer", `{"name": "s", "service": "hub", "serverTyp": "Database"}`,
			nil, "Unrecognized field serverTyp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := document(t, v, tt.kind, tt.body)
			if tt.change != nil {
				tt.change(e)
			}
			err := v.Validate(tt.kind, e)
			var me *meridian.Error
			if !errors.As(err, &me) || me.Code != meridian.EInvalid {
				t.Fatalf("Validate = %v, want EInvalid", err)
			}
			if !strings.HasPrefix(me.Message, tt.want) {
				t.Fatalf("message = %q, want %q", me.Message, tt.want)
			}
		})
	}
}

func TestValidateIsDeterministic(t *testing.T) {
	v := newValidator(t)
	body := `{"name": "", "databaseSchema": "s.d.sch", "columns": [{"name": "a"}, {"dataType": "X"}], "a": 1, "b": 2, "tableType": 3}`
	first := ""
	for i := 0; i < 50; i++ {
		err := v.Validate("table", document(t, v, "table", body))
		if err == nil {
			t.Fatal("want an error")
		}
		if i == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("run %d: %q, first run %q", i, err, first)
		}
	}
}

func TestIntegerFieldsAcceptWholeFloats(t *testing.T) {
	v := newValidator(t)
	e := document(t, v, "table", `{"name": "t", "databaseSchema": "s.d.sch", "columns": [{"name": "a", "dataType": "VARCHAR", "dataLength": 255, "ordinalPosition": 1}]}`)
	e["updatedAt"] = float64(1735689600123)
	if _, ok := e["columns"].([]any)[0].(map[string]any)["dataLength"].(float64); !ok {
		t.Fatal("decoded dataLength should be a float64")
	}
	if err := v.Validate("table", e); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	e["updatedAt"] = 1735689600123 // a Go int, as code may set it
	if err := v.Validate("table", e); err != nil {
		t.Fatalf("Validate with int: %v", err)
	}
}

func TestValidateRejectsUnknownKind(t *testing.T) {
	v := newValidator(t)
	err := v.Validate("widget", meridian.Entity{"name": "w"})
	if meridian.ErrorCode(err) != meridian.EInvalid || err.Error() != "Unknown entity type widget" {
		t.Fatalf("Validate = %v", err)
	}
}

func TestDefaultsFillMissingTopLevelFields(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		kind string
		in   meridian.Entity
		want map[string]any
	}{
		{"contextPlugin", meridian.Entity{"name": "c"}, map[string]any{"entityStatus": "Approved", "tags": []any{}}},
		{"contextPlugin", meridian.Entity{"name": "c", "entityStatus": "Draft", "tags": nil},
			map[string]any{"entityStatus": "Draft", "tags": []any{}}},
		{"dataContract", meridian.Entity{"name": "c"}, map[string]any{"entityStatus": "Draft"}},
		{"testCase", meridian.Entity{"name": "c", "useDynamicAssertion": true},
			map[string]any{"computePassedFailedRowCount": false, "useDynamicAssertion": true}},
		{"team", meridian.Entity{"name": "t"}, map[string]any{"teamType": "Group"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			v.Defaults(tt.kind, tt.in)
			for k, want := range tt.want {
				got, _ := json.Marshal(tt.in[k])
				w, _ := json.Marshal(want)
				if string(got) != string(w) {
					t.Errorf("%s = %s, want %s", k, got, w)
				}
			}
		})
	}
	t.Run("copies are independent", func(t *testing.T) {
		a, b := meridian.Entity{}, meridian.Entity{}
		v.Defaults("contextPlugin", a)
		a["tags"] = append(a["tags"].([]any), "x")
		v.Defaults("contextPlugin", b)
		if len(b["tags"].([]any)) != 0 {
			t.Fatal("default value shared between documents")
		}
	})
	t.Run("unknown kind and nil document", func(t *testing.T) {
		v.Defaults("widget", meridian.Entity{})
		v.Defaults("contextPlugin", nil)
	})
}

func TestValidateNeverPanics(t *testing.T) {
	v := newValidator(t)
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	deep := any("x")
	for i := 0; i < 1000; i++ {
		deep = []any{deep}
	}
	type point struct{ X, Y int }
	odd := []any{
		nil, true, 1, -1.5, math.NaN(), math.Inf(1), "", strings.Repeat("x", 5000),
		[]any{nil, map[string]any{"a": nil}}, map[string]any{"": nil}, []string{"a"}, map[string]string{"a": "b"},
		point{1, 2}, &point{}, (*point)(nil), make(chan int), func() {}, cyclic, deep, json.Number("12"),
		json.Number("abc"), meridian.Entity{"name": 1}, []map[string]any{{"name": "c"}}, uint64(math.MaxUint64),
		[]any{[]any{[]any{map[string]any{"tagFQN": []any{}}}}},
	}
	fields := []string{"name", "columns", "tags", "owners", "service", "version", "updatedAt", "extension",
		"entityStatus", "parameterValues", "testCaseResult", "variables", "connectionConfig", "unknownField"}
	for _, k := range meridian.DefaultKinds() {
		if err := v.Validate(k.Name, nil); err == nil {
			t.Errorf("%s: nil document passed", k.Name)
		}
		for _, f := range fields {
			for _, x := range odd {
				e := document(t, v, k.Name, createBodies[k.Name])
				e[f] = x
				_ = v.Validate(k.Name, e)
				e = meridian.Entity{f: x}
				_ = v.Validate(k.Name, e)
			}
		}
	}
	for _, x := range []any{math.NaN(), make(chan int), cyclic, deep} {
		err := v.Validate("table", meridian.Entity{"name": "t", "extension": x})
		if meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("extension %T: Validate = %v, want EInvalid", x, err)
		}
	}
}

func TestValidateDoesNotModifyTheDocument(t *testing.T) {
	v := newValidator(t)
	e := document(t, v, "table", createBodies["table"])
	e["description"] = nil
	before, _ := json.Marshal(e)
	_ = v.Validate("table", e)
	after, _ := json.Marshal(e)
	if string(before) != string(after) {
		t.Fatalf("document changed:\n%s\n%s", before, after)
	}
}

func TestSchemaReturnsACopy(t *testing.T) {
	v := newValidator(t)
	a, _ := v.Schema("table")
	a[0] = 'X'
	b, _ := v.Schema("table")
	if b[0] == 'X' {
		t.Fatal("Schema returned the shared buffer")
	}
}

func TestKindsDocIsCurrent(t *testing.T) {
	v := newValidator(t)
	got := kindsDoc(t, v)
	const file = "../docs/kinds.md"
	if *updateDocs {
		if err := os.MkdirAll("../docs", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./schema -run TestKindsDocIsCurrent -update)", err)
	}
	if string(b) != got {
		t.Fatal("docs/kinds.md is stale: run go test ./schema -run TestKindsDocIsCurrent -update")
	}
}

// kindsDoc renders docs/kinds.md from DefaultKinds, the schemas and createBodies.
func kindsDoc(t *testing.T, v *Validator) string {
	var sb strings.Builder
	sb.WriteString(`# Entity kinds

Generated from ` + "`meridian.DefaultKinds()`" + ` (kinds.go), the JSON Schemas in ` + "`schema/kinds/`" + ` and the
create bodies in ` + "`schema/schema_test.go`" + `. Do not edit by hand: run
` + "`go test ./schema -run TestKindsDocIsCurrent -update`" + `.

- Every collection is served at ` + "`/api/v1/<collection>`" + `.
- A create body names its parent by FQN string, for example
  ` + "`" + `{"name":"orders","databaseSchema":"svc.db.sch","columns":[...]}` + "`" + `. The engine turns the
  string into an entity reference, copies the inherited fields from the parent, sets the system
  fields (id, fullyQualifiedName, version, updatedAt, updatedBy, href, deleted) and then validates
  the full document against ` + "`schema/kinds/<kind>.json`" + `. Unknown top-level fields are rejected.
- A name is 1 to 256 characters and must not contain ` + "`::`" + `. In an FQN a name that contains a
  dot is quoted: ` + "`\"prod.mysql\".sales`" + `.
- "Required on create" lists the schema's required fields plus the parent field the engine demands.

| Entity type | REST collection | Parent field → parent kind | FQN | Required on create |
| - | - | - | - | - |
`)
	kinds := meridian.DefaultKinds()
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Name < kinds[j].Name })
	for _, k := range kinds {
		s := readRaw(t, v, k.Name)
		var parents, fqns []string
		for _, p := range k.Parents {
			parents = append(parents, "`"+p.Field+"` → "+p.Kind)
			fqns = append(fqns, "`<"+p.Field+" FQN>.<name>`")
		}
		parent := "none (top level)"
		if len(parents) > 0 {
			parent = strings.Join(parents, ", or ")
		}
		fqn := "`<name>`"
		switch {
		case k.Locate != nil && k.Name == "testCase":
			fqn = "`<table FQN>.<name>`, or `<table FQN>.<column>.<name>` for a column link (from `entityLink`)"
		case len(fqns) > 0:
			fqn = strings.Join(fqns, " or ")
			if !k.ParentRequired {
				fqn += "; `<name>` without a parent"
			}
		}
		req := append([]string{}, s.Required...)
		if k.ParentRequired {
			var alt []string
			for _, p := range k.Parents {
				alt = append(alt, p.Field)
			}
			field := strings.Join(alt, " or ")
			if !contains(req, field) {
				req = append(req, field)
			}
		}
		for i := range req {
			req[i] = "`" + req[i] + "`"
		}
		sb.WriteString("| " + k.Name + " | `/api/v1/" + k.Collection + "` | " + parent + " | " + fqn + " | " +
			strings.Join(req, ", ") + " |\n")
	}
	sb.WriteString("\n## Minimal create bodies\n")
	for _, k := range kinds {
		var pretty any
		if err := json.Unmarshal([]byte(createBodies[k.Name]), &pretty); err != nil {
			t.Fatalf("%s body: %v", k.Name, err)
		}
		b, _ := json.MarshalIndent(pretty, "", "  ")
		sb.WriteString("\n### " + k.Name + "\n\n`POST /api/v1/" + k.Collection + "`\n\n```json\n" + string(b) + "\n```\n")
		if d := v.defaults[k.Name]; len(d) > 0 {
			var names []string
			for n, val := range d {
				j, _ := json.Marshal(val)
				names = append(names, "`"+n+"` = `"+string(j)+"`")
			}
			sort.Strings(names)
			sb.WriteString("\nDefaults: " + strings.Join(names, ", ") + ".\n")
		}
	}
	return sb.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAPISchemasCompile compiles every shape of api.json, with the shared definitions it
// refers to, as JSON Schema 2020-12, and checks a few bodies against them.
func TestAPISchemasCompile(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	for name, b := range map[string][]byte{"api.json": API(), "kinds/common.json": mustRead(t, "kinds/common.json")} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource("https://meridian.dev/schema/"+name, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var api struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(API(), &api); err != nil {
		t.Fatal(err)
	}
	if len(api.Defs) == 0 {
		t.Fatal("api.json has no $defs")
	}
	compiled := map[string]*jsonschema.Schema{}
	for name := range api.Defs {
		s, err := c.Compile("https://meridian.dev/schema/api.json#/$defs/" + name)
		if err != nil {
			t.Errorf("compile %s: %v", name, err)
			continue
		}
		compiled[name] = s
	}
	for _, tc := range []struct {
		shape, body string
		valid       bool
	}{
		{"Error", `{"code":404,"message":"table instance for x not found"}`, true},
		{"Error", `{"code":"404","message":"x"}`, false},
		{"RestoreEntity", `{"id":"8a0e6c4e-6b7a-4f53-9d5f-1b0b7e0f4a11"}`, true},
		{"RestoreEntity", `{"id":"nope"}`, false},
		{"AddLineage", `{"edge":{"fromEntity":{"type":"table","fullyQualifiedName":"a"},"toEntity":{"type":"table","id":"8a0e6c4e-6b7a-4f53-9d5f-1b0b7e0f4a11"}}}`, true},
		{"AddLineage", `{"edge":{"fromEntity":{"fullyQualifiedName":"a"},"toEntity":{"type":"table"}}}`, false},
	} {
		s := compiled[tc.shape]
		if s == nil {
			t.Errorf("api.json has no %s", tc.shape)
			continue
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); (err == nil) != tc.valid {
			t.Errorf("%s on %s: valid = %v, want %v (%v)", tc.shape, tc.body, err == nil, tc.valid, err)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOnlyADocumentNormalizeWouldChangeIsCopied(t *testing.T) {
	deep := any("leaf")
	for range maxDepth + 1 {
		deep = []any{deep}
	}
	cases := []struct {
		name string
		doc  string // JSON, decoded as a request body is; "" for v
		v    any
		want bool
	}{
		{"a decoded body", `{"name":"t","columns":[{"name":"c","tags":[],"n":1.5}],"x":[null,true]}`, nil, true},
		{"a null member", `{"name":"t","description":null}`, nil, false},
		{"a nested entity", "", map[string]any{"owner": meridian.Entity{"name": "u"}}, false},
		{"a Go slice", "", map[string]any{"tags": []string{"a"}}, false},
		{"an integer", "", map[string]any{"n": 3}, false},
		{"not a number", "", map[string]any{"n": math.NaN()}, false},
		{"too deep", "", map[string]any{"x": deep}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.v
			if c.doc != "" {
				if err := json.Unmarshal([]byte(c.doc), &v); err != nil {
					t.Fatal(err)
				}
			}
			if got := normal(v, 0); got != c.want {
				t.Fatalf("normal = %v, want %v", got, c.want)
			}
			if c.want {
				copied, err := normalize(v, nil, 0)
				if err != nil || !reflect.DeepEqual(copied, v) {
					t.Errorf("normalize changes a normal document: %v, %v", copied, err)
				}
			}
		})
	}
}
