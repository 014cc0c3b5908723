package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/meridian-catalog/meridian"
)

// Keyword search: GET /v1/search/query, answered from the store's own full-text index
// (SQLite FTS5, PostgreSQL tsvector) in Elasticsearch's response shape.
//
// What q supports: "" or "*" match everything. Otherwise q is keywords: every word must
// occur, or start a word, in the name, display name, description, column names or
// parent FQN of an entity (snake_case and camelCase names are split into words, as
// SearchWords does). Lucene syntax is handled gracefully, not interpreted: AND, OR,
// && and || are ignored (every word is required), quotes, wildcards and brackets are
// word separators, and field:value keeps only the value's words, except that
// entityType:, service.name:, tags.tagFQN:, owners.name:, domains.fullyQualifiedName:
// and deleted: (see query_filter fields) become term filters. NOT, !, a leading - and
// must_not forms are rejected with EInvalid rather than silently ignored.
//
// What index supports: "" and "dataAsset" (OpenMetadata's dataAsset alias: see
// DataAssetKinds), "all" (every kind), "service" (every service kind), an entity type
// ("table") or its OpenMetadata index name ("table_search_index").
//
// query_filter: see ParseQueryFilter.

// Search limits, as OpenMetadata and Elasticsearch apply them.
const (
	DefaultSearchSize = 10
	MaxSearchSize     = 1000
	MaxSearchWindow   = 10000
)

// DataAssetKinds are the kinds behind OpenMetadata's dataAsset index alias (those of
// its indexMapping.json whose parentAliases name dataAsset and that Meridian serves).
var DataAssetKinds = []string{
	"apiCollection", "apiEndpoint", "chart", "container", "dashboard", "dashboardDataModel",
	"database", "databaseSchema", "dataProduct", "glossaryTerm", "metric", "mlmodel",
	"pipeline", "searchIndex", "storedProcedure", "table", "tag", "topic",
}

// SearchRequest is one keyword search. Size 0 means DefaultSearchSize. Deleted nil
// searches active entities only, unless the query filter has a deleted term.
type SearchRequest struct {
	Query       string
	Index       string
	From, Size  int
	Deleted     *bool
	QueryFilter string
}

// SearchResponse is Elasticsearch's search answer.
type SearchResponse struct {
	Took     int64      `json:"took"`
	TimedOut bool       `json:"timed_out"`
	Hits     SearchHits `json:"hits"`
}

// SearchHits is the hits object: the total, the best score (null without hits) and the
// page of hits.
type SearchHits struct {
	Total    SearchTotal     `json:"total"`
	MaxScore *float64        `json:"max_score"`
	Hits     []SearchHitJSON `json:"hits"`
}

// SearchTotal is the exact count of matches; Relation is always "eq".
type SearchTotal struct {
	Value    int    `json:"value"`
	Relation string `json:"relation"`
}

