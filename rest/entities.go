package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// ChangeHeader is the header that names the change a write made.
const ChangeHeader = "X-OpenMetadata-Change"

// handler is an HTTP handler that returns its error to the one error writer.
type handler func(w http.ResponseWriter, r *http.Request) error

// h adapts a handler to http.HandlerFunc.
func (s *server) h(fn handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// principal returns the authenticated caller. The authenticate middleware guarantees
// one under /api.
func principal(r *http.Request) *meridian.Principal {
	return meridian.PrincipalFrom(r.Context())
}

// writeResult writes the answer of a write: the change header and the entity.
func writeResult(w http.ResponseWriter, status int, res store.Result) {
	if res.Change != "" {
		w.Header().Set(ChangeHeader, res.Change)
	}
	writeJSON(w, status, entityOrEmpty(res.Entity))
}

func entityOrEmpty(e meridian.Entity) any {
	if e == nil {
		return map[string]any{}
	}
	return e
}

// keyFunc reads the entity key of a request: by {id} or by {fqn}.
type keyFunc func(r *http.Request) (store.Key, error)

func byID(r *http.Request) (store.Key, error) {
	id, err := uuidParam(r, "id")
	if err != nil {
		return store.Key{}, err
	}
	return store.ByID(id), nil
}

func byName(r *http.Request) (store.Key, error) {
	fqn, err := fqnParam(r)
	if err != nil {
		return store.Key{}, err
	}
	return store.ByFQN(fqn), nil
}

// listPage is the answer of a list: {data, paging{before?, after?, total}}.
type listPage struct {
	Data   []meridian.Entity `json:"data"`
	Paging paging            `json:"paging"`
}

type paging struct {
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Total  int    `json:"total"`
}

func (s *server) list(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		limit, err := queryLimit(q)
		if err != nil {
			return err
		}
		inc, err := queryInclude(q)
		if err != nil {
			return err
		}
		o := store.ListOptions{Fields: q.Get("fields"), Include: inc, Limit: limit,
			Before: q.Get("before"), After: q.Get("after")}
		if q.Has("before") && q.Has("after") {
			return invalid("Only one of before or after query parameter allowed")
		}
		for _, f := range k.Filters {
			if v := q.Get(f.Param); v != "" {
				if o.Filters == nil {
					o.Filters = map[string]string{}
				}
				o.Filters[f.Param] = v
			}
		}
		page, err := s.ents.List(r.Context(), principal(r), k.Name, o)
		if err != nil {
			return err
		}
		out := listPage{Data: page.Data, Paging: paging{Before: page.Before, After: page.After, Total: page.Total}}
		if out.Data == nil {
			out.Data = []meridian.Entity{}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

func (s *server) create(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readObject(r)
		if err != nil {
			return err
		}
		res, err := s.ents.Create(r.Context(), principal(r), k.Name, body)
		if err != nil {
			return err
		}
		w.Header().Set("Location", location(k, res.Entity))
		writeResult(w, http.StatusCreated, res)
		return nil
	}
}

// location is the Location of a created entity: its href, or its API path.
func location(k *meridian.Kind, e meridian.Entity) string {
	if href := e.String("href"); href != "" {
		return href
	}
	return "/api/v1/" + k.Collection + "/" + e.ID()
}

func (s *server) createOrUpdate(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readObject(r)
		if err != nil {
			return err
		}
		res, err := s.ents.CreateOrUpdate(r.Context(), principal(r), k.Name, body)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if res.Created {
			status = http.StatusCreated
			w.Header().Set("Location", location(k, res.Entity))
		}
		writeResult(w, status, res)
		return nil
	}
}

func (s *server) get(k *meridian.Kind, key keyFunc) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kk, err := key(r)
		if err != nil {
			return err
		}
		o, err := getOptions(r)
		if err != nil {
			return err
		}
		body, etag, err := s.ents.GetJSON(r.Context(), principal(r), k.Name, kk, o)
		if err != nil {
			return err
		}
		w.Header().Set("ETag", etag)
		writeBody(w, http.StatusOK, withBase(body, w))
		return nil
	}
}

func (s *server) patch(k *meridian.Kind, key keyFunc) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kk, err := key(r)
		if err != nil {
			return err
		}
		body, err := readPatch(r)
		if err != nil {
			return err
		}
		res, err := s.ents.Patch(r.Context(), principal(r), k.Name, kk, body, r.Header.Get("If-Match"))
		if err != nil {
			return err
		}
		if res.Entity != nil {
			w.Header().Set("ETag", store.ETag(res.Entity))
		}
		writeResult(w, http.StatusOK, res)
		return nil
	}
}

func (s *server) remove(k *meridian.Kind, key keyFunc) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kk, err := key(r)
		if err != nil {
			return err
		}
		o, err := deleteOptions(r)
		if err != nil {
			return err
		}
		res, err := s.ents.Delete(r.Context(), principal(r), k.Name, kk, o)
		if err != nil {
			return err
		}
		if o.Hard && k.HardDeleteNoContent {
			if res.Change != "" {
				w.Header().Set(ChangeHeader, res.Change)
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		writeResult(w, http.StatusOK, res)
		return nil
	}
}

