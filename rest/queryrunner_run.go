package rest

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/workflow"
)

// Query Runner's execution routes under /api/v1/platform/apps/queryRunner: trigger a
// read-only query as a durable workflow, stop it, page its stored results, check the
// result storage. The rules live in package queryrunner/workflow; these handlers
// parse, call it and shape the answer.

const qrRunPrefix = apiPrefix + "/v1/platform/apps/queryRunner"

// qrRunTag is the OpenAPI tag of the execution routes.
const qrRunTag = "queryRunnerExecution"

var (
	qrTriggerBody = obj{"type": "object", "required": []any{"query", "serviceName"}, "properties": obj{
		"query":        obj{"type": "string", "minLength": 1, "maxLength": workflow.MaxQueryBytes, "description": "One read-only statement (SELECT, WITH without data-modifying parts, EXPLAIN, SHOW) in the service's dialect."},
		"serviceName":  obj{"type": "string", "minLength": 1, "maxLength": workflow.MaxNameLength},
		"workflowName": obj{"type": "string", "maxLength": workflow.MaxNameLength, "description": "The name stop refers to; generated when absent."},
		"transpile": obj{"description": "false, null or absent: run as written. true, the service's dialect by name, or {from, to} naming it: accepted without translation. " +
			"A translation from another dialect is refused with 400: Meridian does not transpile SQL."},
	}}
	qrTriggered = obj{"type": "object", "properties": obj{
		"workflowId": obj{"type": "string", "format": "uuid"}, "workflowName": obj{"type": "string"},
		"status": obj{"type": "string"}, "serviceName": obj{"type": "string"}, "userId": obj{"type": "string"},
		"configId": obj{"type": "string"}, "credentialLayer": obj{"type": "string", "enum": []any{"team", "user", "admin"}},
		"connectionType": obj{"type": "string"}, "authType": obj{"type": "string"}, "maxResultSize": obj{"type": "integer"},
		"statementKind": obj{"type": "string", "enum": []any{"SELECT", "WITH", "EXPLAIN", "SHOW"}},
	}}
	qrResultsPage = obj{"type": "object", "properties": obj{
		"workflowId": obj{"type": "string", "format": "uuid"}, "workflowName": obj{"type": "string"},
		"serviceName": obj{"type": "string"}, "connectionType": obj{"type": "string"},
		"status":  obj{"type": "string", "enum": []any{workflow.StatusRunning, workflow.StatusSuccess, workflow.StatusFailed}},
		"columns": obj{"type": "array", "items": obj{"type": "object", "properties": obj{"name": obj{"type": "string"}, "type": obj{"type": "string"}}}},
		"rows":    obj{"type": "array", "items": obj{"type": "array", "items": obj{}}},
		"total":   obj{"type": "integer"}, "page": obj{"type": "integer"}, "size": obj{"type": "integer"},
		"truncated":     obj{"type": "boolean", "description": "The row cap (maxResultSize) or the storage budget stopped the run."},
		"maxResultSize": obj{"type": "integer"},
		"error":         obj{"oneOf": []any{obj{"type": "null"}, obj{"type": "object", "properties": obj{"code": obj{"type": "string"}, "message": obj{"type": "string"}}}}},
		"createdAt":     obj{"type": "integer"}, "finishedAt": obj{"type": "integer"},
	}}
)

