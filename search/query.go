package search

import (
	"strings"

	"github.com/meridian-catalog/meridian"
)

// Search limits, as OpenMetadata and Elasticsearch apply them. DefaultSize is the page
// size the edges use when the caller names none.
const (
	DefaultSize    = 10
	MaxSize        = 1000
	MaxWindow      = 10000
	DefaultBuckets = 10
	MaxBuckets     = 100
)

// Cost limits: each word and each filter value costs the full-text engine work, and
// the SQL a query becomes must stay within the engines' expression limits, so a query
// is bounded in its words, its text and its filter values. MaxQueryLength bounds the
// query text the edges parse (characters); the others bound a Query.
const (
	MaxTerms        = 32
	MaxTermLength   = 255
	MaxQueryLength  = 1000
	MaxFilterValues = 64
)

// Mode selects how hits are retrieved and scored. The zero value is Keyword.
type Mode string

// Modes.
const (
	// Keyword matches the query's words in the full-text index and ranks hits by where
	// they match (name, display name, description, column names).
	Keyword Mode = "keyword"
	// Vector ranks entities by the cosine similarity of their embedded text to the
	// query's Text (see Engine).
	Vector Mode = "vector"
	// Hybrid fuses Keyword and Vector (see Engine).
	Hybrid Mode = "hybrid"
)

// TrackTotalHitsUpTo is where a search that does not ask for the exact total stops
// counting, as OpenMetadata asks Elasticsearch (trackTotalHitsUpTo(10000)); it is
// also the deepest page (MaxWindow).
const TrackTotalHitsUpTo = MaxWindow

// Vector and hybrid bounds: K is how many nearest entities are fetched before
// filtering by Threshold and paging.
const (
	DefaultK = 100
	MaxK     = 1000
)

// Field names a term filter or an aggregation.
type Field string

// The fields a filter can test. Every field but FieldDeleted can be aggregated.
const (
	FieldEntityType Field = "entityType" // the kind
	FieldService    Field = "service"    // the service's name
	FieldTags       Field = "tags"       // tag and glossary term FQNs, the columns' included
	FieldOwners     Field = "owners"     // owner names
	FieldDomains    Field = "domains"    // domain FQNs
	FieldDeleted    Field = "deleted"    // "true" or "false"
)

// Aggregatable reports whether matches can be counted by f.
func (f Field) Aggregatable() bool {
	switch f {
	case FieldEntityType, FieldService, FieldTags, FieldOwners, FieldDomains:
		return true
	}
	return false
}

// Filter is a term filter: the field must hold one of the values. Values compare
// case-insensitively.
type Filter struct {
	Field  Field
	Values []string
}

// Query is one search.
//
// Terms are lower-case words as Words makes them: an entity matches when every term,
// or a word starting with it, occurs in its name, display name, description, column
// names or parent FQN, words compared by their stems (Stem). Keyword search forgives
// the way people ask (store.KeywordSearch): stop words are dropped, a misspelt word is
// corrected to the closest indexed words, and when too few entities match every word
// those matching some are answered too (Result.Relaxed). Strict turns all three off.
// No terms matches every entity (each scoring 1). Hits are ordered by score, then by
// FQN, then by id.
//
// Kinds restricts the kinds searched; none searches every kind. Every filter must hold.
// Deleted nil searches active entities only, unless a filter on FieldDeleted says
// otherwise. From and Size select the page; Size 0 answers the total and the
// aggregations without hits.
//
// Aggregations lists the fields to count the matches by: at most Buckets buckets each
// (0 means DefaultBuckets), the largest counts first, ties by key.
//
// Vector and Hybrid modes search Text (the question as asked; the Terms joined when
// empty) among the K nearest entities (0 means DefaultK), keeping those whose score
// reaches Threshold (0 to 1).
//
// CountUpTo, when above 0, lets a keyword search stop counting matches there: Total is
// then the smaller of the match count and CountUpTo, and Result.TotalAtLeast says when
// it reached CountUpTo. Hybrid search, which answers no total of its own, asks for its
// page only, since counting every match of a common word costs more than ranking the
// page at 100,000 entities.
type Query struct {
	Mode         Mode
	Text         string
	K            int
	Threshold    float64
	Terms        []string
	Strict       bool
	Kinds        []string
	Filters      []Filter
	Deleted      *bool
	From         int
	Size         int
	Aggregations []Field
	Buckets      int
	CountUpTo    int
}

