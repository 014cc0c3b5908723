package rest

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/rest/elastic"
	"github.com/meridian-catalog/meridian/search"
)

// searchQuery parses q, index, from, size, deleted, query_filter and track_total_hits,
// with OpenMetadata's bounds and messages. size=0 answers the total only, as
// Elasticsearch does. As OpenMetadata asks Elasticsearch, matches are counted up to
// search.TrackTotalHitsUpTo unless track_total_hits=true: counting every match of a
// common word took longer than ranking the page at 100,000 entities.
func (s *server) searchQuery(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	params := r.URL.Query()
	kinds, err := search.Kinds(s.ents.Registry(), strings.TrimSpace(params.Get("index")))
	if err != nil {
		return err
	}
	from, err := intParam(params.Get("from"), "from", 0)
	if err != nil {
		return err
	}
	size, err := intParam(params.Get("size"), "size", search.DefaultSize)
	if err != nil {
		return err
	}
	switch {
	case size > search.MaxSize:
		return invalid("[query param size must be less than or equal to %d]", search.MaxSize)
	case from+size > search.MaxWindow:
		return invalid("Result window is too large, from + size must be less than or equal to: [%d] but was [%d]", search.MaxWindow, from+size)
	}
	q, err := elastic.Parse(params.Get("q"), params.Get("query_filter"))
	if err != nil {
		return err
	}
	q.Kinds, q.From, q.Size = kinds, from, size
	if strings.TrimSpace(params.Get("deleted")) != "" {
		d, err := queryBool(params, "deleted")
		if err != nil {
			return err
		}
		q.Deleted = &d
	}
	exact, err := queryBool(params, "track_total_hits")
	if err != nil {
		return err
	}
	if !exact {
		q.CountUpTo = search.TrackTotalHitsUpTo
	}
	res, err := s.search.Search(r.Context(), principal(r), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, elastic.Answer(s.ents.Registry(), res, time.Since(start)))
	return nil
}

// intParam parses an integer query parameter, def when absent.
func intParam(v, name string, def int) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, invalid("[query param %s is out of range]", name)
		}
		return 0, invalid("[query param %s must be an integer]", name)
	}
	if n < 0 {
		return 0, invalid("[query param %s must be greater than or equal to 0]", name)
	}
	return n, nil
}

// semanticAnswer is Elasticsearch's answer with each hit's matched passage as its
// highlight (highlight.passage), as the semantic and hybrid searches give it.
type semanticAnswer struct {
	Took     int64        `json:"took"`
	TimedOut bool         `json:"timed_out"`
	Hits     semanticHits `json:"hits"`
}

type semanticHits struct {
	Total    elastic.Total `json:"total"`
	MaxScore *float64      `json:"max_score"`
	Hits     []semanticHit `json:"hits"`
}

type semanticHit struct {
	elastic.Hit
	Highlight map[string][]string `json:"highlight,omitempty"`
}

// answerWithPassages shapes res as elastic.Answer does, adding each hit's passage.
func answerWithPassages(reg *meridian.Registry, res search.Result, took time.Duration) semanticAnswer {
	a := elastic.Answer(reg, res, took)
	out := semanticAnswer{Took: a.Took, TimedOut: a.TimedOut,
		Hits: semanticHits{Total: a.Hits.Total, MaxScore: a.Hits.MaxScore, Hits: make([]semanticHit, len(a.Hits.Hits))}}
	for i, h := range a.Hits.Hits {
		out.Hits.Hits[i] = semanticHit{Hit: h}
		if p := res.Hits[i].Passage; p != "" {
			out.Hits.Hits[i].Highlight = map[string][]string{"passage": {p}}
		}
	}
	return out
}

// meaningQuery reads what the semantic and hybrid searches share: the question (q,
// required, at most search.MaxQueryLength characters), the index, from and size, k
// (1 to search.MaxK, default search.DefaultK), threshold (0 to 1) and query_filter.
func (s *server) meaningQuery(r *http.Request, mode search.Mode) (search.Query, error) {
	params := r.URL.Query()
	text := strings.TrimSpace(params.Get("q"))
	switch {
	case text == "" || text == "*":
		return search.Query{}, invalid("[query param q is required: the question to search by meaning]")
	case len([]rune(text)) > search.MaxQueryLength:
		return search.Query{}, invalid("[query param q must be at most %d characters]", search.MaxQueryLength)
	}
	kinds, err := search.Kinds(s.ents.Registry(), strings.TrimSpace(params.Get("index")))
	if err != nil {
		return search.Query{}, err
	}
	from, err := intParam(params.Get("from"), "from", 0)
	if err != nil {
		return search.Query{}, err
	}
	size, err := intParam(params.Get("size"), "size", search.DefaultSize)
	if err != nil {
		return search.Query{}, err
	}
	k, err := intParam(params.Get("k"), "k", search.DefaultK)
	if err != nil {
		return search.Query{}, err
	}
	threshold := 0.0
	if v := strings.TrimSpace(params.Get("threshold")); v != "" {
		if threshold, err = strconv.ParseFloat(v, 64); err != nil || threshold < 0 || threshold > 1 {
			return search.Query{}, invalid("[query param threshold must be a number between 0.0 and 1.0]")
		}
	}
	filters, err := elastic.ParseQueryFilter(params.Get("query_filter"))
	if err != nil {
		return search.Query{}, err
	}
	switch {
	case size > search.MaxSize:
		return search.Query{}, invalid("[query param size must be less than or equal to %d]", search.MaxSize)
	case k < 1 || k > search.MaxK:
		return search.Query{}, invalid("[query param k must be between 1 and %d]", search.MaxK)
	case from+size > search.MaxWindow:
		return search.Query{}, invalid("Result window is too large, from + size must be less than or equal to: [%d] but was [%d]", search.MaxWindow, from+size)
	}
	q := search.Query{Mode: mode, Text: text, K: k, Threshold: threshold, Kinds: kinds, Filters: filters, From: from, Size: size}
	if words := search.Words(text); len(words) > search.MaxTerms {
		q.Terms = words[:search.MaxTerms] // the keyword side's words; the vector side reads all of Text
	}
	return q, nil
}

