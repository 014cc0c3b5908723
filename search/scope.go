package search

import (
	"strings"
	"unicode"

	"github.com/meridian-catalog/meridian"
)

// DataAssetKinds are the kinds behind OpenMetadata's dataAsset index alias (those of
// its indexMapping.json whose parentAliases name dataAsset and that Meridian serves).
var DataAssetKinds = []string{
	"apiCollection", "apiEndpoint", "chart", "container", "dashboard", "dashboardDataModel",
	"database", "databaseSchema", "dataProduct", "glossaryTerm", "metric", "mlmodel",
	"pipeline", "searchIndex", "storedProcedure", "table", "tag", "topic",
}

// IndexName is OpenMetadata's search index name of a kind: table_search_index,
// database_schema_search_index, … (searchIndex entities live in
// search_entity_search_index).
func IndexName(kind string) string {
	if kind == "searchIndex" {
		return "search_entity_search_index"
	}
	var b strings.Builder
	for i, r := range kind {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String() + "_search_index"
}

// Kinds resolves a search scope, as OpenMetadata's index parameter names it, to the
// kinds searched: "" and "dataAsset" (DataAssetKinds), "all" (every kind), "service"
// (every service kind), a kind ("table") or its index name ("table_search_index").
// Anything else is EInvalid.
func Kinds(reg *meridian.Registry, scope string) ([]string, error) {
	var out []string
	switch scope {
	case "", "dataAsset":
		for _, name := range DataAssetKinds {
			if _, ok := reg.Kind(name); ok {
				out = append(out, name)
			}
		}
		return out, nil
	case "all", "service":
		for _, k := range reg.Kinds() {
			if scope == "all" || strings.HasSuffix(k.Name, "Service") {
				out = append(out, k.Name)
			}
		}
		return out, nil
	}
	if k, ok := reg.Kind(scope); ok {
		return []string{k.Name}, nil
	}
	for _, k := range reg.Kinds() {
		if IndexName(k.Name) == scope || k.Name+"_search_index" == scope {
			return []string{k.Name}, nil
		}
	}
	return nil, meridian.Errorf(meridian.EInvalid, "Unknown search index %s", scope)
}
