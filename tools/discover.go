package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/rest/elastic"
	"github.com/meridian-catalog/meridian/search"
)

// Discover: finding entities.

// Search limits of search_metadata, as OpenMetadata's tool has them.
const (
	searchDefaultSize = 10
	searchMaxSize     = 50
	maxBuckets        = 50
	// maxHitColumns caps the columns a hit carries with fields=columns.
	maxHitColumns = 60
)

// aggregated are the fields search_metadata counts the matches by, with
// includeAggregations.
var aggregated = []search.Field{search.FieldEntityType, search.FieldService, search.FieldTags, search.FieldOwners, search.FieldDomains}

func searchMetadata(env *Env) *Tool {
	hit := OpenObject("One matching entity, trimmed to its essentials.", Props{
		"id":                   String("Entity id."),
		"name":                 String("Entity name."),
		"displayName":          String("Display name."),
		"fullyQualifiedName":   String("Fully qualified name; pass it as fqn to get_entity_details."),
		"entityType":           String("Entity type."),
		"description":          String("Description, trimmed past 500 characters."),
		"descriptionTruncated": Boolean("True when description was shortened."),
		"service":              String("Name of the entity's service."),
		"owners":               Strings("Owner names."),
		"tags":                 Strings("Tag and glossary term FQNs."),
		"deleted":              Boolean("Soft-deleted."),
		"score":                Number("Relevance score; higher is better."),
		"columnsTruncated":     Boolean("With fields=columns: true when only the first 60 columns are listed."),
		"columnsTotal":         Integer("With fields=columns: the number of top-level columns, when truncated."),
	})
	bucket := Object(Props{
		"key":   String("Bucket value, as filters compare it: entity types as named, other values lower-cased."),
		"count": Integer("Matches in the bucket."),
	}, "key", "count")
	return &Tool{
		Name:  "search_metadata",
		Title: "Search metadata",
		Description: "Keyword search over the catalog: tables, dashboards, pipelines, topics, glossary terms, tags, " +
			"metrics, AI assets and every other data asset. Keywords match in the name, display name, description, column " +
			"names or parent names by their stems (\"orders\" finds \"order\"; a prefix matches too); common words are " +
			"ignored and misspelt words corrected. Entities matching every keyword come first; when too few do, those " +
			"matching some follow (matchedAll false). Returns trimmed hits with their fullyQualifiedName; use " +
			"get_entity_details for the full entity. Page with nextCursor. Field filters can be written in the query as " +
			"field:value for entityType, service.name, tags.tagFQN, owners.name, domains.fullyQualifiedName and deleted.",
		Input: Object(Props{
			"query": String("Keywords, e.g. \"customer orders\"; \"*\" matches everything."),
			"entityType": String("Entity type to search, e.g. table, dashboard, glossaryTerm, tag, metric, user, team; " +
				"\"dataAsset\" (the default) searches every data asset, \"all\" every kind."),
			"queryFilter": String("Optional OpenSearch query DSL JSON of term filters, e.g. " +
				"{\"query\":{\"term\":{\"service.name\":\"mysql_prod\"}}} (term, terms, match, bool.must/filter, and " +
				"bool.should over one field, on entityType, service.name, tags.tagFQN, owners.name, " +
				"domains.fullyQualifiedName, deleted)."),
			"size":                  Integer("Hits per page (1–50; larger values are clamped).").Min(1).Max(searchMaxSize).Default(searchDefaultSize),
			"from":                  Integer("Offset of the first hit.").Min(0).Default(0),
			"cursor":                Cursor(),
			"includeDeleted":        Boolean("Include soft-deleted entities.").Default(false),
			"fields":                String("Comma-separated extra document fields to add to each hit, e.g. \"columns,domains\"."),
			"includeAggregations":   Boolean("Add exact counts of the matches by entityType, service, tags, owners and domains.").Default(false),
			"maxAggregationBuckets": Integer("Buckets per aggregation (1–50).").Min(1).Max(maxBuckets).Default(10),
		}, "query"),
		Output: Object(pageProps(Props{
			"results":       Array("The hits of this page, best first.", hit),
			"totalFound":    Integer("Total number of matches."),
			"returnedCount": Integer("Hits in this result."),
			"query":         String("The query as run."),
			"searched":      Strings("The keywords searched: common words dropped, misspelt words as corrected."),
			"matchedAll":    Boolean("False when too few entities matched every keyword, so entities matching only some of them are included, those matching more first."),
			"hint":          String("When nothing matched: what was searched and what to try next."),
			"aggregations": OpenObject("Counts of every match (with includeAggregations), largest first.", Props{
				"entityType": Array("Matches by entity type.", bucket),
				"service":    Array("Matches by service name.", bucket),
				"tags":       Array("Matches by tag FQN (an entity's or its columns').", bucket),
				"owners":     Array("Matches by owner name.", bucket),
				"domains":    Array("Matches by domain FQN.", bucket),
			}),
		})),
		Aliases: map[string]string{"index": "entityType", "query_filter": "queryFilter", "include_deleted": "includeDeleted"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			kinds, err := env.searchKinds(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			from, err := offsetOf(a, "from")
			if err != nil {
				return nil, err
			}
			size := a.Int("size")
			if size > search.MaxWindow-from {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "from + size must be at most %d", search.MaxWindow),
					"Narrow the query instead of paging this deep")
			}
			fields := a.String("fields")
			if len(fields) > search.MaxQueryLength {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "fields is longer than the maximum of %d characters", search.MaxQueryLength),
					"Name a few document fields, e.g. \"columns,domains\"")
			}
			q, err := elastic.Parse(a.String("query"), a.String("queryFilter"))
			if err != nil {
				return nil, searchHint(err)
			}
			q.Kinds, q.From, q.Size = kinds, from, size
			if a.Bool("includeDeleted") {
				q.Filters = append(q.Filters, search.Filter{Field: search.FieldDeleted, Values: []string{"true", "false"}})
			}
			if a.Bool("includeAggregations") {
				q.Aggregations, q.Buckets = aggregated, a.Int("maxAggregationBuckets")
			}
			res, err := env.Entities.Search(ctx, p, q)
			if err != nil {
				return nil, searchHint(err)
			}
			var extra []string
			for _, f := range strings.Split(fields, ",") {
				if f = strings.TrimSpace(f); f != "" {
					extra = append(extra, f)
				}
			}
			rows := make([]any, 0, len(res.Hits))
			for _, h := range res.Hits {
				rows = append(rows, hitOf(h, extra))
			}
			searched := res.Searched
			if searched == nil {
				searched = []string{}
			}
			out := map[string]any{"query": a.String("query"), "totalFound": res.Total, "searched": searched, "matchedAll": !res.Relaxed}
			if res.Total == 0 {
				out["hint"] = noHitsHint(a.String("entityType"), searched, len(q.Filters) > 0)
			}
			if q.Aggregations != nil {
				out["aggregations"] = aggregationsOf(res)
			}
			Trim(rows)
			overhead := jsonLen(out) + 400
			n := fitRows(rows, env.Budget-overhead)
			out["results"] = rows[:n]
			out["returnedCount"] = n
			setPage(out, from, n, res.Total)
			return out, nil
		},
	}
}

