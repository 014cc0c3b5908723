package rest

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian/store"
)

// searchQuery parses q, index, from, size, deleted and query_filter. size=0 answers
// the total only, as Elasticsearch does.
func (s *server) searchQuery(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := store.SearchRequest{Query: q.Get("q"), Index: strings.TrimSpace(q.Get("index")), QueryFilter: q.Get("query_filter")}
	from, err := intParam(q.Get("from"), "from", 0)
	if err != nil {
		return err
	}
	size, err := intParam(q.Get("size"), "size", store.DefaultSearchSize)
	if err != nil {
		return err
	}
	countOnly := size == 0
	req.From, req.Size = from, size
	if countOnly {
		req.Size = 1
	}
	if v := strings.TrimSpace(q.Get("deleted")); v != "" {
		d, err := queryBool(q, "deleted")
		if err != nil {
			return err
		}
		req.Deleted = &d
	}
	res, err := s.ents.Search(r.Context(), principal(r), req)
	if err != nil {
		return err
	}
	if countOnly {
		res.Hits.Hits = []store.SearchHitJSON{}
		res.Hits.MaxScore = nil
	}
	writeJSON(w, http.StatusOK, res)
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
