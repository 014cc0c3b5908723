package e2e

// Real MCP clients, end to end: the official TypeScript SDK client
// (@modelcontextprotocol/sdk, through e2e/mcpclients/client.mjs) over stdio (spawning
// `meridian mcp`) and over streamable HTTP with a Bearer token, and the MCP Inspector
// CLI (@modelcontextprotocol/inspector). Both are installed at exact versions by
// scripts/install-node-tools.sh (make deps). Without node or the installed clients the
// tests skip with a message saying what is missing, except under CI=true, where they
// fail.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// issueTools are the MCP tools every real-client run calls at least once.
var issueTools = []string{
	"search_metadata", "get_entity_details", "get_entity_lineage", "create_lineage",
	"root_cause_analysis", "create_classification", "create_tag", "create_domain",
	"create_data_product", "patch_entity", "update_entity", "create_glossary",
	"create_glossary_term", "get_test_definitions", "create_test_case", "create_metric",
}

// mcpClients locates node and the installed clients, or skips (fails under CI) with
// what is missing.
type mcpClients struct {
	node        string // node executable
	dir         string // e2e/mcpclients
	inspectorJS string // the Inspector CLI's entry script
}

func requireMCPClients(t *testing.T) *mcpClients {
	t.Helper()
	node, dir := requireNodeTool(t, "MCP clients", "mcpclients",
		"node_modules/@modelcontextprotocol/sdk/package.json",
		"node_modules/@modelcontextprotocol/inspector/package.json",
		"node_modules/.bin/mcp-inspector")
	return &mcpClients{node: node, dir: dir, inspectorJS: filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")}
}

// nodeRun runs node with args in the clients' directory and returns stdout, stderr and
// the exit code (-1 when it could not run or timed out).
func (m *mcpClients) nodeRun(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.node, args...)
	cmd.Dir = m.dir
	cmd.Env = append(serverEnv(), "NO_COLOR=1")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		code = 0
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("node %s: %v\nstderr: %s", strings.Join(args, " "), err, errb.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("node %s timed out\nstdout: %s\nstderr: %s", strings.Join(args, " "), out.String(), errb.String())
	}
	return out.String(), errb.String(), code
}

// call is one step of a client.mjs script.
type call struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

// clientRun is client.mjs's answer.
type clientRun struct {
	ProtocolVersion string         `json:"protocolVersion"`
	ServerInfo      map[string]any `json:"serverInfo"`
	Tools           []string       `json:"tools"`
	Results         []toolResult   `json:"results"`
}

type toolResult struct {
	Tool              string         `json:"tool"`
	IsError           bool           `json:"isError"`
	StructuredContent map[string]any `json:"structuredContent"`
	Text              *string        `json:"text"`
	Error             *struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// String is the result in one line, for failure messages.
func (r toolResult) String() string {
	b, _ := json.Marshal(r)
	s := string(b)
	if len(s) > 1500 {
		s = s[:1500] + "…"
	}
	return s
}

// content is the result's structuredContent as JSON text, for containment checks.
func (r toolResult) content() string {
	b, _ := json.Marshal(r.StructuredContent)
	return string(b)
}

// tsTarget is how client.mjs reaches the server: the arguments after the script.
type tsTarget []string

func stdioTarget(s *server) tsTarget {
	return append(tsTarget{"--stdio", binPath, "mcp", "--data-dir", s.dataDir}, s.dbArgs...)
}

func httpTarget(s *server, path, token string) tsTarget {
	return tsTarget{"--http", s.base + path, "--token", token}
}

// runTSClient runs client.mjs with the script against target and decodes its answer;
// it fails the test when the client exits non-zero (a transport failure).
func (m *mcpClients) runTSClient(t *testing.T, target tsTarget, script []call) *clientRun {
	t.Helper()
	body, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{filepath.Join(m.dir, "client.mjs")}, target...)
	stdout, stderr, code := m.nodeRun(t, body, args...)
	if code != 0 {
		t.Fatalf("client.mjs %s exited %d\nstdout: %s\nstderr: %s", strings.Join(target, " "), code, stdout, stderr)
	}
	var run clientRun
	if err := json.Unmarshal([]byte(stdout), &run); err != nil {
		t.Fatalf("client.mjs printed no JSON document (%v):\n%s\nstderr: %s", err, stdout, stderr)
	}
	if len(run.Results) != len(script) {
		t.Fatalf("client.mjs answered %d results for %d calls", len(run.Results), len(script))
	}
	for i, r := range run.Results {
		if r.Tool != script[i].Tool {
			t.Fatalf("result %d is for %s, want %s", i, r.Tool, script[i].Tool)
		}
	}
	return &run
}