// searchKinds resolves the entityType argument of search_metadata to the kinds
// searched: a kind (any case), one of the scopes dataAsset (the default), all and
// service, or an OpenMetadata index name. An unknown one gets a hint.
func (e *Env) searchKinds(t string) ([]string, error) {
	t = strings.TrimSpace(t)
	switch scope := strings.ToLower(t); scope {
	case "", "dataasset":
		return search.Kinds(e.Registry(), "dataAsset")
	case "all", "service":
		return search.Kinds(e.Registry(), scope)
	}
	if strings.HasSuffix(t, "_search_index") {
		kinds, err := search.Kinds(e.Registry(), t)
		return kinds, withHint(err, `Use an entity type, such as table, or "dataAsset" or "all"`)
	}
	k, err := e.kind(t)
	if err != nil {
		return nil, withHint(err, hintOf(err)+`; or "dataAsset" or "all"`)
	}
	return []string{k.Name}, nil
}

// hintOf returns the hint attached to err, or "".
func hintOf(err error) string {
	if h, ok := err.(*hinted); ok {
		return h.hint
	}
	return ""
}

// searchHint adds a hint to the engine's search errors.
func searchHint(err error) error {
	if msg := meridian.ErrorMessage(err); strings.Contains(msg, "than the maximum") {
		return withHint(err, fmt.Sprintf("Search with fewer keywords (at most %d words, %d characters) and fewer filters (at most %d values)",
			search.MaxTerms, search.MaxQueryLength, search.MaxFilterValues))
	}
	if meridian.ErrorCode(err) == meridian.EInvalid {
		return withHint(err, "Use plain keywords; filters go in queryFilter or as field:value")
	}
	return err
}

