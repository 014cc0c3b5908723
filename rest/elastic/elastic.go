// Package elastic speaks the Elasticsearch dialect of OpenMetadata's search at the
// edges: it reads the q string and the query_filter DSL into a typed search.Query, and
// shapes a search.Result as Elasticsearch's answer (hits.hits[]._source). The search
// itself is the search service's; this package only translates.
//
// What q supports: "" or "*" match everything. Otherwise q is keywords: every word must
// occur, or start a word, in the name, display name, description, column names or
// parent FQN of an entity (snake_case and camelCase names are split into words, as
// search.Words does). Lucene syntax is handled gracefully, not interpreted: AND, OR,
// && and || are ignored (every word is required), quotes, wildcards and brackets are
// word separators, and field:value keeps only the value's words, except that
// entityType:, service.name:, tags.tagFQN:, owners.name:, domains.fullyQualifiedName:
// and deleted: (see ParseQueryFilter for the fields) become term filters. NOT, !, a
// leading - and must_not forms are rejected with EInvalid rather than silently ignored.
//
// query_filter: see ParseQueryFilter. Every parsing error is EInvalid.
//
// Bounds: q is at most search.MaxQueryLength characters and search.MaxTerms words;
// query_filter is at most MaxFilterBytes bytes, MaxFilterClauses clauses and
// MaxFilterDepth nested bool levels; the term filters of both hold at most
// search.MaxFilterValues values in all (search.Query.Validate).
package elastic

import (
	"encoding/json"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// Parse reads q and query_filter into one keyword query: q's words, and the term
// filters of q and of the filter, all required, within the bounds above. The caller
// sets kinds, paging, the deleted switch and aggregations. Errors: EInvalid.
func Parse(q, queryFilter string) (search.Query, error) {
	terms, filters, err := ParseSearchQuery(q)
	if err != nil {
		return search.Query{}, err
	}
	more, err := ParseQueryFilter(queryFilter)
	if err != nil {
		return search.Query{}, err
	}
	out := search.Query{Terms: terms, Filters: append(filters, more...)}
	if err := out.Validate(); err != nil {
		return search.Query{}, err
	}
	return out, nil
}

// Response is Elasticsearch's search answer.
type Response struct {
	Took     int64 `json:"took"`
	TimedOut bool  `json:"timed_out"`
	Hits     Hits  `json:"hits"`
}

// Hits is the hits object: the total, the best score (null without hits) and the page
// of hits.
type Hits struct {
	Total    Total    `json:"total"`
	MaxScore *float64 `json:"max_score"`
	Hits     []Hit    `json:"hits"`
}

// Total is the count of matches: exact when Relation is "eq", a lower bound when it is
// "gte" (the search stopped counting there: search.Result.TotalAtLeast).
type Total struct {
	Value    int    `json:"value"`
	Relation string `json:"relation"`
}

// Hit is one hit: the index name of its kind, its id, score and document.
type Hit struct {
	Index  string          `json:"_index"`
	ID     string          `json:"_id"`
	Score  float64         `json:"_score"`
	Source json.RawMessage `json:"_source"`
}

// Answer shapes res as Elasticsearch answers a search that took took; reg names each
// hit's index.
func Answer(reg *meridian.Registry, res search.Result, took time.Duration) Response {
	relation := "eq"
	if res.TotalAtLeast {
		relation = "gte"
	}
	out := Response{Took: took.Milliseconds(),
		Hits: Hits{Total: Total{Value: res.Total, Relation: relation}, Hits: make([]Hit, 0, len(res.Hits))}}
	for _, h := range res.Hits {
		if out.Hits.MaxScore == nil || h.Score > *out.Hits.MaxScore {
			score := h.Score
			out.Hits.MaxScore = &score
		}
		index := h.Kind
		if k, ok := reg.Kind(h.Kind); ok {
			index = k.IndexName()
		}
		out.Hits.Hits = append(out.Hits.Hits, Hit{Index: index, ID: h.ID, Score: h.Score, Source: h.Source})
	}
	return out
}
