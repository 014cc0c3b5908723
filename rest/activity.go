package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/activity"
)

// activityRoutes are /v1/activity/** (collab/activity): the stream, per entity, per
// user, its count, and its retention settings.
func (s *server) activityRoutes() []route {
	p := apiPrefix + "/v1/activity"
	event := obj{"type": "object", "required": []any{"id", "eventType", "timestamp", "actor", "entity"}, "properties": obj{
		"id": obj{"type": "string"}, "eventType": obj{"type": "string"}, "timestamp": obj{"type": "integer", "format": "int64"},
		"actor": obj{"type": "object", "properties": obj{"name": obj{"type": "string"}}},
		"entity": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "type": obj{"type": "string"},
			"name": obj{"type": "string"}, "fullyQualifiedName": obj{"type": "string"}}},
		"domains":         obj{"type": "array", "items": obj{"type": "string"}},
		"previousVersion": obj{"type": "number"}, "currentVersion": obj{"type": "number"},
		"fieldsAdded":   obj{"type": "array", "items": obj{"type": "string"}},
		"fieldsUpdated": obj{"type": "array", "items": obj{"type": "string"}},
		"fieldsDeleted": obj{"type": "array", "items": obj{"type": "string"}}}}
	list := obj{"type": "object", "required": []any{"data", "paging"}, "properties": obj{
		"data": obj{"type": "array", "items": event}, "paging": pagingSchema}}
	settings := obj{"type": "object", "required": []any{"retentionDays"}, "properties": obj{
		"retentionDays": obj{"type": "integer", "minimum": activity.MinRetentionDays, "maximum": activity.MaxRetentionDays,
			"default": activity.DefaultRetentionDays, "description": "activityStreamConfig.retentionDays: the global retention."},
		"domains": obj{"type": "array", "maxItems": activity.MaxDomainRetentions, "items": obj{"type": "object",
			"required": []any{"domain", "retentionDays"}, "properties": obj{
				"domain":        obj{"type": "string", "description": "The domain's fully qualified name."},
				"retentionDays": obj{"type": "integer", "minimum": activity.MinRetentionDays, "maximum": activity.MaxRetentionDays}}}}}}
	ts := obj{"type": "integer", "format": "int64", "minimum": 0}
	window := []any{
		queryParam("eventType", "Only events of this type.", obj{"type": "string"}),
		queryParam("startTs", "Only events at or after this time (epoch ms).", ts),
		queryParam("endTs", "Only events at or before this time (epoch ms).", ts),
		queryParam("limit", "Page size.", obj{"type": "integer", "minimum": 0, "maximum": activity.MaxLimit, "default": activity.DefaultLimit}),
		paramRef("after")}
	filters := cat([]any{
		queryParam("entityType", "Only events of this entity type.", obj{"type": "string"}),
		queryParam("entityId", "Only events of this entity.", schemaRef("uuid")),
		queryParam("userName", "Only events this user made.", obj{"type": "string"}),
		queryParam("domain", "Only events of entities in this domain (its FQN).", obj{"type": "string"})}, window)
	entityType := pathParamSpec("entityType", "The entity type.", obj{"type": "string"})
	return []route{
		{method: http.MethodGet, path: p, handler: s.h(s.listActivity), id: "listActivityEvents", tag: "activity",
			summary:     "List the activity stream",
			description: "The system's changes, newest first, taken from the change events (not from conversations). Any authenticated user.",
			params:      filters, responses: responses(obj{"200": resp("A page of events.", list)}, 400, 403)},
		{method: http.MethodGet, path: p + "/count", handler: s.h(s.countActivity), id: "countActivityEvents", tag: "activity",
			summary: "Count activity events", params: filters[:len(filters)-2],
			responses: responses(obj{"200": resp("The count.", obj{"type": "object", "properties": obj{"total": obj{"type": "integer"}}})}, 400, 403)},
		{method: http.MethodGet, path: p + "/entity/{entityType}/{id}", handler: s.h(s.entityActivity(byID)), id: "listEntityActivityById",
			tag: "activity", summary: "List the activity of an entity by id", params: cat([]any{entityType, paramRef("id")}, window),
			responses: responses(obj{"200": resp("A page of events.", list)}, 400, 403, 404)},
		{method: http.MethodGet, path: p + "/entity/{entityType}/name/{fqn}", handler: s.h(s.entityActivity(byName)),
			id: "listEntityActivityByName", tag: "activity", summary: "List the activity of an entity by fully qualified name",
			params:    cat([]any{entityType, paramRef("fqn")}, window),
			responses: responses(obj{"200": resp("A page of events.", list)}, 400, 403, 404)},
		{method: http.MethodGet, path: p + "/user/{user}", handler: s.h(s.userActivity), id: "listUserActivity", tag: "activity",
			summary: "List the activity of a user", params: cat([]any{pathParamSpec("user", "The user's name, or id.", obj{"type": "string"})}, window),
			responses: responses(obj{"200": resp("A page of events.", list)}, 400, 403, 404)},
		{method: http.MethodGet, path: p + "/settings", handler: s.h(s.getActivitySettings), id: "getActivitySettings", tag: "activity",
			summary:   "Get the activity stream's retention",
			responses: responses(obj{"200": resp("The settings.", settings)}, 403)},
		{method: http.MethodPut, path: p + "/settings", handler: s.h(s.putActivitySettings), id: "putActivitySettings", tag: "activity",
			summary:     "Set the activity stream's retention",
			description: "Admins only. Replaces the global retention and the per-domain ones; the retention job applies them at its next run (hourly).",
			body:        jsonBody("The settings.", settings, true),
			responses:   responses(obj{"200": resp("The settings.", settings)}, 400, 403, 404)},
	}
}

