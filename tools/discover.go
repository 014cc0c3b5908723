package tools

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Discover: finding entities.

// Search limits of search_metadata, as OpenMetadata's tool has them.
const (
	searchDefaultSize = 10
	searchMaxSize     = 50
	maxBuckets        = 50
	// maxHitColumns caps the columns a hit carries with fields=columns.
	maxHitColumns = 60
	// aggregationSample bounds the hits counted for aggregations.
	aggregationSample = store.MaxSearchSize
)

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
	bucket := Object(Props{"key": String("Bucket value."), "count": Integer("Matches in the bucket.")}, "key", "count")
	return &Tool{
		Name:  "search_metadata",
		Title: "Search metadata",
		Description: "Keyword search over the catalog: tables, dashboards, pipelines, topics, glossary terms, tags, " +
			"metrics and every other data asset. Every keyword must match (a prefix matches too) in the name, display " +
			"name, description, column names or parent names. Returns trimmed hits with their fullyQualifiedName; use " +
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
			"includeAggregations":   Boolean("Add counts of the matches by entityType, service and tags.").Default(false),
			"maxAggregationBuckets": Integer("Buckets per aggregation (1–50).").Min(1).Max(maxBuckets).Default(10),
		}, "query"),
		Output: Object(pageProps(Props{
			"results":       Array("The hits of this page, best first.", hit),
			"totalFound":    Integer("Total number of matches."),
			"returnedCount": Integer("Hits in this result."),
			"query":         String("The query as run."),
			"aggregations": OpenObject("Counts of the matches (with includeAggregations).", Props{
				"entityType": Array("Matches by entity type.", bucket),
				"service":    Array("Matches by service name.", bucket),
				"tags":       Array("Matches by tag FQN.", bucket),
			}),
			"aggregationsSampled": Boolean("True when aggregations count only the first 1000 matches."),
		})),
		Aliases: map[string]string{"index": "entityType", "query_filter": "queryFilter", "include_deleted": "includeDeleted"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			index, err := env.searchIndex(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			from, err := offsetOf(a, "from")
			if err != nil {
				return nil, err
			}
			size := a.Int("size")
			if size > store.MaxSearchWindow-from {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "from + size must be at most %d", store.MaxSearchWindow),
					"Narrow the query instead of paging this deep")
			}
			req := store.SearchRequest{Query: a.String("query"), Index: index, From: from, Size: size,
				QueryFilter: a.String("queryFilter")}
			if a.Bool("includeDeleted") {
				req.QueryFilter = withDeleted(req.QueryFilter)
			}
			res, err := env.Entities.Search(ctx, p, req)
			if err != nil {
				return nil, searchHint(err)
			}
			var extra []string
			for _, f := range strings.Split(a.String("fields"), ",") {
				if f = strings.TrimSpace(f); f != "" {
					extra = append(extra, f)
				}
			}
			rows := make([]any, 0, len(res.Hits.Hits))
			for _, h := range res.Hits.Hits {
				rows = append(rows, hitOf(h, extra))
			}
			out := map[string]any{"query": req.Query, "totalFound": res.Hits.Total.Value}
			if a.Bool("includeAggregations") {
				aggs, sampled, err := env.aggregate(ctx, p, req, a.Int("maxAggregationBuckets"))
				if err != nil {
					return nil, searchHint(err)
				}
				out["aggregations"] = aggs
				out["aggregationsSampled"] = sampled
			}
			Trim(rows)
			overhead := jsonLen(out) + 400
			n := fitRows(rows, env.Budget-overhead)
			out["results"] = rows[:n]
			out["returnedCount"] = n
			setPage(out, from, n, res.Hits.Total.Value)
			return out, nil
		},
	}
}

// searchIndex checks an entityType argument of search_metadata: a kind (any case), or
// one of the aliases dataAsset, all and service. An unknown one gets a hint.
func (e *Env) searchIndex(t string) (string, error) {
	t = strings.TrimSpace(t)
	switch strings.ToLower(t) {
	case "", "dataasset":
		return "dataAsset", nil
	case "all", "service":
		return strings.ToLower(t), nil
	}
	if strings.HasSuffix(t, "_search_index") {
		return t, nil // an OpenMetadata index name; the engine resolves it
	}
	k, err := e.kind(t)
	if err != nil {
		return "", withHint(err, hintOf(err)+`; or "dataAsset" or "all"`)
	}
	return k.Name, nil
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
	if meridian.ErrorCode(err) == meridian.EInvalid {
		return withHint(err, "Use plain keywords (every word must match); filters go in queryFilter or as field:value")
	}
	return err
}

// withDeleted widens a query filter to soft-deleted entities as well as active ones.
func withDeleted(filter string) string {
	both := map[string]any{"terms": map[string]any{"deleted": []any{true, false}}}
	if strings.TrimSpace(filter) == "" {
		return string(marshal(both))
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(filter), &doc); err != nil || doc == nil {
		return filter // malformed: the engine reports it
	}
	inner := any(doc)
	if q, ok := doc["query"]; ok && len(doc) == 1 {
		inner = q
	}
	return string(marshal(map[string]any{"bool": map[string]any{"must": []any{inner, both}}}))
}

// hitOf trims one search hit to the fields a model needs, plus the requested extras.
func hitOf(h store.SearchHitJSON, extra []string) map[string]any {
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

// aggregate counts the matches of req by entityType, service and tag, over at most
// aggregationSample matches; sampled tells whether there were more.
func (e *Env) aggregate(ctx context.Context, p *meridian.Principal, req store.SearchRequest, buckets int) (map[string]any, bool, error) {
	req.From, req.Size = 0, aggregationSample
	res, err := e.Entities.Search(ctx, p, req)
	if err != nil {
		return nil, false, err
	}
	counts := map[string]map[string]int{"entityType": {}, "service": {}, "tags": {}}
	for _, h := range res.Hits.Hits {
		hit := hitOf(h, nil)
		if t, ok := hit["entityType"].(string); ok {
			counts["entityType"][t]++
		}
		if s, ok := hit["service"].(string); ok {
			counts["service"][s]++
		}
		for _, t := range asList(hit["tags"]) {
			counts["tags"][t.(string)]++
		}
	}
	out := map[string]any{}
	for name, c := range counts {
		keys := make([]string, 0, len(c))
		for k := range c {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if c[keys[i]] != c[keys[j]] {
				return c[keys[i]] > c[keys[j]]
			}
			return keys[i] < keys[j]
		})
		if len(keys) > buckets {
			keys = keys[:buckets]
		}
		list := make([]any, 0, len(keys))
		for _, k := range keys {
			list = append(list, map[string]any{"key": k, "count": c[k]})
		}
		out[name] = list
	}
	return out, res.Hits.Total.Value > len(res.Hits.Hits), nil
}
