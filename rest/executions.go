package rest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/executions"
	"github.com/meridian-catalog/meridian/schema"
)

// executionRoutes are /v1/mcpExecutions and /v1/agentExecutions (collab/executions).
func (s *server) executionRoutes() []route {
	var rs []route
	for _, sr := range []executions.Series{executions.MCP, executions.Agent} {
		rs = append(rs, s.seriesRoutes(sr)...)
	}
	return rs
}

func (s *server) seriesRoutes(sr executions.Series) []route {
	one := upperFirst(sr.Name)
	p := apiPrefix + "/v1/" + sr.Name + "s"
	doc := recordSchema(sr.Name)
	list := obj{"type": "object", "required": []any{"data", "paging"}, "properties": obj{
		"data": obj{"type": "array", "items": doc}, "paging": pagingSchema}}
	idParam := pathParamSpec("id", "The record's id.", schemaRef("uuid"))
	ts := obj{"type": "integer", "format": "int64", "minimum": 0}
	return []route{
		{method: http.MethodGet, path: p, handler: s.h(s.listExecutions(sr)), id: "list" + one + "s", tag: sr.Name,
			summary: "List " + sr.Name + " records",
			description: "Newest first. startTs and endTs come together (one without the other is 400). Without " +
				sr.IDField + " only admins list the records of every " + sr.Kind + ".",
			params: []any{
				queryParam(sr.IDField, "The "+sr.Kind+" whose records to list.", schemaRef("uuid")),
				queryParam("startTs", "Only records at or after this time (epoch ms); requires endTs.", ts),
				queryParam("endTs", "Only records at or before this time (epoch ms); requires startTs.", ts),
				queryParam("limit", "Page size.", obj{"type": "integer", "minimum": 0, "maximum": executions.MaxLimit, "default": executions.DefaultLimit}),
				paramRef("after"), paramRef("include")},
			responses: responses(obj{"200": resp("A page of records.", list)}, 400, 403, 404)},
		{method: http.MethodPost, path: p, handler: s.h(s.createExecution(sr)), id: "create" + one, tag: sr.Name,
			summary: "Record a " + sr.Name, description: "Needs Edit on the " + sr.Kind + ", which must exist.",
			body:      jsonBody("The record.", doc, true),
			responses: responses(obj{"201": resp("The stored record.", doc)}, 400, 403, 404, 409, 413)},
		{method: http.MethodGet, path: p + "/{id}", handler: s.h(s.getExecution(sr)), id: "get" + one, tag: sr.Name,
			summary: "Get a " + sr.Name + " by id", params: []any{idParam, paramRef("include")},
			responses: responses(obj{"200": resp("The record.", doc)}, 400, 403, 404)},
		{method: http.MethodDelete, path: p + "/{id}", handler: s.h(s.deleteExecution(sr)), id: "delete" + one, tag: sr.Name,
			summary: "Delete a " + sr.Name + " by id", description: "A soft delete (Delete on the " + sr.Kind +
				") marks it deleted; hardDelete=true (HardDelete) removes it.",
			params: []any{idParam, paramRef("hardDelete")},
			responses: responses(obj{"200": resp("The soft-deleted record.", doc), "204": resp("Hard delete: no content.", nil)},
				400, 403, 404)},
		{method: http.MethodDelete, path: p + "/{" + sr.IDField + "}/{timestamp}", handler: s.h(s.deleteExecutionAt(sr)),
			id: "delete" + one + "AtTimestamp", tag: sr.Name,
			summary:     "Delete the " + sr.Name + " of a " + sr.Kind + " at a timestamp",
			description: "Removes the record for good; needs HardDelete on the " + sr.Kind + ".",
			params: []any{pathParamSpec(sr.IDField, "The "+sr.Kind+"'s id.", schemaRef("uuid")),
				pathParamSpec("timestamp", "The record's timestamp (epoch ms).", ts)},
			responses: responses(obj{"204": resp("Deleted.", nil)}, 400, 403, 404)},
	}
}

// pagingSchema is the paging object of the collaboration lists: the next page's cursor
// and the count of every match.
var pagingSchema = obj{"type": "object", "required": []any{"total"}, "properties": obj{
	"after": obj{"type": "string", "description": "Cursor of the next page; absent on the last."},
	"total": obj{"type": "integer", "description": "How many match."}}}