// activityServiceAndQuery is the activity service and the query of r.
func (s *server) activityServiceAndQuery(r *http.Request) (*activity.Service, activity.Query, error) {
	svc, err := s.activityService()
	if err != nil {
		return nil, activity.Query{}, err
	}
	q, err := activityQuery(r)
	return svc, q, err
}

func (s *server) activityService() (*activity.Service, error) {
	if s.activity == nil {
		return nil, meridian.Errorf(meridian.EUnavailable, "The activity stream is not configured on this server")
	}
	return s.activity, nil
}

// activityQuery parses the filters of an activity list.
func activityQuery(r *http.Request) (activity.Query, error) {
	q := r.URL.Query()
	aq := activity.Query{EntityType: q.Get("entityType"), EntityID: q.Get("entityId"), UserName: q.Get("userName"),
		Domain: q.Get("domain"), EventType: q.Get("eventType"), After: q.Get("after")}
	var err error
	if aq.Start, _, err = queryTs(r, "startTs"); err != nil {
		return aq, err
	}
	if aq.End, _, err = queryTs(r, "endTs"); err != nil {
		return aq, err
	}
	if v := strings.TrimSpace(q.Get("limit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return aq, invalid("[query param limit must be an integer]")
		}
		if n == 0 {
			n = activity.DefaultLimit
		}
		aq.Limit = n
	}
	return aq, nil
}

// respondActivity ends an activity list handler: it returns err when there is one,
// and otherwise answers the page.
func respondActivity(w http.ResponseWriter, page activity.Page, err error) error {
	return respond(w, http.StatusOK, map[string]any{"data": page.Data, "paging": paging{After: page.After, Total: page.Total}}, err)
}

func (s *server) listActivity(w http.ResponseWriter, r *http.Request) error {
	svc, q, err := s.activityServiceAndQuery(r)
	if err != nil {
		return err
	}
	page, err := svc.List(r.Context(), principal(r), q)
	return respondActivity(w, page, err)
}

func (s *server) countActivity(w http.ResponseWriter, r *http.Request) error {
	svc, q, err := s.activityServiceAndQuery(r)
	if err != nil {
		return err
	}
	n, err := svc.Count(r.Context(), principal(r), q)
	return respond(w, http.StatusOK, map[string]any{"total": n}, err)
}

func (s *server) entityActivity(keyOf keyFunc) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		svc, err := s.activityService()
		if err != nil {
			return err
		}
		kind, err := pathParam(r, "entityType")
		if err != nil {
			return err
		}
		key, err := keyOf(r)
		if err != nil {
			return err
		}
		q, err := activityQuery(r)
		if err != nil {
			return err
		}
		page, err := svc.EntityActivity(r.Context(), principal(r), kind, key, q)
		return respondActivity(w, page, err)
	}
}

func (s *server) userActivity(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.activityService()
	if err != nil {
		return err
	}
	user, err := pathParam(r, "user")
	if err != nil {
		return err
	}
	if strings.TrimSpace(user) == "" {
		return invalid("Invalid user: empty")
	}
	q, err := activityQuery(r)
	if err != nil {
		return err
	}
	page, err := svc.UserActivity(r.Context(), principal(r), user, q)
	return respondActivity(w, page, err)
}

func (s *server) getActivitySettings(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.activityService()
	if err != nil {
		return err
	}
	set, err := svc.Settings(r.Context())
	return respond(w, http.StatusOK, set, err)
}

func (s *server) putActivitySettings(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.activityService()
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	set, err := settingsFrom(body)
	if err != nil {
		return err
	}
	out, err := svc.PutSettings(r.Context(), principal(r), set)
	return respond(w, http.StatusOK, out, err)
}

// settingsFrom reads activity settings from a JSON object, naming the field that is
// wrong.
func settingsFrom(body meridian.Entity) (activity.Settings, error) {
	var set activity.Settings
	for k := range body {
		if k != "retentionDays" && k != "domains" {
			return set, invalid("Unrecognized field %s", k)
		}
	}
	days, ok := wholeNumber(body["retentionDays"])
	if !ok {
		return set, invalid("retentionDays is required and must be an integer")
	}
	set.RetentionDays = days
	if raw, has := body["domains"]; has && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return set, invalid("domains must be an array")
		}
		if len(list) > activity.MaxDomainRetentions {
			return set, invalid("At most %d domains may have their own retention", activity.MaxDomainRetentions)
		}
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				return set, invalid("domains[%d] must be an object", i)
			}
			name, _ := m["domain"].(string)
			d, ok := wholeNumber(m["retentionDays"])
			if !ok {
				return set, invalid("domains[%d].retentionDays is required and must be an integer", i)
			}
			set.Domains = append(set.Domains, activity.DomainRetention{Domain: name, RetentionDays: d})
		}
	}
	return set, nil
}

// wholeNumber reads a JSON integer within ±1e9.
func wholeNumber(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) || f > 1e9 || f < -1e9 {
		return 0, false
	}
	return int(f), true
}