// Validate checks what can be checked without the kind registry: the mode (Keyword, the
// keyword service's only one: Engine validates the other modes as keyword queries),
// K and Threshold, paging within MaxSize and MaxWindow, at most MaxTerms terms of at
// most MaxTermLength bytes, known filter fields with values (true or false for
// FieldDeleted), at most MaxFilterValues values over all filters, aggregatable fields
// and the bucket count. Errors are EInvalid.
func (q Query) Validate() error {
	if len(q.Terms) > MaxTerms {
		return meridian.Errorf(meridian.EInvalid, "Search query has %d words, more than the maximum of %d", len(q.Terms), MaxTerms)
	}
	for _, t := range q.Terms {
		if len(t) > MaxTermLength {
			return meridian.Errorf(meridian.EInvalid, "Search query has a word longer than the maximum of %d bytes", MaxTermLength)
		}
	}
	values := 0
	for _, f := range q.Filters {
		values += len(f.Values)
	}
	if values > MaxFilterValues {
		return meridian.Errorf(meridian.EInvalid, "Search filters have %d values, more than the maximum of %d", values, MaxFilterValues)
	}
	switch {
	case q.Mode != "" && q.Mode != Keyword:
		return meridian.Errorf(meridian.EInvalid, "Unsupported search mode %q (supported: %s)", q.Mode, Keyword)
	case q.K < 0 || q.K > MaxK:
		return meridian.Errorf(meridian.EInvalid, "Search k must be between 0 and %d", MaxK)
	case q.Threshold < 0 || q.Threshold > 1:
		return meridian.Errorf(meridian.EInvalid, "Search threshold must be between 0.0 and 1.0")
	case q.From < 0:
		return meridian.Errorf(meridian.EInvalid, "Search from must be at least 0")
	case q.Size < 0 || q.Size > MaxSize:
		return meridian.Errorf(meridian.EInvalid, "Search size must be between 0 and %d", MaxSize)
	case q.From+q.Size > MaxWindow:
		return meridian.Errorf(meridian.EInvalid, "Search from + size must be at most %d", MaxWindow)
	case q.Buckets < 0 || q.Buckets > MaxBuckets:
		return meridian.Errorf(meridian.EInvalid, "Search buckets must be between 0 and %d", MaxBuckets)
	}
	for _, f := range q.Filters {
		if !f.Field.Aggregatable() && f.Field != FieldDeleted {
			return meridian.Errorf(meridian.EInvalid, "Unsupported search filter field %s", f.Field)
		}
		if len(f.Values) == 0 {
			return meridian.Errorf(meridian.EInvalid, "Search filter on %s has no values", f.Field)
		}
		if f.Field != FieldDeleted {
			continue
		}
		for _, v := range f.Values {
			if _, err := DeletedValue(v); err != nil {
				return err
			}
		}
	}
	for _, f := range q.Aggregations {
		if !f.Aggregatable() {
			return meridian.Errorf(meridian.EInvalid, "Unsupported search aggregation %s", f)
		}
	}
	return nil
}

// DeletedValue reads a FieldDeleted filter value: "true" or "false", in any case.
// Anything else is EInvalid.
func DeletedValue(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, meridian.Errorf(meridian.EInvalid, "Invalid deleted filter value %q (use true or false)", v)
}

// SearchesDeleted reports whether q searches soft-deleted entities rather than active
// ones: a filter on FieldDeleted with one value says so, else Deleted, else not.
func (q Query) SearchesDeleted() bool {
	for _, f := range q.Filters {
		if f.Field == FieldDeleted && len(f.Values) == 1 {
			d, _ := DeletedValue(f.Values[0])
			return d
		}
	}
	return q.Deleted != nil && *q.Deleted
}

// BucketLimit is the number of buckets each aggregation keeps.
func (q Query) BucketLimit() int {
	if q.Buckets == 0 {
		return DefaultBuckets
	}
	return q.Buckets
}