// goldenToolNames are the tool names of the committed tools/list golden file.
func goldenToolNames(t *testing.T) []string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "tools", "testdata", "tools_list.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatalf("tools_list.json: %v", err)
	}
	var names []string
	for _, tl := range golden {
		names = append(names, tl.Name)
	}
	return names
}

// checkToolList checks that a tools/list answer holds every tool of this issue and of
// the golden file.
func checkToolList(t *testing.T, got []string) {
	t.Helper()
	for _, want := range append(slices.Clone(issueTools), goldenToolNames(t)...) {
		if !slices.Contains(got, want) {
			t.Errorf("tools/list lacks %s; it lists %v", want, got)
		}
	}
}

// catalogFixture is a seeded catalog: a MySQL service with a database and schema,
// three tables with lineage raw_orders → stg_orders → mart_daily_revenue, a fourth
// table with no lineage yet, a classification with a tag on raw_orders, and a test
// case on stg_orders whose latest result is Failed.
type catalogFixture struct {
	service, database, schema string
	raw, stg, mart, report    string // table FQNs
	tag                       string // tag FQN on raw_orders
	failingTest               string // test case FQN on stg_orders
}

func seedCatalog(t *testing.T, s *server) *catalogFixture {
	t.Helper()
	c := s.admin
	f := &catalogFixture{service: "mysql_prod", database: "mysql_prod.shop"}
	f.schema, _ = hierarchy(t, c, "mysql_prod", "shop", "analytics")
	cols := func(extra ...map[string]any) []any {
		out := []any{
			map[string]any{"name": "order_id", "dataType": "BIGINT", "description": "Order identifier."},
			map[string]any{"name": "customer_id", "dataType": "BIGINT"},
		}
		for _, e := range extra {
			out = append(out, e)
		}
		return out
	}
	mk := func(name, desc string, columns []any) string {
		e := c.must(http.StatusCreated, "POST", "/api/v1/tables", map[string]any{
			"name": name, "databaseSchema": f.schema, "description": desc, "columns": columns,
		})
		return str(e["fullyQualifiedName"])
	}
	f.raw = mk("raw_orders", "Orders as loaded from the shop database.",
		cols(map[string]any{"name": "payload", "dataType": "JSON"}))
	f.stg = mk("stg_orders", "Cleaned orders.",
		cols(map[string]any{"name": "amount", "dataType": "DECIMAL", "precision": 12, "scale": 2}))
	f.mart = mk("mart_daily_revenue", "Revenue per day, for finance dashboards.", []any{
		map[string]any{"name": "day", "dataType": "DATE", "description": "Calendar day."},
		map[string]any{"name": "amount", "dataType": "DECIMAL", "precision": 14, "scale": 2, "description": "Revenue in dollars."},
		map[string]any{"name": "order_count", "dataType": "INT"},
	})
	f.report = mk("exec_revenue_snapshot", "Monthly revenue snapshot for the executive report.", []any{
		map[string]any{"name": "month", "dataType": "DATE"},
		map[string]any{"name": "amount", "dataType": "DECIMAL", "precision": 14, "scale": 2},
	})

	classificationWithTags(t, c, "PII", "Sensitive")
	f.tag = "PII.Sensitive"
	c.must(http.StatusOK, "PATCH", "/api/v1/tables/name/"+esc(f.raw), ops(patchOp("add", "/tags", []any{tagLabel(f.tag)})))

	byName := func(fqn string) map[string]any {
		return c.must(http.StatusOK, "GET", "/api/v1/tables/name/"+esc(fqn), nil)
	}
	edge := func(from, to string) {
		a, b := byName(from), byName(to)
		c.must(http.StatusOK, "PUT", "/api/v1/lineage", map[string]any{"edge": map[string]any{
			"fromEntity": map[string]any{"id": a["id"], "type": "table"},
			"toEntity":   map[string]any{"id": b["id"], "type": "table"},
		}})
	}
	edge(f.raw, f.stg)
	edge(f.stg, f.mart)

	// The standard test definitions are seeded by the server.
	for _, def := range []string{"tableRowCountToBeBetween", "columnValuesToBeNotNull"} {
		c.must(http.StatusOK, "GET", "/api/v1/dataQuality/testDefinitions/name/"+def, nil)
	}
	tc := c.must(http.StatusCreated, "POST", "/api/v1/dataQuality/testCases", map[string]any{
		"name": "stg_orders_row_count", "entityLink": "<#E::table::" + f.stg + ">",
		"testDefinition": "tableRowCountToBeBetween", "description": "stg_orders holds between 1000 and 1000000 rows.",
		"parameterValues": []any{
			map[string]any{"name": "minValue", "value": "1000"},
			map[string]any{"name": "maxValue", "value": "1000000"},
		},
	})
	f.failingTest = str(tc["fullyQualifiedName"])
	c.must(http.StatusOK, "PUT", "/api/v1/dataQuality/testCases/"+esc(f.failingTest)+"/testCaseResult", map[string]any{
		"timestamp": time.Now().UnixMilli(), "testCaseStatus": "Failed", "result": "Found 12 rows, expected between 1000 and 1000000.",
	})
	return f
}