// recordSchema is a record schema as an OpenAPI schema object.
func recordSchema(name string) obj {
	v, err := schema.NewRecords()
	if err != nil {
		return obj{"type": "object"}
	}
	raw, ok := v.Schema(name)
	if !ok {
		return obj{"type": "object"}
	}
	var o obj
	if err := json.Unmarshal(raw, &o); err != nil {
		return obj{"type": "object"}
	}
	delete(o, "$schema")
	delete(o, "$id")
	return o
}

// executionsServiceAndID is the executions service and the UUID path parameter id.
func (s *server) executionsServiceAndID(r *http.Request) (*executions.Service, string, error) {
	svc, err := s.executionsService()
	if err != nil {
		return nil, "", err
	}
	id, err := uuidParam(r, "id")
	return svc, id, err
}

func (s *server) executionsService() (*executions.Service, error) {
	if s.executions == nil {
		return nil, meridian.Errorf(meridian.EUnavailable, "Execution records are not configured on this server")
	}
	return s.executions, nil
}

// queryTs parses an epoch-ms query parameter, reporting whether it was given.
func queryTs(r *http.Request, name string) (int64, bool, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, invalid("%s %s is not valid, it should be in milliseconds since epoch", name, v)
	}
	return n, true, nil
}

func (s *server) listExecutions(sr executions.Series) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		svc, err := s.executionsService()
		if err != nil {
			return err
		}
		q := r.URL.Query()
		lq := executions.ListQuery{ParentID: strings.TrimSpace(q.Get(sr.IDField)), After: q.Get("after")}
		if lq.Start, lq.HasStart, err = queryTs(r, "startTs"); err != nil {
			return err
		}
		if lq.End, lq.HasEnd, err = queryTs(r, "endTs"); err != nil {
			return err
		}
		if q.Get("limit") != "" {
			if lq.Limit, err = queryLimit(q); err != nil {
				return err
			}
			if lq.Limit == 0 {
				lq.Limit = executions.DefaultLimit
			}
		}
		if lq.Include, err = queryInclude(q); err != nil {
			return err
		}
		page, err := svc.List(r.Context(), principal(r), sr, lq)
		return respond(w, http.StatusOK, map[string]any{"data": page.Data, "paging": paging{After: page.After, Total: page.Total}}, err)
	}
}

func (s *server) createExecution(sr executions.Series) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		svc, err := s.executionsService()
		if err != nil {
			return err
		}
		body, err := readObject(r)
		if err != nil {
			return err
		}
		rec, err := svc.Create(r.Context(), principal(r), sr, body)
		if err != nil {
			return err
		}
		w.Header().Set("Location", apiPrefix+"/v1/"+sr.Name+"s/"+rec.ID())
		writeJSON(w, http.StatusCreated, rec)
		return nil
	}
}

func (s *server) getExecution(sr executions.Series) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		svc, id, err := s.executionsServiceAndID(r)
		if err != nil {
			return err
		}
		inc, err := queryInclude(r.URL.Query())
		if err != nil {
			return err
		}
		rec, err := svc.Get(r.Context(), principal(r), sr, id, inc)
		return respond(w, http.StatusOK, rec, err)
	}
}

func (s *server) deleteExecution(sr executions.Series) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		svc, id, err := s.executionsServiceAndID(r)
		if err != nil {
			return err
		}
		hard, err := queryBool(r.URL.Query(), "hardDelete")
		if err != nil {
			return err
		}
		rec, err := svc.Delete(r.Context(), principal(r), sr, id, hard)
		if err != nil {
			return err
		}
		if hard {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		writeJSON(w, http.StatusOK, rec)
		return nil
	}
}

func (s *server) deleteExecutionAt(sr executions.Series) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		svc, err := s.executionsService()
		if err != nil {
			return err
		}
		parent, err := uuidParam(r, sr.IDField)
		if err != nil {
			return err
		}
		raw, err := pathParam(r, "timestamp")
		if err != nil {
			return err
		}
		ts, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || ts < 0 {
			return invalid("Timestamp %s is not valid, it should be in milliseconds since epoch", raw)
		}
		if err := svc.DeleteAt(r.Context(), principal(r), sr, parent, ts); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
