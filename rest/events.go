package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// eventRoutes serves the change-event outbox to admins: GET /v1/events (paged, filtered
// by timestamp and entityType; events older than the retention are pruned once every
// consumer has handled them) and GET /v1/events/consumers (each outbox consumer's
// position and backlog, counted by the database).
func (s *server) eventRoutes(r chi.Router) {
	r.Get("/api/v1/events", s.h(s.listEvents))
	r.Get("/api/v1/events/consumers", s.h(s.eventConsumers))
}

func (s *server) listEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var o store.EventsOptions
	if v := q.Get("timestamp"); v != "" {
		ts, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return invalid("Timestamp %s is not valid, it should be in milliseconds since epoch", v)
		}
		o.Since = ts
	}
	if v := q.Get("entityType"); v != "" && v != "*" {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				o.EntityTypes = append(o.EntityTypes, t)
			}
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return invalid("[query param limit must be a number]")
		}
		o.Limit = n
	}
	o.After = q.Get("after")
	page, err := s.ents.Events(r.Context(), principal(r), o)
	if err != nil {
		return err
	}
	paging := map[string]any{}
	if page.After != "" {
		paging["after"] = page.After
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": page.Data, "paging": paging})
	return nil
}

func (s *server) eventConsumers(w http.ResponseWriter, r *http.Request) error {
	if p := principal(r); !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [ViewEvents] not allowed", p.Name)
	}
	status := []store.ConsumerStatus{}
	if s.dispatcher != nil {
		var err error
		if status, err = s.dispatcher.Status(r.Context()); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": status})
	return nil
}