// noHitsHint says what a search that found nothing searched and what to try next.
func noHitsHint(entityType string, searched []string, filtered bool) string {
	scope := "data asset"
	if entityType != "" {
		scope = entityType
	}
	what := "everything"
	if len(searched) > 0 {
		what = "the keywords " + strings.Join(searched, ", ")
	}
	next := "Try other or fewer keywords, entityType \"all\", or semantic_search or find_context to ask in natural language"
	if filtered {
		next = "Try without the filters, with other or fewer keywords, or semantic_search to ask in natural language"
	}
	return fmt.Sprintf("No %s matched %s. %s.", scope, what, next)
}

// hitOf trims one search hit to the fields a model needs, plus the requested extras.
func hitOf(h search.Hit, extra []string) map[string]any {
	var src map[string]any
	_ = json.Unmarshal(h.Source, &src)
	out := map[string]any{"id": h.ID, "score": math.Round(h.Score*10000) / 10000}
	for _, f := range []string{"name", "displayName", "fullyQualifiedName", "entityType", "description"} {
		if s, ok := src[f].(string); ok && s != "" {
			out[f] = s
		}
	}
	out["deleted"] = src["deleted"] == true
	switch svc := src["service"].(type) {
	case map[string]any:
		if n, ok := svc["name"].(string); ok {
			out["service"] = n
		}
	case string:
		out["service"] = svc
	}
	owners := []any{}
	for _, o := range asList(src["owners"]) {
		if m, ok := o.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				owners = append(owners, n)
			}
		}
	}
	out["owners"] = owners
	tags := []any{}
	for _, t := range asList(src["tags"]) {
		if m, ok := t.(map[string]any); ok {
			if f, ok := m["tagFQN"].(string); ok {
				tags = append(tags, f)
			}
		}
	}
	out["tags"] = tags
	for _, f := range extra {
		if _, taken := out[f]; taken {
			continue
		}
		v, ok := src[f]
		if !ok {
			continue
		}
		if f == "columns" {
			cols := columnSummaries(v)
			if len(cols) > maxHitColumns {
				out["columnsTruncated"] = true
				out["columnsTotal"] = len(cols)
				cols = cols[:maxHitColumns]
			}
			v = cols
		}
		out[f] = clean(v)
	}
	return out
}

// columnSummaries keeps a column's name, type, description and tags, with children.
func columnSummaries(v any) []any {
	out := []any{}
	for _, c := range asList(v) {
		col, ok := c.(map[string]any)
		if !ok {
			continue
		}
		s := map[string]any{}
		for _, f := range []string{"name", "dataType", "description"} {
			if x, ok := col[f]; ok {
				s[f] = x
			}
		}
		if ch := asList(col["children"]); len(ch) > 0 {
			s["children"] = columnSummaries(ch)
		}
		out = append(out, s)
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// aggregationsOf lists res's buckets by field as search_metadata answers them.
func aggregationsOf(res search.Result) map[string]any {
	out := make(map[string]any, len(res.Aggregations))
	for field, buckets := range res.Aggregations {
		list := make([]any, 0, len(buckets))
		for _, b := range buckets {
			list = append(list, map[string]any{"key": b.Key, "count": b.Count})
		}
		out[string(field)] = list
	}
	return out
}