// catalogScript calls every tool of the issue on the seeded catalog: reads first, then
// writes, then reads that see the writes.
func catalogScript(f *catalogFixture) []call {
	return []call{
		{"search_metadata", map[string]any{"query": "revenue", "entityType": "table"}},
		{"get_entity_details", map[string]any{"entityType": "table", "fqn": f.mart}},
		{"get_entity_details", map[string]any{"entityType": "table", "fqn": f.stg, "include": []any{"lineage", "quality"}}},
		{"get_entity_lineage", map[string]any{"entityType": "table", "fqn": f.mart, "upstreamDepth": 3, "downstreamDepth": 1}},
		{"root_cause_analysis", map[string]any{"entityType": "table", "fqn": f.mart}},
		{"get_test_definitions", map[string]any{"entityType": "COLUMN", "limit": 50}},
		{"create_classification", map[string]any{"name": "DataSensitivity", "description": "How sensitive a data asset is.", "mutuallyExclusive": true}},
		{"create_tag", map[string]any{"classification": "DataSensitivity", "name": "Confidential", "description": "Internal use only."}},
		{"create_domain", map[string]any{"name": "Finance", "description": "Money in and out.", "domainType": "Consumer-aligned"}},
		{"create_data_product", map[string]any{"name": "RevenueReporting", "description": "Daily and monthly revenue figures.", "domains": []any{"Finance"}}},
		{"create_glossary", map[string]any{"name": "BusinessTerms", "description": "Terms the business uses."}},
		{"create_glossary_term", map[string]any{"glossary": "BusinessTerms", "name": "Revenue", "description": "Income from sales, before costs.", "synonyms": []any{"Sales", "Turnover"}}},
		{"create_metric", map[string]any{"name": "total_revenue", "description": "Sum of order amounts.", "metricExpressionLanguage": "SQL",
			"metricExpressionCode": "SUM(amount)", "metricType": "SUM", "granularity": "DAY", "unitOfMeasurement": "DOLLARS", "domains": []any{"Finance"}}},
		{"patch_entity", map[string]any{"entityType": "table", "fqn": f.stg,
			"patch": `[{"op":"add","path":"/description","value":"Cleaned orders, one row per order."}]`}},
		{"update_entity", map[string]any{"entityType": "table", "fqn": f.mart, "description": "Revenue per day, in dollars, for finance dashboards.",
			"tags": []any{"DataSensitivity.Confidential"}, "tagsMode": "add"}},
		{"create_test_case", map[string]any{"name": "amount_not_null", "fqn": f.mart, "testDefinitionName": "columnValuesToBeNotNull",
			"columnName": "amount", "parameterValues": []any{}, "description": "Every day has a revenue amount."}},
		{"create_lineage", map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": f.mart},
			"toEntity": map[string]any{"type": "table", "fqn": f.report}}},
		{"get_entity_lineage", map[string]any{"entityType": "table", "fqn": f.mart, "upstreamDepth": 1, "downstreamDepth": 1}},
	}
}

