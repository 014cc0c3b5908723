package search

import (
	"reflect"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestIndexName(t *testing.T) {
	for kind, want := range map[string]string{
		"table":              "table_search_index",
		"databaseSchema":     "database_schema_search_index",
		"dashboardDataModel": "dashboard_data_model_search_index",
		"searchIndex":        "search_entity_search_index",
		"glossaryTerm":       "glossary_term_search_index",
		"mlmodelService":     "mlmodel_service_search_index",
	} {
		k, _ := meridian.DefaultRegistry().Kind(kind)
		if got := k.IndexName(); got != want {
			t.Errorf("IndexName(%s) = %s, want %s", kind, got, want)
		}
	}
}

func TestKindsResolvesScopes(t *testing.T) {
	reg := meridian.DefaultRegistry()
	// OpenMetadata's dataAsset alias (indexMapping.json's parentAliases) over the kinds
	// Meridian serves, and the AI assets.
	dataAssets := []string{"aiApplication", "apiCollection", "apiEndpoint", "chart", "container", "contextPlugin", "dashboard", "dashboardDataModel",
		"dataProduct", "database", "databaseSchema", "glossaryTerm", "llmModel", "mcpServer", "metric", "mlmodel",
		"pipeline", "promptTemplate", "searchIndex", "storedProcedure", "table", "tag", "topic"}
	kinds := func(scope string) []string {
		ks, err := Kinds(reg, scope)
		if err != nil {
			t.Fatalf("%s: %v", scope, err)
		}
		return ks
	}
	for scope, want := range map[string][]string{
		"":                             dataAssets,
		"dataAsset":                    dataAssets,
		"table":                        {"table"},
		"table_search_index":           {"table"},
		"database_schema_search_index": {"databaseSchema"},
		"databaseSchema_search_index":  {"databaseSchema"},
		"search_entity_search_index":   {"searchIndex"},
	} {
		if got := kinds(scope); !reflect.DeepEqual(got, want) {
			t.Errorf("%q = %v, want %v", scope, got, want)
		}
	}
	if got := kinds("all"); len(got) != len(reg.Kinds()) {
		t.Errorf("all = %d kinds, want %d", len(got), len(reg.Kinds()))
	}
	services := kinds("service")
	if len(services) == 0 {
		t.Error("no service kinds")
	}
	for _, k := range services {
		if !strings.HasSuffix(k, "Service") {
			t.Errorf("service scope has %s", k)
		}
	}
	_, err := Kinds(reg, "Table")
	if meridian.ErrorCode(err) != meridian.EInvalid || meridian.ErrorMessage(err) != "Unknown search index Table" {
		t.Errorf("unknown scope error = %v", err)
	}
}
