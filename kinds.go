package meridian

import (
	"context"
	"regexp"
	"sort"
	"strings"
)

// Kind names the engine's generic rules refer to: owners and reviewers are users or
// teams, and tag labels name tags (under classifications) or glossary terms (under
// glossaries).
const (
	KindUser           = "user"
	KindTeam           = "team"
	KindClassification = "classification"
	KindTag            = "tag"
	KindGlossary       = "glossary"
	KindGlossaryTerm   = "glossaryTerm"
)

// Field sets shared by many kinds.
var (
	assetFields      = []string{"owners", "followers", "tags", "extension", "domains", "dataProducts", "votes"}
	governanceFields = []string{"owners", "followers", "tags", "extension", "domains", "reviewers", "votes"}
	serviceFields    = []string{"owners", "followers", "tags", "extension", "domains", "pipelines"}
)

func fields(base []string, extra ...string) []string {
	return append(append([]string{}, base...), extra...)
}

// service returns a top-level service kind.
func service(name, collection string) *Kind {
	return &Kind{Name: name, Collection: "services/" + collection, Fields: serviceFields, SoftDelete: true,
		Service: true, Actions: []Action{ActionTestConnectionResult}}
}

// asset returns a kind whose create body names its service by FQN in "service".
func asset(name, collection, serviceKind string) *Kind {
	return &Kind{Name: name, Collection: collection, Fields: assetFields, SoftDelete: true, DataAsset: true,
		Parents: []ParentRule{{Field: "service", Kind: serviceKind}}, ParentRequired: true,
		Inherit: []string{"serviceType"},
		Filters: []Filter{{Param: "service", Prefix: true}}}
}

// withSearchIndex sets the kind's OpenMetadata search index name.
func withSearchIndex(k *Kind, index string) *Kind {
	k.SearchIndex = index
	return k
}