// checkCatalogRun asserts on the answers of catalogScript and on what the writes left in
// the catalog, read back over REST. caller is the user the tools ran as.
func checkCatalogRun(t *testing.T, s *server, f *catalogFixture, run *clientRun, caller string) {
	t.Helper()
	if run.ProtocolVersion != "2025-11-25" || run.ServerInfo["name"] != "meridian" {
		t.Errorf("initialize: protocolVersion %q serverInfo %v", run.ProtocolVersion, run.ServerInfo)
	}
	checkToolList(t, run.Tools)
	called := map[string]bool{}
	res := map[string]toolResult{} // the first result of each tool
	for _, r := range run.Results {
		called[r.Tool] = true
		if _, ok := res[r.Tool]; !ok {
			res[r.Tool] = r
		}
		if r.Error != nil || r.IsError || r.StructuredContent == nil {
			t.Errorf("%s failed: %s", r.Tool, r)
		}
	}
	for _, name := range issueTools {
		if !called[name] {
			t.Errorf("the script does not call %s", name)
		}
	}
	if t.Failed() {
		return // the answers below would only repeat the failures
	}

	t.Run("search_metadata finds the table by a word of its name", func(t *testing.T) {
		r := res["search_metadata"]
		var fqns []string
		for _, h := range list(r.StructuredContent["results"]) {
			fqns = append(fqns, str(object(h)["fullyQualifiedName"]))
		}
		if !slices.Contains(fqns, f.mart) {
			t.Errorf("search revenue: hits %v, want %s; %s", fqns, f.mart, r)
		}
	})
	t.Run("get_entity_details returns the columns", func(t *testing.T) {
		r := res["get_entity_details"].StructuredContent
		var names []string
		for _, col := range list(r["columns"]) {
			names = append(names, str(object(col)["name"]))
		}
		if strings.Join(names, ",") != "day,amount,order_count" || r["fullyQualifiedName"] != f.mart {
			t.Errorf("details: fqn %v columns %v", r["fullyQualifiedName"], names)
		}
	})
	t.Run("get_entity_details includes lineage and quality", func(t *testing.T) {
		r := run.Results[2]
		sc := r.StructuredContent
		if object(sc["lineage"]) == nil || object(sc["quality"]) == nil || sc["lineageError"] != nil || sc["qualityError"] != nil {
			t.Errorf("details of %s with include lineage, quality: %s", f.stg, r)
		}
		for _, want := range []string{f.raw, f.mart, f.failingTest} {
			if !strings.Contains(r.content(), `"`+want+`"`) {
				t.Errorf("details of %s with include lineage, quality do not mention %s: %s", f.stg, want, r)
			}
		}
	})
	t.Run("get_entity_lineage has the upstream nodes", func(t *testing.T) {
		r := res["get_entity_lineage"]
		up := map[string]float64{}
		for _, n := range list(r.StructuredContent["nodes"]) {
			if n := object(n); n["direction"] == "upstream" {
				up[str(n["fqn"])] = num(n["depth"])
			}
		}
		if up[f.stg] != 1 || up[f.raw] != 2 || len(up) != 2 {
			t.Errorf("upstream nodes of %s (fqn: depth) = %v, want %s at 1 and %s at 2: %s", f.mart, up, f.stg, f.raw, r)
		}
		if edges := list(r.StructuredContent["upstreamEdges"]); len(edges) != 2 {
			t.Errorf("upstreamEdges = %v, want 2 edges", edges)
		}
	})
	t.Run("create_lineage adds the edge that get_entity_lineage then shows", func(t *testing.T) {
		created := res["create_lineage"].StructuredContent
		if created["fromEntity"] != f.mart || created["toEntity"] != f.report {
			t.Errorf("create_lineage = %v", created)
		}
		last := run.Results[len(run.Results)-1]
		var down []string
		for _, e := range list(last.StructuredContent["downstreamEdges"]) {
			down = append(down, str(object(e)["fromEntity"])+" -> "+str(object(e)["toEntity"]))
		}
		if want := f.mart + " -> " + f.report; !slices.Contains(down, want) {
			t.Errorf("downstream edges after create_lineage = %v, want %s", down, want)
		}
	})
	t.Run("root_cause_analysis finds the failing upstream test", func(t *testing.T) {
		r := res["root_cause_analysis"]
		sc := r.StructuredContent
		if sc["status"] != "failed" || num(sc["failingUpstreamNodesCount"]) < 1 || sc["rootHasFailingTests"] != false {
			t.Errorf("RCA status %v failingUpstreamNodesCount %v rootHasFailingTests %v, want failed, >= 1, false: %s",
				sc["status"], sc["failingUpstreamNodesCount"], sc["rootHasFailingTests"], r)
		}
		var failing []string
		for _, n := range list(sc["failingUpstreamNodes"]) {
			for _, tc := range list(object(n)["failingTests"]) {
				failing = append(failing, str(object(n)["fqn"])+": "+str(object(tc)["fqn"])+" "+str(object(tc)["testCaseStatus"]))
			}
		}
		if want := f.stg + ": " + f.failingTest + " Failed"; !slices.Contains(failing, want) {
			t.Errorf("RCA failing upstream tests = %v, want %s", failing, want)
		}
	})
	t.Run("get_test_definitions lists column tests", func(t *testing.T) {
		r := res["get_test_definitions"]
		var names []string
		for _, d := range list(r.StructuredContent["data"]) {
			d := object(d)
			names = append(names, str(d["name"]))
			if d["entityType"] != "COLUMN" {
				t.Errorf("entityType COLUMN listed %s of entityType %v", d["name"], d["entityType"])
			}
		}
		if !slices.Contains(names, "columnValuesToBeNotNull") {
			t.Errorf("COLUMN test definitions %v lack columnValuesToBeNotNull", names)
		}
	})

	t.Run("the created entities exist over REST", func(t *testing.T) {
		c := s.client(t, s.adminToken)
		for _, tool := range issueTools {
			if strings.HasPrefix(tool, "create_") && tool != "create_lineage" {
				if ct := res[tool].StructuredContent["changeType"]; ct != "entityCreated" {
					t.Errorf("%s changeType = %v, want entityCreated", tool, ct)
				}
			}
		}
		for tool, path := range map[string]string{
			"create_classification": "/api/v1/classifications/name/",
			"create_tag":            "/api/v1/tags/name/",
			"create_domain":         "/api/v1/domains/name/",
			"create_data_product":   "/api/v1/dataProducts/name/",
			"create_glossary":       "/api/v1/glossaries/name/",
			"create_glossary_term":  "/api/v1/glossaryTerms/name/",
			"create_metric":         "/api/v1/metrics/name/",
			"create_test_case":      "/api/v1/dataQuality/testCases/name/",
		} {
			sc := res[tool].StructuredContent
			fqn := str(sc["fullyQualifiedName"])
			if fqn == "" {
				t.Errorf("%s answered no fullyQualifiedName: %s", tool, res[tool])
				continue
			}
			if r := c.do("GET", path+esc(fqn), nil, nil); r.status != http.StatusOK {
				t.Errorf("%s created %s, but %s", tool, fqn, r)
			}
		}
		want := map[string]string{
			"create_tag": "DataSensitivity.Confidential", "create_data_product": "RevenueReporting",
			"create_glossary_term": "BusinessTerms.Revenue", "create_metric": "total_revenue",
		}
		for tool, fqn := range want {
			if got := str(res[tool].StructuredContent["fullyQualifiedName"]); got != fqn {
				t.Errorf("%s fullyQualifiedName = %q, want %q", tool, got, fqn)
			}
		}
		term := c.must(http.StatusOK, "GET", "/api/v1/glossaryTerms/name/BusinessTerms.Revenue", nil)
		if syn := list(term["synonyms"]); len(syn) != 2 {
			t.Errorf("glossary term synonyms = %v", term["synonyms"])
		}
		dp := c.must(http.StatusOK, "GET", "/api/v1/dataProducts/name/RevenueReporting?fields=domains", nil)
		if d := list(dp["domains"]); len(d) != 1 || str(object(d[0])["fullyQualifiedName"]) != "Finance" {
			t.Errorf("data product domains = %v", dp["domains"])
		}
		tc := c.must(http.StatusOK, "GET", "/api/v1/dataQuality/testCases/name/"+esc(str(res["create_test_case"].StructuredContent["fullyQualifiedName"])), nil)
		if link := str(tc["entityLink"]); link != "<#E::table::"+f.mart+"::columns::amount>" {
			t.Errorf("test case entityLink = %q, want the amount column of %s", link, f.mart)
		}
	})
	t.Run("patch_entity and update_entity changes are visible over REST", func(t *testing.T) {
		c := s.client(t, s.adminToken)
		stg := c.must(http.StatusOK, "GET", "/api/v1/tables/name/"+esc(f.stg), nil)
		if stg["description"] != "Cleaned orders, one row per order." {
			t.Errorf("after patch_entity, %s description = %v", f.stg, stg["description"])
		}
		mart := c.must(http.StatusOK, "GET", "/api/v1/tables/name/"+esc(f.mart)+"?fields=tags", nil)
		if mart["description"] != "Revenue per day, in dollars, for finance dashboards." || mart["updatedBy"] != caller {
			t.Errorf("after update_entity by %s, %s description = %v updatedBy %v", caller, f.mart, mart["description"], mart["updatedBy"])
		}
		var tags []string
		for _, tg := range list(mart["tags"]) {
			tags = append(tags, str(object(tg)["tagFQN"]))
		}
		if !slices.Contains(tags, "DataSensitivity.Confidential") {
			t.Errorf("after update_entity, %s tags = %v", f.mart, tags)
		}
		if changed := list(res["update_entity"].StructuredContent["changed"]); len(changed) == 0 {
			t.Errorf("update_entity answered no changed fields: %s", res["update_entity"])
		}
	})
}