// SearchHitJSON is one hit: the index name of its kind, its id, score and document.
type SearchHitJSON struct {
	Index  string          `json:"_index"`
	ID     string          `json:"_id"`
	Score  float64         `json:"_score"`
	Source json.RawMessage `json:"_source"`
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

// searchKinds resolves the index parameter to the kinds searched.
func (s *Entities) searchKinds(index string) ([]*meridian.Kind, error) {
	var out []*meridian.Kind
	switch index {
	case "", "dataAsset":
		for _, name := range DataAssetKinds {
			if k, ok := s.reg.Kind(name); ok {
				out = append(out, k)
			}
		}
		return out, nil
	case "all":
		return s.reg.Kinds(), nil
	case "service":
		for _, k := range s.reg.Kinds() {
			if strings.HasSuffix(k.Name, "Service") {
				out = append(out, k)
			}
		}
		return out, nil
	}
	if k, ok := s.reg.Kind(index); ok {
		return []*meridian.Kind{k}, nil
	}
	for _, k := range s.reg.Kinds() {
		if IndexName(k.Name) == index || k.Name+"_search_index" == index {
			return []*meridian.Kind{k}, nil
		}
	}
	return nil, meridian.Errorf(meridian.EInvalid, "Unknown search index %s", index)
}

// Search runs a keyword search over the store's full-text index. Any authenticated
// principal may search (OpView on every kind searched). Errors: EInvalid (unknown
// index, bad paging, unsupported q or query_filter), EUnauthorized.
func (s *Entities) Search(ctx context.Context, p *meridian.Principal, r SearchRequest) (SearchResponse, error) {
	start := time.Now()
	kinds, err := s.searchKinds(r.Index)
	if err != nil {
		return SearchResponse{}, err
	}
	if p == nil && s.policy != nil {
		return SearchResponse{}, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	for _, k := range kinds {
		if err := s.authorize(p, OpView, k, nil, nil); err != nil {
			return SearchResponse{}, err
		}
	}
	size := r.Size
	if size == 0 {
		size = DefaultSearchSize
	}
	switch {
	case r.From < 0:
		return SearchResponse{}, meridian.Errorf(meridian.EInvalid, "[query param from must be greater than or equal to 0]")
	case size < 0:
		return SearchResponse{}, meridian.Errorf(meridian.EInvalid, "[query param size must be greater than or equal to 0]")
	case size > MaxSearchSize:
		return SearchResponse{}, meridian.Errorf(meridian.EInvalid, "[query param size must be less than or equal to %d]", MaxSearchSize)
	case r.From+size > MaxSearchWindow:
		return SearchResponse{}, meridian.Errorf(meridian.EInvalid,
			"Result window is too large, from + size must be less than or equal to: [%d] but was [%d]", MaxSearchWindow, r.From+size)
	}
	terms, qFilters, err := ParseSearchQuery(r.Query)
	if err != nil {
		return SearchResponse{}, err
	}
	filters, err := ParseQueryFilter(r.QueryFilter)
	if err != nil {
		return SearchResponse{}, err
	}
	q := SearchQuery{Terms: terms, Filters: append(qFilters, filters...), Deleted: r.Deleted, From: r.From, Size: size}
	for _, k := range kinds {
		q.Kinds = append(q.Kinds, k.Name)
	}
	var (
		hits  []SearchHit
		total int
	)
	err = s.inReadTx(ctx, func(tx Tx) error {
		hits, total, err = tx.Search(ctx, q)
		return err
	})
	if err != nil {
		return SearchResponse{}, err
	}
	res := SearchResponse{Hits: SearchHits{Total: SearchTotal{Value: total, Relation: "eq"}, Hits: make([]SearchHitJSON, 0, len(hits))}}
	for _, h := range hits {
		if res.Hits.MaxScore == nil || h.Score > *res.Hits.MaxScore {
			score := h.Score
			res.Hits.MaxScore = &score
		}
		res.Hits.Hits = append(res.Hits.Hits, SearchHitJSON{Index: IndexName(h.Kind), ID: h.ID, Score: h.Score, Source: json.RawMessage(h.Source)})
	}
	res.Took = time.Since(start).Milliseconds()
	return res, nil
}

// searchFields maps the query_filter (and q field:value) field names Meridian supports
// to SearchFilter fields. A ".keyword" suffix is accepted on any of them.
var searchFields = map[string]string{
	"entityType":                 "entityType",
	"service":                    "service",
	"service.name":               "service",
	"tags.tagFQN":                "tags",
	"owners":                     "owners",
	"owners.name":                "owners",
	"owners.displayName":         "owners",
	"domains":                    "domains",
	"domains.fullyQualifiedName": "domains",
	"domain.fullyQualifiedName":  "domains",
	"deleted":                    "deleted",
}

// supportedFilter is appended to every query_filter error.
const supportedFilter = "Supported: match_all, term/terms/match, bool.must/bool.filter, and bool.should on one field, on entityType, " +
	"service.name, tags.tagFQN, owners.name, domains.fullyQualifiedName, deleted"

func unsupportedFilter(format string, args ...any) error {
	return meridian.Errorf(meridian.EInvalid, "Unsupported query_filter: %s. %s", fmt.Sprintf(format, args...), supportedFilter)
}

// ParseQueryFilter reads an Elasticsearch query DSL filter into term filters that are
// all required (AND). Accepted, as a whole document {"query": Q} or as a bare Q:
//
//	Q := {"match_all": {}}
//	   | {"term":  {F: V}} | {"term": {F: {"value": V}}}
//	   | {"terms": {F: [V, …]}}
//	   | {"match": {F: V}} | {"match": {F: {"query": V}}}   (an exact term, not analysed)
//	   | {"bool": {"must": Q | [Q, …], "filter": Q | [Q, …]}}
//	   | {"bool": {"should": [L, …] (, "minimum_should_match": 1)}}  (L: term/terms/match on one field)
//	F := entityType | service.name | service | tags.tagFQN | owners.name |
//	     owners.displayName | owners | domains.fullyQualifiedName | domains | deleted
//	     (each optionally with ".keyword"; owners.displayName matches owner names)
//	V := string | number | boolean (deleted takes true or false)
//
// Values compare case-insensitively (OpenMetadata's keyword fields use a lowercase
// normalizer). Anything else (must_not, should across fields, range, wildcard, unknown
// fields, malformed JSON) is EInvalid with a message that lists what is supported.
func ParseQueryFilter(s string) ([]SearchFilter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, unsupportedFilter("malformed JSON (%v)", err)
	}
	if dec.More() {
		return nil, unsupportedFilter("malformed JSON (data after the top-level value)")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, unsupportedFilter("the filter must be a JSON object")
	}
	if q, ok := m["query"]; ok {
		if len(m) > 1 {
			return nil, unsupportedFilter("keys beside query (%s)", strings.Join(otherKeys(m, "query"), ", "))
		}
		m, ok = q.(map[string]any)
		if !ok {
			return nil, unsupportedFilter("query must be a JSON object")
		}
	}
	var out []SearchFilter
	if err := parseClause(m, "query", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// otherKeys returns m's keys but except, sorted; an empty except keeps every key (an
// empty string is a valid JSON key).
func otherKeys(m map[string]any, except string) []string {
	var keys []string
	for k := range m {
		if except == "" || k != except {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func parseClause(m map[string]any, where string, out *[]SearchFilter) error {
	if len(m) != 1 {
		if len(m) == 0 {
			return unsupportedFilter("an empty clause in %s", where)
		}
		return unsupportedFilter("a clause in %s with several keys (%s)", where, strings.Join(otherKeys(m, ""), ", "))
	}
	for op, body := range m {
		switch op {
		case "match_all":
			if _, ok := body.(map[string]any); !ok {
				return unsupportedFilter("match_all must be an object")
			}
			return nil
		case "term", "terms", "match":
			return parseLeaf(op, body, out)
		case "bool":
			b, ok := body.(map[string]any)
			if !ok {
				return unsupportedFilter("bool must be an object")
			}
			for _, key := range otherKeys(b, "") {
				switch key {
				case "must", "filter", "should", "minimum_should_match":
				default:
					return unsupportedFilter("bool.%s", key)
				}
			}
			for _, key := range []string{"must", "filter"} {
				val, ok := b[key]
				if !ok {
					continue
				}
				list, isList := val.([]any)
				if !isList {
					list = []any{val}
				}
				for _, item := range list {
					c, ok := item.(map[string]any)
					if !ok {
						return unsupportedFilter("bool.%s items must be objects", key)
					}
					if err := parseClause(c, "bool."+key, out); err != nil {
						return err
					}
				}
			}
			return parseShould(b, out)
		default:
			if op == "" {
				return unsupportedFilter("a clause in %s with an empty query type", where)
			}
			field := ""
			if b, ok := body.(map[string]any); ok && len(b) == 1 {
				field = " on " + otherKeys(b, "")[0]
			}
			return unsupportedFilter("%s%s", op, field)
		}
	}
	return nil
}

// parseShould reads bool.should as OpenMetadata's UI sends a multi-select: term, terms
// or match clauses on one field, of which at least one must hold. It becomes one filter
// with every value. Beside must or filter, should only filters when
// minimum_should_match is 1 (otherwise Elasticsearch uses it for scoring alone, which
// a filter cannot express, so it is refused).
func parseShould(b map[string]any, out *[]SearchFilter) error {
	val, ok := b["should"]
	msm, hasMSM := b["minimum_should_match"]
	if hasMSM {
		if n := fmt.Sprint(msm); n != "1" {
			return unsupportedFilter("bool.minimum_should_match %s (only 1)", n)
		}
		if !ok {
			return unsupportedFilter("bool.minimum_should_match without should")
		}
	}
	if !ok {
		return nil
	}
	if (b["must"] != nil || b["filter"] != nil) && !hasMSM {
		return unsupportedFilter("bool.should beside must or filter without minimum_should_match 1")
	}
	list, isList := val.([]any)
	if !isList {
		list = []any{val}
	}
	var merged SearchFilter
	for _, item := range list {
		c, ok := item.(map[string]any)
		if !ok || len(c) == 0 {
			return unsupportedFilter("bool.should items must be non-empty objects")
		}
		var one []SearchFilter
		for op, body := range c {
			if len(c) != 1 || (op != "term" && op != "terms" && op != "match") {
				return unsupportedFilter("bool.should with %s (only term, terms or match on one field)", strings.Join(otherKeys(c, ""), ", "))
			}
			if err := parseLeaf(op, body, &one); err != nil {
				return err
			}
		}
		if merged.Field != "" && one[0].Field != merged.Field {
			return unsupportedFilter("bool.should across fields %s and %s (one field only)", merged.Field, one[0].Field)
		}
		merged.Field = one[0].Field
		merged.Values = append(merged.Values, one[0].Values...)
	}
	if merged.Field == "" {
		return unsupportedFilter("an empty bool.should")
	}
	*out = append(*out, merged)
	return nil
}

// parseLeaf reads a term, terms or match clause.
func parseLeaf(op string, body any, out *[]SearchFilter) error {
	b, ok := body.(map[string]any)
	if !ok || len(b) == 0 {
		return unsupportedFilter("%s must be an object naming one field", op)
	}
	fields := otherKeys(b, "")
	if len(fields) > 1 {
		// terms may carry a boost; anything else with several keys is not supported.
		if op == "terms" && len(fields) == 2 && b["boost"] != nil {
			delete(b, "boost")
			fields = otherKeys(b, "")
		} else {
			return unsupportedFilter("%s on several fields (%s)", op, strings.Join(fields, ", "))
		}
	}
	name := fields[0]
	field, ok := searchFields[strings.TrimSuffix(name, ".keyword")]
	if !ok {
		if name == "" {
			return unsupportedFilter("%s on an empty field name", op)
		}
		return unsupportedFilter("%s on %s", op, name)
	}
	val := b[name]
	var raw []any
	switch op {
	case "terms":
		list, ok := val.([]any)
		if !ok || len(list) == 0 {
			return unsupportedFilter("terms on %s needs a non-empty array of values", name)
		}
		raw = list
	default:
		if obj, ok := val.(map[string]any); ok {
			key := "value"
			if op == "match" {
				key = "query"
			}
			inner, ok := obj[key]
			for _, k := range otherKeys(obj, key) {
				if k != "boost" && k != "case_insensitive" {
					ok = false
				}
			}
			if !ok {
				return unsupportedFilter("%s on %s: only {\"%s\": value} is supported", op, name, key)
			}
			val = inner
		}
		raw = []any{val}
	}
	values := make([]string, 0, len(raw))
	for _, r := range raw {
		var v string
		switch x := r.(type) {
		case string:
			v = x
		case bool:
			v = fmt.Sprint(x)
		case json.Number:
			v = x.String()
		default:
			return unsupportedFilter("%s on %s with a value that is not a string, number or boolean", op, name)
		}
		if field == "deleted" {
			switch strings.ToLower(v) {
			case "true", "false":
				v = strings.ToLower(v)
			default:
				return unsupportedFilter("%s on deleted with %q (use true or false)", op, v)
			}
		}
		values = append(values, v)
	}
	*out = append(*out, SearchFilter{Field: field, Values: values})
	return nil
}

// fieldTerm is a q token of the form field:value.
var fieldTerm = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*):(.*)$`)

// ParseSearchQuery reads q: the search words and the term filters of its supported
// field:value tokens. See the package comment above Search for what is supported.
func ParseSearchQuery(q string) ([]string, []SearchFilter, error) {
	q = strings.TrimSpace(q)
	if q == "" || q == "*" {
		return nil, nil, nil
	}
	var (
		terms   []string
		filters []SearchFilter
	)
	for _, tok := range queryTokens(q) {
		switch tok {
		case "AND", "OR", "&&", "||":
			continue
		case "NOT", "!":
			return nil, nil, meridian.Errorf(meridian.EInvalid,
				"Unsupported q: NOT. Supported: keywords (all required, prefixes match), \"*\" and field:value")
		}
		if strings.HasPrefix(tok, "-") || strings.HasPrefix(tok, "!") {
			return nil, nil, meridian.Errorf(meridian.EInvalid,
				"Unsupported q: exclusion %s. Supported: keywords (all required, prefixes match), \"*\" and field:value", tok)
		}
		if m := fieldTerm.FindStringSubmatch(tok); m != nil {
			value := strings.Trim(m[2], `"`)
			if field, ok := searchFields[strings.TrimSuffix(m[1], ".keyword")]; ok && value != "" && value != "*" {
				if field == "deleted" {
					value = strings.ToLower(value)
					if value != "true" && value != "false" {
						return nil, nil, meridian.Errorf(meridian.EInvalid, "Unsupported q: deleted:%s (use true or false)", m[2])
					}
				}
				filters = append(filters, SearchFilter{Field: field, Values: []string{value}})
				continue
			}
			tok = value
		}
		terms = append(terms, SearchWords(tok)...)
	}
	return terms, filters, nil
}

// queryTokens splits q on spaces outside double quotes; quotes stay in the tokens.
func queryTokens(q string) []string {
	var (
		out    []string
		cur    bytes.Buffer
		quoted bool
	)
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case unicode.IsSpace(r) && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