// DefaultKinds returns every kind Meridian serves.
func DefaultKinds() []*Kind {
	return []*Kind{
		// Services.
		service("databaseService", "databaseServices"),
		service("dashboardService", "dashboardServices"),
		service("messagingService", "messagingServices"),
		service("pipelineService", "pipelineServices"),
		service("storageService", "storageServices"),
		service("mlmodelService", "mlmodelServices"),
		service("metadataService", "metadataServices"),
		service("searchService", "searchServices"),
		service("apiService", "apiServices"),
		service("mcpService", "mcpServices"),
		service("llmService", "llmServices"),

		// The database hierarchy.
		{Name: "database", Collection: "databases", Fields: fields(assetFields, "databaseSchemas", "usageSummary"),
			SoftDelete: true, DataAsset: true, Parents: []ParentRule{{Field: "service", Kind: "databaseService"}}, ParentRequired: true,
			Inherit: []string{"serviceType"}, Filters: []Filter{{Param: "service", Prefix: true}}},
		{Name: "databaseSchema", Collection: "databaseSchemas", Fields: fields(assetFields, "tables", "usageSummary"),
			SoftDelete: true, DataAsset: true, Parents: []ParentRule{{Field: "database", Kind: "database"}}, ParentRequired: true,
			Inherit: []string{"service", "serviceType"},
			Filters: []Filter{{Param: "database", Prefix: true}, {Param: "service", Prefix: true}}},
		{Name: "table", Collection: "tables",
			Fields:     fields(assetFields, "columns", "tableConstraints", "usageSummary", "joins", "schemaDefinition", "testSuite", "dataModel", "tableProfilerConfig"),
			SoftDelete: true, HardDeleteNoContent: true,
			Parents: []ParentRule{{Field: "databaseSchema", Kind: "databaseSchema"}}, ParentRequired: true,
			Inherit: []string{"database", "service", "serviceType"},
			Filters: []Filter{{Param: "databaseSchema", Prefix: true}, {Param: "database", Prefix: true},
				{Param: "service", Prefix: true}},
			Validate: validateColumns, DataAsset: true, AlwaysFields: []string{"columns"},
			Graph: GraphFacts{Classes: []string{ClassDataset}}},
		{Name: "storedProcedure", Collection: "storedProcedures", Fields: assetFields, SoftDelete: true, DataAsset: true,
			Parents: []ParentRule{{Field: "databaseSchema", Kind: "databaseSchema"}}, ParentRequired: true,
			Inherit: []string{"database", "service", "serviceType"},
			Filters: []Filter{{Param: "databaseSchema", Prefix: true}}},

		// Other data assets: shared fields, their service, a minimal body.
		asset("dashboard", "dashboards", "dashboardService"),
		asset("chart", "charts", "dashboardService"),
		asset("dashboardDataModel", "dashboard/datamodels", "dashboardService"),
		asset("pipeline", "pipelines", "pipelineService"),
		asset("topic", "topics", "messagingService"),
		asset("container", "containers", "storageService"),
		asset("mlmodel", "mlmodels", "mlmodelService"),
		withSearchIndex(asset("searchIndex", "searchIndexes", "searchService"), "search_entity_search_index"),
		asset("apiCollection", "apiCollections", "apiService"),
		{Name: "apiEndpoint", Collection: "apiEndpoints", Fields: assetFields, SoftDelete: true, DataAsset: true,
			Parents: []ParentRule{{Field: "apiCollection", Kind: "apiCollection"}}, ParentRequired: true,
			Inherit: []string{"service", "serviceType"},
			Filters: []Filter{{Param: "apiCollection", Prefix: true}, {Param: "service", Prefix: true}}},

		// Metrics, contracts and data quality.
		{Name: "metric", Collection: "metrics", Fields: fields(assetFields, "reviewers", "relatedMetrics"), SoftDelete: true,
			Validate: validateMetric, DataAsset: true},
		{Name: "dataContract", Collection: "dataContracts", Fields: fields(governanceFields), SoftDelete: true,
			Refs: map[string][]string{"entity": nil}, Immutable: []string{"entity"},
			Unanswered: []string{"followers", "tags", "domains"}},
		{Name: "testDefinition", Collection: "dataQuality/testDefinitions", Fields: []string{"owners", "followers"},
			SoftDelete: true, NoLineage: true, Validate: validateTestDefinition, Deletable: deletableTestDefinition,
			Unanswered: []string{"followers"},
			Filters: []Filter{{Param: "entityType", Field: "entityType"}, {Param: "testPlatform", Field: "testPlatforms"},
				{Param: "supportedDataType", Field: "supportedDataTypes"}}},
		{Name: "testSuite", Collection: "dataQuality/testSuites", Fields: []string{"owners", "followers", "tags", "domains", "tests", "summary"},
			SoftDelete: true, NoLineage: true, DedicatedFlows: true, Refs: map[string][]string{"basicEntityReference": {"table"}}},
		{Name: "testCase", Collection: "dataQuality/testCases",
			Fields:     []string{"owners", "followers", "tags", "extension", "domains", "testSuite", "testDefinition", "testCaseResult", "testSuites", "incidentId"},
			SoftDelete: true, Locate: locateTestCase, Immutable: []string{"entityLink", "entityFQN"},
			Validate: validateTestCase, NoLineage: true, DedicatedFlows: true,
			Computed:  []string{"testCaseResult", "testCaseStatus"},
			Refs:      map[string][]string{"testDefinition": {"testDefinition"}, "testSuite": {"testSuite"}},
			Container: &Container{Field: "testSuite", Kind: "testSuite", Body: BasicTestSuite},
			// OpenMetadata's schema requires both; they are fields options there too.
			AlwaysFields: []string{"testSuite", "testDefinition"},
			Filters:      []Filter{{Param: "entityLink", Field: "entityLink"}, {Param: "entityFQN", Field: "entityFQN"}}},

		// Governance.
		{Name: "classification", Collection: "classifications", Fields: fields(governanceFields, "termCount", "usageCount"),
			SoftDelete: true, Immutable: []string{"mutuallyExclusive"}, NoLineage: true,
			Unanswered: []string{"followers", "tags"}, Graph: GraphFacts{Classes: []string{ClassConceptScheme}}},
		{Name: "tag", Collection: "tags", Fields: fields(governanceFields, "children", "usageCount"), SoftDelete: true,
			NoLineage: true, DataAsset: true,
			Parents:        []ParentRule{{Field: "parent", Kind: "tag"}, {Field: "classification", Kind: "classification"}},
			ParentRequired: true, Inherit: []string{"classification"},
			Filters: []Filter{{Param: "parent", Prefix: true}},
			Graph:   GraphFacts{Classes: []string{ClassConcept}, Broader: "parent", Scheme: "classification"}},
		{Name: "glossary", Collection: "glossaries", Fields: fields(governanceFields, "termCount", "usageCount"), SoftDelete: true,
			NoLineage: true, Graph: GraphFacts{Classes: []string{ClassConceptScheme}}},
		{Name: "glossaryTerm", Collection: "glossaryTerms", Fields: fields(governanceFields, "children", "relatedTerms", "usageCount"),
			SoftDelete: true, NoLineage: true, DataAsset: true,
			Parents:        []ParentRule{{Field: "parent", Kind: "glossaryTerm"}, {Field: "glossary", Kind: "glossary"}},
			ParentRequired: true, Inherit: []string{"glossary"}, Prepare: prepareGlossaryTerm,
			Unanswered: []string{"followers"},
			Filters:    []Filter{{Param: "glossary", Prefix: true}, {Param: "parent", Prefix: true}},
			Graph:      GraphFacts{Classes: []string{ClassConcept}, Broader: "parent", Scheme: "glossary"}},
		{Name: "domain", Collection: "domains", Fields: []string{"owners", "followers", "tags", "extension", "experts", "children"},
			SoftDelete: true, Parents: []ParentRule{{Field: "parent", Kind: "domain"}}, Unanswered: []string{"deleted"}},
		{Name: "dataProduct", Collection: "dataProducts", Fields: []string{"owners", "followers", "tags", "extension", "domains", "experts", "reviewers"},
			SoftDelete: true, DataAsset: true, Unanswered: []string{"deleted"}},

		// People.
		{Name: "user", Collection: "users", Fields: []string{"teams", "roles", "owns", "follows", "domains", "personas"},
			SoftDelete: true, Immutable: []string{"isBot"}, Privileged: []string{"roles", "isAdmin", "teams"},
			Account: true, NoLineage: true, DedicatedFlows: true, NamedRefs: map[string]string{"roles": "role"},
			Graph: GraphFacts{Classes: []string{ClassAgent}}},
		{Name: "team", Collection: "teams", Fields: []string{"owners", "users", "defaultRoles", "parents", "children", "domains", "policies"},
			SoftDelete: true, Privileged: []string{"defaultRoles", "policies"}, Account: true, NoLineage: true,
			Inverse: map[string]InverseRelation{"users": {Type: "teams", Kinds: []string{KindUser}}}},
		{Name: "bot", Collection: "bots", Fields: []string{}, SoftDelete: true, Refs: map[string][]string{"botUser": {"user"}},
			Immutable: []string{"botUser"}, Account: true, NoLineage: true},

		// AI assets: searched by default with the data assets.
		{Name: "mcpServer", Collection: "mcpServers", Fields: assetFields, SoftDelete: true, DataAsset: true,
			Parents: []ParentRule{{Field: "service", Kind: "mcpService"}}, ParentRequired: true,
			Inherit: []string{"serviceType"}, Filters: []Filter{{Param: "service", Prefix: true}}},
		{Name: "llmModel", Collection: "llmModels", Fields: assetFields, SoftDelete: true, DataAsset: true,
			Parents: []ParentRule{{Field: "service", Kind: "llmService"}}, ParentRequired: true,
			Inherit: []string{"serviceType"}, Filters: []Filter{{Param: "service", Prefix: true}}},
		{Name: "aiApplication", Collection: "aiApplications", Fields: assetFields, SoftDelete: true, DataAsset: true},
		{Name: "promptTemplate", Collection: "promptTemplates", Fields: assetFields, SoftDelete: true, DataAsset: true,
			Validate: validatePromptTemplate},
		{Name: "contextPlugin", Collection: "ai/contextPlugins", Fields: fields(assetFields, "reviewers"), SoftDelete: true,
			DataAsset: true, Actions: []Action{ActionTestConnection}},

		// Knowledge for assistants: knowledge center articles, context memories and
		// personas. None is a data asset or an end of lineage.
		{Name: "page", Collection: "knowledgeCenter/pages", Fields: fields(governanceFields), SoftDelete: true,
			NoLineage: true, Parents: []ParentRule{{Field: "parent", Kind: "page"}}, Text: []string{"content"},
			Filters: []Filter{{Param: "parent", Prefix: true}, {Param: "pageType", Field: "pageType"}}},
		{Name: "contextMemory", Collection: "contextMemories", Fields: []string{"owners", "followers", "tags", "extension", "domains", "votes"},
			SoftDelete: true,
			NoLineage:  true, Validate: validateContextMemory, Text: []string{"question", "answer"},
			Filters: []Filter{{Param: "memoryType", Field: "memoryType"}, {Param: "memoryScope", Field: "memoryScope"}}},
		{Name: "persona", Collection: "personas", Fields: []string{"owners", "followers", "domains", "users"}, SoftDelete: true, NoLineage: true,
			Text:    []string{"context"},
			Inverse: map[string]InverseRelation{"users": {Type: "personas", Kinds: []string{KindUser}}}},

		// The knowledge graph: stored SHACL shapes (kinds_shacl.go).
		shaclShapeKind(),
	}
}