func TestTypeScriptSDKOverStdio(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	f := seedCatalog(t, s)
	// `meridian mcp` opens the same store as the running server (SQLite in WAL mode, or
	// the same PostgreSQL database) and serves as the admin user.
	run := m.runTSClient(t, stdioTarget(s), catalogScript(f))
	checkCatalogRun(t, s, f, run, "admin")
}

func TestTypeScriptSDKOverHTTP(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	f := seedCatalog(t, s)
	// A data steward's token, issued as a user would issue it: the tools run as steward.
	token := s.cliToken(t, "steward", "DataSteward", "1h")
	run := m.runTSClient(t, httpTarget(s, "/mcp", token), catalogScript(f))
	checkCatalogRun(t, s, f, run, "steward")
}

// TestTypeScriptSDKBadInput drives mistakes through the real client: missing required
// arguments and a missing entity are tool results with isError and a message; an
// unknown tool is a JSON-RPC error, which the SDK throws.
func TestTypeScriptSDKBadInput(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	run := m.runTSClient(t, httpTarget(s, "/api/mcp", s.adminToken), []call{
		{"patch_entity", map[string]any{}},
		{"create_test_case", map[string]any{"name": "x"}},
		{"get_entity_details", map[string]any{"entityType": "table", "fqn": "no_svc.no_db.no_schema.no_table"}},
		{"get_entity_lineage", map[string]any{"entityType": "table", "fqn": "no_svc.no_db.no_schema.no_table"}},
		{"create_data_product", map[string]any{"name": "p", "description": "d", "domains": []any{"NoSuchDomain"}}},
		{"no_such_tool", map[string]any{}},
	})
	type want struct {
		status int
		msg    string
	}
	for i, w := range []want{{400, "entityType"}, {400, "required"}, {404, ""}, {404, ""}, {404, "NoSuchDomain"}} {
		r := run.Results[i]
		if !r.IsError || r.Error != nil || r.Text == nil || r.StructuredContent != nil {
			t.Errorf("%s: want an isError result without structuredContent: %s", r.Tool, r)
			continue
		}
		var body struct {
			Error      string  `json:"error"`
			StatusCode float64 `json:"statusCode"`
		}
		if err := json.Unmarshal([]byte(*r.Text), &body); err != nil || body.Error == "" {
			t.Errorf("%s: error text is not {error, statusCode}: %s", r.Tool, r)
			continue
		}
		if int(body.StatusCode) != w.status || !strings.Contains(strings.ToLower(body.Error), strings.ToLower(w.msg)) {
			t.Errorf("%s: statusCode %v error %q, want %d and a message containing %q", r.Tool, body.StatusCode, body.Error, w.status, w.msg)
		}
	}
	unknown := run.Results[len(run.Results)-1]
	if unknown.Error == nil || unknown.Error.Code == nil || *unknown.Error.Code != -32602 ||
		!strings.Contains(unknown.Error.Message, "no_such_tool") {
		t.Errorf("unknown tool: want a JSON-RPC error -32602 naming it, got %s", unknown)
	}
}