func (s *server) removeAsync(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kk, err := byID(r)
		if err != nil {
			return err
		}
		o, err := deleteOptions(r)
		if err != nil {
			return err
		}
		job, err := s.ents.DeleteAsync(r.Context(), principal(r), k.Name, kk, o)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, job)
		return nil
	}
}

func (s *server) restore(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readObject(r)
		if err != nil {
			return err
		}
		raw, ok := body["id"].(string)
		if !ok || raw == "" {
			return invalid("id is required: the body must be {\"id\": \"<uuid>\"}")
		}
		id, err := parseUUID(raw)
		if err != nil {
			return err
		}
		res, err := s.ents.Restore(r.Context(), principal(r), k.Name, id)
		if err != nil {
			return err
		}
		writeResult(w, http.StatusOK, res)
		return nil
	}
}

func (s *server) versions(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := uuidParam(r, "id")
		if err != nil {
			return err
		}
		vs, err := s.ents.Versions(r.Context(), principal(r), k.Name, id)
		if err != nil {
			return err
		}
		if vs == nil {
			vs = []string{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"entityType": k.Name, "versions": vs})
		return nil
	}
}

func (s *server) version(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := uuidParam(r, "id")
		if err != nil {
			return err
		}
		v, err := pathParam(r, "version")
		if err != nil {
			return err
		}
		e, err := s.ents.Version(r.Context(), principal(r), k.Name, id, v)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, e)
		return nil
	}
}

// followerID reads the user id of PUT …/followers: a JSON string, a bare UUID, or an
// empty body for the caller.
func followerID(r *http.Request) (string, error) {
	b, err := readBody(r)
	if err != nil {
		return "", err
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		p := principal(r)
		if p == nil || p.ID == "" {
			return "", invalid("The body must be the follower's user id")
		}
		return parseUUID(p.ID)
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", invalid("Invalid request format: %s", jsonProblem(err))
		}
		return parseUUID(strings.TrimSpace(s))
	}
	if b[0] == '{' || b[0] == '[' {
		return "", invalid("Invalid request format: the body must be a user id as a JSON string")
	}
	return parseUUID(string(b))
}

func (s *server) addFollower(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := uuidParam(r, "id")
		if err != nil {
			return err
		}
		userID, err := followerID(r)
		if err != nil {
			return err
		}
		res, err := s.ents.AddFollower(r.Context(), principal(r), k.Name, id, userID)
		if err != nil {
			return err
		}
		writeEvent(w, res)
		return nil
	}
}

func (s *server) removeFollower(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := uuidParam(r, "id")
		if err != nil {
			return err
		}
		userID, err := uuidParam(r, "userId")
		if err != nil {
			return err
		}
		res, err := s.ents.RemoveFollower(r.Context(), principal(r), k.Name, id, userID)
		if err != nil {
			return err
		}
		writeEvent(w, res)
		return nil
	}
}

// writeEvent answers a follower change with its change event, as OpenMetadata does.
func writeEvent(w http.ResponseWriter, res store.Result) {
	if res.Change != "" {
		w.Header().Set(ChangeHeader, res.Change)
	}
	if res.Event != nil {
		writeJSON(w, http.StatusOK, res.Event)
		return
	}
	writeJSON(w, http.StatusOK, entityOrEmpty(res.Entity))
}

// testConnectionResult stores the body as the service's testConnectionResult.
func (s *server) testConnectionResult(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kk, err := byID(r)
		if err != nil {
			return err
		}
		body, err := readObject(r)
		if err != nil {
			return err
		}
		patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/testConnectionResult", "value": body}})
		if err != nil {
			return err
		}
		res, err := s.ents.Patch(r.Context(), principal(r), k.Name, kk, patch, "")
		if err != nil {
			return err
		}
		if res.Entity != nil {
			w.Header().Set("ETag", store.ETag(res.Entity))
		}
		writeResult(w, http.StatusOK, res)
		return nil
	}
}

// testPluginConnection validates a context plugin's stored connection configuration.
// It makes no network call: the configuration must be a non-empty object.
func (s *server) testPluginConnection(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kk, err := byID(r)
		if err != nil {
			return err
		}
		e, err := s.ents.Get(r.Context(), principal(r), k.Name, kk, store.GetOptions{Include: store.IncludeNonDeleted})
		if err != nil {
			return err
		}
		status, msg := "Successful", "The connection configuration is valid"
		switch cfg, ok := e["connectionConfig"].(map[string]any); {
		case e["connectionConfig"] == nil:
			status, msg = "Failed", "The plugin has no connectionConfig"
		case !ok:
			status, msg = "Failed", "connectionConfig must be an object"
		case len(cfg) == 0:
			status, msg = "Failed", "connectionConfig is empty"
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": status, "message": msg})
		return nil
	}
}