// DefaultRegistry returns the registry of DefaultKinds.
func DefaultRegistry() *Registry {
	r, err := NewRegistry(DefaultKinds()...)
	if err != nil {
		panic(err) // the built-in kinds are consistent; a failure is a programming error
	}
	return r
}

// locateTestCase places a test case under the entity its link points at: the FQN is the
// linked field's FQN plus the quoted test name, and entityFQN records that field.
func locateTestCase(e Entity) (Location, error) {
	link, err := ParseEntityLink(e.String("entityLink"))
	if err != nil {
		return Location{}, err
	}
	if link.EntityType != "table" {
		return Location{}, Errorf(EInvalid, "entityLink: test cases can be linked to tables and their columns, not %s", link.EntityType)
	}
	fqn, err := NormalizeFQN(link.FQN)
	if err != nil {
		return Location{}, err
	}
	link.FQN = fqn
	e["entityLink"] = link.String()
	e["entityFQN"] = link.FieldFQN()
	return Location{ParentKind: "table", ParentFQN: fqn, FQN: link.FieldFQN() + "." + QuoteName(e.Name())}, nil
}

// prepareGlossaryTerm starts a term in Draft when it, or its glossary, has reviewers, and
// in Approved otherwise, unless the body sets a status.
func prepareGlossaryTerm(_ context.Context, _ Catalog, w *Write) error {
	e, parent := w.New, w.Parent
	if e.String("entityStatus") != "" {
		return nil
	}
	status := "Approved"
	if hasItems(e["reviewers"]) || (parent != nil && hasItems(parent["reviewers"])) {
		status = "Draft"
	}
	e["entityStatus"] = status
	return nil
}