// searchByMeaning answers GET /v1/search/semantic (mode search.Vector) and
// GET /v1/search/hybrid (search.Hybrid) in Elasticsearch's shape, each hit with its
// matched passage as highlight.passage.
func (s *server) searchByMeaning(mode search.Mode) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		start := time.Now()
		q, err := s.meaningQuery(r, mode)
		if err != nil {
			return err
		}
		res, err := s.search.Search(r.Context(), principal(r), q)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, answerWithPassages(s.ents.Registry(), res, time.Since(start)))
		return nil
	}
}

// vectorSearchRequest is the body of POST /v1/search/vector/query, as OpenMetadata's
// VectorSearchRequest has it.
type vectorSearchRequest struct {
	Query     string              `json:"query"`
	Filters   map[string][]string `json:"filters"`
	Size      *int                `json:"size"`
	From      int                 `json:"from"`
	K         *int                `json:"k"`
	Threshold float64             `json:"threshold"`
}

// vectorFilterFields are the filters of POST /v1/search/vector/query.
var vectorFilterFields = map[string]search.Field{"entityType": search.FieldEntityType, "service": search.FieldService, "tags": search.FieldTags}

// vectorQuery answers POST /v1/search/vector/query as OpenMetadata does:
// {tookMillis, hits}, each hit the entity document with its _score and the passage
// that matched. size is clamped to 1–100 and k to 1–search.MaxK, as OpenMetadata
// clamps them; an unknown filter is 400 naming the known ones.
func (s *server) vectorQuery(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if _, err := decodeJSON(b); err != nil {
		return err
	}
	var req vectorSearchRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return invalid("Invalid request format: %s", jsonProblem(err))
	}
	req.Query = strings.TrimSpace(req.Query)
	switch {
	case req.Query == "":
		return invalid("query is required")
	case len([]rune(req.Query)) > search.MaxQueryLength:
		return invalid("query must be at most %d characters", search.MaxQueryLength)
	case req.Threshold < 0 || req.Threshold > 1:
		return invalid("threshold must be between 0.0 and 1.0")
	case req.From < 0 || req.From > search.MaxK:
		return invalid("from must be between 0 and %d", search.MaxK)
	}
	size, k := search.DefaultSize, search.MaxK
	if req.Size != nil {
		size = min(max(*req.Size, 1), 100)
	}
	if req.K != nil {
		k = min(max(*req.K, 1), search.MaxK)
	}
	q := search.Query{Mode: search.Vector, Text: req.Query, K: k, Threshold: req.Threshold, From: req.From, Size: size}
	for _, key := range slices.Sorted(maps.Keys(req.Filters)) {
		field, ok := vectorFilterFields[key]
		if !ok {
			return invalid("Unknown filter %s (known filters: entityType, service, tags)", key)
		}
		if len(req.Filters[key]) == 0 {
			continue
		}
		if field == search.FieldEntityType {
			q.Kinds = append(q.Kinds, req.Filters[key]...)
		} else {
			q.Filters = append(q.Filters, search.Filter{Field: field, Values: req.Filters[key]})
		}
	}
	if q.Kinds == nil {
		if q.Kinds, err = search.Kinds(s.ents.Registry(), "dataAsset"); err != nil {
			return err
		}
	}
	res, err := s.search.Search(r.Context(), principal(r), q)
	if err != nil {
		return err
	}
	hits := make([]map[string]any, 0, len(res.Hits))
	for _, h := range res.Hits {
		var doc map[string]any
		if err := json.Unmarshal(h.Source, &doc); err != nil || doc == nil {
			doc = map[string]any{"id": h.ID, "fullyQualifiedName": h.FQN, "entityType": h.Kind}
		}
		doc["_score"] = h.Score
		if h.Passage != "" {
			doc["_passage"] = h.Passage
		}
		hits = append(hits, doc)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tookMillis": time.Since(start).Milliseconds(), "hits": hits, "total": res.Total})
	return nil
}
