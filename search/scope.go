package search

import (
	"github.com/meridian-catalog/meridian"
)

// Kinds resolves a search scope, as OpenMetadata's index parameter names it, to the
// kinds searched: "" and "dataAsset" (the kinds marked DataAsset), "all" (every kind),
// "service" (the service kinds), a kind ("table") or its index name
// ("table_search_index", Kind.IndexName).
// Anything else is EInvalid.
func Kinds(reg *meridian.Registry, scope string) ([]string, error) {
	var out []string
	switch scope {
	case "", "dataAsset", "all", "service":
		for _, k := range reg.Kinds() {
			if scope == "all" || (scope == "service" && k.Service) || (scope != "service" && k.DataAsset) {
				out = append(out, k.Name)
			}
		}
		return out, nil
	}
	if k, ok := reg.Kind(scope); ok {
		return []string{k.Name}, nil
	}
	for _, k := range reg.Kinds() {
		if k.IndexName() == scope || k.Name+"_search_index" == scope {
			return []string{k.Name}, nil
		}
	}
	return nil, meridian.Errorf(meridian.EInvalid, "Unknown search index %s", scope)
}