// inspector runs the Inspector CLI against target (a URL, or a command and its
// arguments) with the method's arguments and returns stdout, stderr and the exit code.
func (m *mcpClients) inspector(t *testing.T, target []string, args ...string) (string, string, int) {
	t.Helper()
	all := append([]string{m.inspectorJS, "--cli"}, target...)
	return m.nodeRun(t, nil, append(all, args...)...)
}

func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	schema, _ := hierarchy(t, s.admin, "shop_pg", "shop", "public")
	orders := str(table(t, s.admin, schema, "orders", map[string]any{"description": "Orders placed online."})["fullyQualifiedName"])

	targets := []struct {
		name   string
		target []string
	}{
		{"stdio", append([]string{binPath, "mcp", "--data-dir", s.dataDir}, s.dbArgs...)},
		{"http", []string{s.base + "/mcp", "--header", "Authorization: Bearer " + s.adminToken}},
	}
	for _, tg := range targets {
		t.Run(tg.name+" tools/list --strict", func(t *testing.T) {
			out, errs, code := m.inspector(t, tg.target, "--method", "tools/list", "--strict", "--format", "json")
			if code != 0 {
				t.Fatalf("inspector tools/list --strict exited %d (5 tool error, 6 schema unportable)\nstdout: %s\nstderr: %s", code, out, errs)
			}
			var doc struct {
				Result struct {
					Tools []struct {
						Name         string         `json:"name"`
						InputSchema  map[string]any `json:"inputSchema"`
						OutputSchema map[string]any `json:"outputSchema"`
						Annotations  map[string]any `json:"annotations"`
					} `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("inspector --format json printed no JSON (%v):\n%s", err, out)
			}
			var names []string
			for _, tl := range doc.Result.Tools {
				names = append(names, tl.Name)
				if tl.InputSchema == nil || tl.OutputSchema == nil || tl.Annotations == nil {
					t.Errorf("%s lacks inputSchema, outputSchema or annotations", tl.Name)
				}
			}
			checkToolList(t, names)
		})
		t.Run(tg.name+" tools/call search_metadata", func(t *testing.T) {
			out, errs, code := m.inspector(t, tg.target, "--method", "tools/call", "--tool-name", "search_metadata",
				"--tool-arg", "query=orders", "--format", "json")
			if code != 0 {
				t.Fatalf("inspector tools/call exited %d (5 = the tool answered isError)\nstdout: %s\nstderr: %s", code, out, errs)
			}
			var doc struct {
				Result struct {
					IsError           bool           `json:"isError"`
					StructuredContent map[string]any `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("inspector --format json printed no JSON (%v):\n%s", err, out)
			}
			var fqns []string
			for _, h := range list(doc.Result.StructuredContent["results"]) {
				fqns = append(fqns, str(object(h)["fullyQualifiedName"]))
			}
			if doc.Result.IsError || !slices.Contains(fqns, orders) {
				t.Errorf("search orders: hits %v, want %s\n%s", fqns, orders, out)
			}
		})
	}
	t.Run("tools/call of a failing tool exits 5", func(t *testing.T) {
		out, errs, code := m.inspector(t, targets[1].target, "--method", "tools/call", "--tool-name", "get_entity_details",
			"--tool-args-json", `{"entityType":"table","fqn":"no_svc.no_db.no_schema.no_table"}`, "--format", "json")
		if code != 5 || !strings.Contains(out+errs, "tool_is_error") {
			t.Errorf("inspector tools/call on a missing entity exited %d, want 5 (tool_is_error)\nstdout: %s\nstderr: %s", code, out, errs)
		}
	})
}
