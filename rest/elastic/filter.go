package elastic

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// searchFields maps the query_filter (and q field:value) field names Meridian supports
// to search.Filter fields. A ".keyword" suffix is accepted on any of them.
var searchFields = map[string]search.Field{
	"entityType":                 search.FieldEntityType,
	"service":                    search.FieldService,
	"service.name":               search.FieldService,
	"tags.tagFQN":                search.FieldTags,
	"owners":                     search.FieldOwners,
	"owners.name":                search.FieldOwners,
	"owners.displayName":         search.FieldOwners,
	"domains":                    search.FieldDomains,
	"domains.fullyQualifiedName": search.FieldDomains,
	"domain.fullyQualifiedName":  search.FieldDomains,
	"deleted":                    search.FieldDeleted,
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
func ParseQueryFilter(s string) ([]search.Filter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if len(s) > MaxFilterBytes {
		return nil, meridian.Errorf(meridian.EInvalid, "query_filter is larger than the maximum of %d bytes", MaxFilterBytes)
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
	p := filterParser{}
	if err := p.clause(m, "query", 1); err != nil {
		return nil, err
	}
	return p.out, nil
}

// Bounds of a query_filter, besides search.MaxFilterValues on the values of all its
// term filters: its size in bytes, its clauses (term, terms, match, match_all and bool
// objects) and how deep bool clauses nest.
const (
	MaxFilterBytes   = 16 << 10
	MaxFilterClauses = 64
	MaxFilterDepth   = 8
)

// filterParser reads one query_filter, counting what it bounds.
type filterParser struct {
	out     []search.Filter
	clauses int
	values  int
}

// add appends a filter, within search.MaxFilterValues over the whole filter.
func (p *filterParser) add(f search.Filter) error {
	if p.values += len(f.Values); p.values > search.MaxFilterValues {
		return meridian.Errorf(meridian.EInvalid, "query_filter has more than the maximum of %d values", search.MaxFilterValues)
	}
	p.out = append(p.out, f)
	return nil
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

func (p *filterParser) clause(m map[string]any, where string, depth int) error {
	if p.clauses++; p.clauses > MaxFilterClauses {
		return meridian.Errorf(meridian.EInvalid, "query_filter has more than the maximum of %d clauses", MaxFilterClauses)
	}
	if depth > MaxFilterDepth {
		return meridian.Errorf(meridian.EInvalid, "query_filter nests bool clauses deeper than the maximum of %d levels", MaxFilterDepth)
	}
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
			f, err := parseLeaf(op, body)
			if err != nil {
				return err
			}
			return p.add(f)
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
					if err := p.clause(c, "bool."+key, depth+1); err != nil {
						return err
					}
				}
			}
			return p.should(b)
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
func (p *filterParser) should(b map[string]any) error {
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
	var merged search.Filter
	for _, item := range list {
		c, ok := item.(map[string]any)
		if !ok || len(c) == 0 {
			return unsupportedFilter("bool.should items must be non-empty objects")
		}
		var one search.Filter
		for op, body := range c {
			if len(c) != 1 || (op != "term" && op != "terms" && op != "match") {
				return unsupportedFilter("bool.should with %s (only term, terms or match on one field)", strings.Join(otherKeys(c, ""), ", "))
			}
			if p.clauses++; p.clauses > MaxFilterClauses {
				return meridian.Errorf(meridian.EInvalid, "query_filter has more than the maximum of %d clauses", MaxFilterClauses)
			}
			var err error
			if one, err = parseLeaf(op, body); err != nil {
				return err
			}
		}
		if merged.Field != "" && one.Field != merged.Field {
			return unsupportedFilter("bool.should across fields %s and %s (one field only)", merged.Field, one.Field)
		}
		merged.Field = one.Field
		merged.Values = append(merged.Values, one.Values...)
	}
	if merged.Field == "" {
		return unsupportedFilter("an empty bool.should")
	}
	return p.add(merged)
}

// parseLeaf reads a term, terms or match clause.
func parseLeaf(op string, body any) (search.Filter, error) {
	b, ok := body.(map[string]any)
	if !ok || len(b) == 0 {
		return search.Filter{}, unsupportedFilter("%s must be an object naming one field", op)
	}
	fields := otherKeys(b, "")
	if len(fields) > 1 {
		// terms may carry a boost; anything else with several keys is not supported.
		if op == "terms" && len(fields) == 2 && b["boost"] != nil {
			delete(b, "boost")
			fields = otherKeys(b, "")
		} else {
			return search.Filter{}, unsupportedFilter("%s on several fields (%s)", op, strings.Join(fields, ", "))
		}
	}
	name := fields[0]
	field, ok := searchFields[strings.TrimSuffix(name, ".keyword")]
	if !ok {
		if name == "" {
			return search.Filter{}, unsupportedFilter("%s on an empty field name", op)
		}
		return search.Filter{}, unsupportedFilter("%s on %s", op, name)
	}
	val := b[name]
	var raw []any
	switch op {
	case "terms":
		list, ok := val.([]any)
		if !ok || len(list) == 0 {
			return search.Filter{}, unsupportedFilter("terms on %s needs a non-empty array of values", name)
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
				return search.Filter{}, unsupportedFilter("%s on %s: only {\"%s\": value} is supported", op, name, key)
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
			return search.Filter{}, unsupportedFilter("%s on %s with a value that is not a string, number or boolean", op, name)
		}
		if field == search.FieldDeleted {
			switch strings.ToLower(v) {
			case "true", "false":
				v = strings.ToLower(v)
			default:
				return search.Filter{}, unsupportedFilter("%s on deleted with %q (use true or false)", op, v)
			}
		}
		values = append(values, v)
	}
	return search.Filter{Field: field, Values: values}, nil
}