// queryRunnerRunRoutes are the /v1/platform/apps/queryRunner routes.
func (s *server) queryRunnerRunRoutes() []route {
	id := pathParamSpec("workflowId", "The workflow's id (trigger's workflowId).", obj{"type": "string", "format": "uuid"})
	rt := func(method, path, opID, summary, description string, h handler, params []any, body obj, ok obj, errs ...int) route {
		return route{method: method, path: qrRunPrefix + path, handler: s.h(s.qrRunOnly(h)), id: opID, tag: qrRunTag,
			summary: summary, description: description, params: params, body: body, responses: responses(ok, errs...)}
	}
	unavailable := func(o obj) obj {
		o["503"] = resp("Query Runner's credentials or result storage are not available.", schemaRef("Error"))
		return o
	}
	return []route{
		rt(http.MethodPost, "/trigger", "triggerQueryRunner", "Run a read-only query as a workflow",
			"Resolves the caller's credentials (teamId: that team's config, the caller must belong to it; preferTeam: the caller's team config; "+
				"else the caller's user config; else the admin config when the service allows it), classifies the statement with the dialect's SQL parser "+
				"(one read-only statement only; anything else is 400 naming why), and starts a durable workflow that runs it in a READ ONLY transaction "+
				"with a statement timeout and the maxResultSize row cap. Answers at once with the workflow id and the layer the credentials came from, never a secret.",
			s.qrTrigger, []any{
				queryParam("teamId", "Use this team's config (the caller must belong to the team).", obj{"type": "string", "format": "uuid"}),
				queryParam("preferTeam", "Use the caller's team config instead of the user config.", obj{"type": "boolean", "default": false}),
			}, jsonBody("The query to run.", qrTriggerBody, true),
			unavailable(obj{"200": resp("The workflow started.", qrTriggered)}), 400, 403, 404, 429),
		rt(http.MethodPut, "/stop", "stopQueryRunner", "Stop a running workflow",
			"Cancels the caller's running workflows of that name (admins: anyone's) on the database server and marks them FAILED; 404 when none runs.",
			s.qrStop, nil, jsonBody("The workflow to stop.", obj{"type": "object", "required": []any{"workflowName"},
				"properties": obj{"workflowName": obj{"type": "string", "minLength": 1, "maxLength": workflow.MaxNameLength}}}, true),
			obj{"200": resp("The stopped workflows.", obj{"type": "object", "properties": obj{"workflowName": obj{"type": "string"},
				"workflowIds": obj{"type": "array", "items": obj{"type": "string"}}, "status": obj{"type": "string"}}})}, 400, 403, 404),
		rt(http.MethodGet, "/results/{workflowId}", "getQueryRunnerResults", "Get a page of a workflow's results",
			"The workflow's owner and admins only: anyone else gets 404, as for a workflow that does not exist. While the workflow runs, total grows.",
			s.qrResults, []any{id,
				queryParam("page", "The page, from 0.", obj{"type": "integer", "minimum": 0, "default": 0}),
				queryParam("size", "Rows per page.", obj{"type": "integer", "minimum": 1, "maximum": workflow.MaxPageSize, "default": workflow.DefaultPageSize}),
			}, nil, obj{"200": resp("One page of results.", qrResultsPage)}, 400, 403, 404),
		rt(http.MethodPost, "/results/{workflowId}", "postQueryRunnerResults", "Stream results (execution worker only)",
			"Results are written by Meridian's own execution worker inside the server; this endpoint is refused to every client with 403.",
			s.qrPostResults, []any{id}, nil, obj{"200": resp("Never answered.", nil)}, 400, 403, 404),
		rt(http.MethodGet, "/health/storage", "getQueryRunnerStorageHealth", "Check that result storage is reachable",
			"Any authenticated caller.", s.qrStorageHealth, nil, nil,
			unavailable(obj{"200": resp("Storage answers.", obj{"type": "object", "properties": obj{"status": obj{"type": "string"}}})}), 403),
	}
}

// qrRunOnly answers 404 when the server runs no Query Runner workflows.
func (s *server) qrRunOnly(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.qrRuns == nil {
			return meridian.Errorf(meridian.ENotFound, "Query Runner is not enabled on this server")
		}
		return h(w, r)
	}
}

// qrBody reads a JSON object body into v: malformed JSON or a field of the wrong type
// is 400.
func qrBody(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return invalid("Invalid request format: a JSON body is required")
	}
	parsed, err := decodeJSON(b)
	if err != nil {
		return err
	}
	if _, ok := parsed.(map[string]any); !ok {
		return invalid("Invalid request format: the body must be a JSON object")
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid("Invalid request format: %s must be a %s", te.Field, te.Type.String())
		}
		return invalid("Invalid request format: the body could not be read")
	}
	return nil
}

func (s *server) qrTrigger(w http.ResponseWriter, r *http.Request) error {
	var req workflow.TriggerRequest
	if err := qrBody(r, &req); err != nil {
		return err
	}
	q := r.URL.Query()
	req.TeamID = strings.TrimSpace(q.Get("teamId"))
	if v := strings.TrimSpace(q.Get("preferTeam")); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalid("preferTeam must be true or false")
		}
		req.PreferTeam = b
	}
	res, err := s.qrRuns.Trigger(r.Context(), principal(r), req)
	return respond(w, http.StatusOK, res, err)
}

func (s *server) qrStop(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		WorkflowName string `json:"workflowName"`
	}
	if err := qrBody(r, &req); err != nil {
		return err
	}
	res, err := s.qrRuns.Stop(r.Context(), principal(r), req.WorkflowName)
	return respond(w, http.StatusOK, res, err)
}

// qrInt parses an optional non-negative integer query parameter.
func qrInt(r *http.Request, name string) (int64, bool, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, invalid("%s must be a non-negative integer", name)
	}
	return n, true, nil
}

func (s *server) qrResults(w http.ResponseWriter, r *http.Request) error {
	page, _, err := qrInt(r, "page")
	if err != nil {
		return err
	}
	size, set, err := qrInt(r, "size")
	if err != nil {
		return err
	}
	if set && (size < 1 || size > workflow.MaxPageSize) {
		return invalid("size must be between 1 and %d", workflow.MaxPageSize)
	}
	res, err := s.qrRuns.Results(r.Context(), principal(r), chi.URLParam(r, "workflowId"), page, int(size))
	return respond(w, http.StatusOK, res, err)
}

func (s *server) qrPostResults(w http.ResponseWriter, r *http.Request) error {
	return meridian.Errorf(meridian.EForbidden, "Results are written by Meridian's execution worker; clients cannot post them")
}

func (s *server) qrStorageHealth(w http.ResponseWriter, r *http.Request) error {
	if err := s.qrRuns.Health(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	return nil
}