func hasItems(v any) bool { l, _ := v.([]any); return len(l) > 0 }

var placeholderRE = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// validatePromptTemplate checks that every {{placeholder}} names a declared variable and
// that every required variable is used.
func validatePromptTemplate(_ context.Context, _ Catalog, w *Write) error {
	e := w.New
	declared := map[string]bool{}
	required := []string{}
	vars, _ := e["variables"].([]any)
	for _, v := range vars {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if name == "" {
			return Errorf(EInvalid, "variables: every variable needs a name")
		}
		if declared[name] {
			return Errorf(EInvalid, "variables: variable %s is declared twice", name)
		}
		declared[name] = true
		if req, _ := m["required"].(bool); req {
			required = append(required, name)
		}
	}
	text := e.String("templateContent") + "\n" + e.String("systemPrompt")
	used := map[string]bool{}
	var undeclared []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		name := m[1]
		if name == "" {
			return Errorf(EInvalid, "templateContent: empty placeholder {{}}")
		}
		used[name] = true
		if !declared[name] {
			undeclared = append(undeclared, name)
		}
	}
	if len(undeclared) > 0 {
		sort.Strings(undeclared)
		return Errorf(EInvalid, "templateContent: placeholder {{%s}} names no declared variable", strings.Join(undeclared, "}}, {{"))
	}
	for _, name := range required {
		if !used[name] {
			return Errorf(EInvalid, "variables: required variable %s is not used in templateContent", name)
		}
	}
	return nil
}

// validateColumns checks column names: each valid and unique within the table.
func validateColumns(_ context.Context, _ Catalog, w *Write) error {
	e := w.New
	cols, _ := e["columns"].([]any)
	seen := map[string]bool{}
	for _, c := range cols {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		if err := ValidateName("columns.name", name); err != nil {
			return err
		}
		if seen[name] {
			return Errorf(EInvalid, "columns: column %s appears twice", name)
		}
		seen[name] = true
	}
	return nil
}

// validateMetric requires customUnitOfMeasurement when the unit is OTHER.
func validateMetric(_ context.Context, _ Catalog, w *Write) error {
	e := w.New
	if e.String("unitOfMeasurement") == "OTHER" && e.String("customUnitOfMeasurement") == "" {
		return Errorf(EInvalid, "customUnitOfMeasurement is required when unitOfMeasurement is OTHER")
	}
	return nil
}

// validateContextMemory refuses a memory whose question or answer is only blanks: the
// schema requires them, and a blank one is no memory.
func validateContextMemory(_ context.Context, _ Catalog, w *Write) error {
	for _, f := range []string{"question", "answer"} {
		if strings.TrimSpace(w.New.String(f)) == "" {
			return Errorf(EInvalid, "%s must not be blank", f)
		}
	}
	return nil
}
