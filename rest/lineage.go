package rest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// maxRESTLineageDepth is the deepest lineage walk the REST API accepts, as
// OpenMetadata's @Max(3). The MCP tools walk deeper (store.MaxLineageDepth).
const maxRESTLineageDepth = 3

func (s *server) addLineage(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if body["edge"] == nil {
		return invalid("[edge must not be null]")
	}
	b, _ := json.Marshal(body)
	var a store.AddLineage
	if err := json.Unmarshal(b, &a); err != nil {
		return invalid("Invalid request format: %s", jsonProblem(err))
	}
	change, err := s.ents.AddLineage(r.Context(), principal(r), a)
	if err != nil {
		return err
	}
	w.Header().Set(ChangeHeader, change)
	w.WriteHeader(http.StatusOK)
	return nil
}

// depthParam parses upstreamDepth or downstreamDepth: 0 to 3, default 1.
func depthParam(r *http.Request, name string) (int, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return 0, invalid("[query param %s must be an integer]", name)
	case n < 0:
		return 0, invalid("[query param %s must be greater than or equal to 0]", name)
	case n > maxRESTLineageDepth:
		return 0, invalid("[query param %s must be less than or equal to %d]", name, maxRESTLineageDepth)
	}
	return n, nil
}

func (s *server) getLineage(key keyFunc) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kind, err := pathParam(r, "entity")
		if err != nil {
			return err
		}
		kk, err := key(r)
		if err != nil {
			return err
		}
		var o store.LineageOptions
		if o.Upstream, err = depthParam(r, "upstreamDepth"); err != nil {
			return err
		}
		if o.Downstream, err = depthParam(r, "downstreamDepth"); err != nil {
			return err
		}
		if o.IncludeDeleted, err = queryBool(r.URL.Query(), "includeDeleted"); err != nil {
			return err
		}
		l, err := s.ents.GetLineage(r.Context(), principal(r), kind, kk, o)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, l)
		return nil
	}
}

func (s *server) deleteLineage(byFQN bool) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		var keys [2]store.Key
		var kinds [2]string
		for i, names := range [2][3]string{{"entity", "id", "fqn"}, {"toEntity", "toId", "toFqn"}} {
			kind, err := pathParam(r, names[0])
			if err != nil {
				return err
			}
			kinds[i] = kind
			if byFQN {
				v, err := pathParam(r, names[2])
				if err != nil {
					return err
				}
				if v == "" {
					return invalid("Invalid fully qualified name: empty")
				}
				keys[i] = store.ByFQN(v)
				continue
			}
			id, err := uuidParam(r, names[1])
			if err != nil {
				return err
			}
			keys[i] = store.ByID(id)
		}
		if err := s.ents.DeleteLineage(r.Context(), principal(r), kinds[0], keys[0], kinds[1], keys[1]); err != nil {
			return err
		}
		w.Header().Set(ChangeHeader, meridian.EventEntityLineageDeleted)
		w.WriteHeader(http.StatusOK)
		return nil
	}
}
