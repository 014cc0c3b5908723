package rest

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian/rest/elastic"
	"github.com/meridian-catalog/meridian/search"
)

// searchQuery parses q, index, from, size, deleted and query_filter, with OpenMetadata's
// bounds and messages. size=0 answers the total only, as Elasticsearch does.
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
