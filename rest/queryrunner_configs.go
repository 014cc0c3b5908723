package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/store"
)

// Query Runner's config and saved-query routes: admin configs (workspace admins),
// the caller's user configs, team configs (the team's owner or an admin), connection
// tests, introspection, OAuth refresh and saved queries, all under
// /api/v1/queryRunner. The rules live in package queryrunner; these handlers parse,
// call it and shape the answer.

const qrPrefix = apiPrefix + "/v1/queryRunner"

// qrTag is the OpenAPI tag of the Query Runner config routes.
const qrTag = "queryRunner"

// Schemas of the answers, inline: the configs are not catalog kinds.
var (
	qrAuthConfig = obj{"type": "object", "description": "Credentials shaped by authType: Basic (username, password) or OAuth " +
		"(the admin's clientId, clientSecret, tokenUrl, scopes; anyone's refreshToken, accessToken). role, database, schema, " +
		"warehouse and dataset name what to use. Secrets are answered masked as *********; a masked value sent back keeps the stored one.",
		"properties": obj{
			"authType":     obj{"type": "string", "enum": []any{queryrunner.AuthBasic, queryrunner.AuthOAuth}},
			"username":     obj{"type": "string", "maxLength": 256},
			"password":     obj{"type": "string", "format": "password", "maxLength": 8192},
			"role":         obj{"type": "string"},
			"database":     obj{"type": "string"},
			"schema":       obj{"type": "string"},
			"warehouse":    obj{"type": "string"},
			"dataset":      obj{"type": "string"},
			"clientId":     obj{"type": "string"},
			"clientSecret": obj{"type": "string", "format": "password"},
			"tokenUrl":     obj{"type": "string", "format": "uri"},
			"scopes":       obj{"type": "array", "items": obj{"type": "string"}},
			"refreshToken": obj{"type": "string", "format": "password"},
			"accessToken":  obj{"type": "string", "format": "password"},
		}}
	qrAdminConfig = obj{"type": "object", "description": "A database service's Query Runner admin config.",
		"properties": obj{
			"id":            obj{"type": "string", "format": "uuid", "readOnly": true},
			"serviceName":   obj{"type": "string", "description": "An existing database service."},
			"serviceType":   obj{"type": "string", "description": "The engine: Postgres, Redshift, Mysql, … (GET configs/test lists them)."},
			"authConfig":    qrAuthConfig,
			"querySettings": obj{"type": "object", "properties": obj{"maxResultSize": obj{"type": "integer", "minimum": 1, "maximum": queryrunner.MaxMaxResultSize, "default": queryrunner.DefaultMaxResultSize}}},
			"enabled":       obj{"type": "boolean", "default": false},
			"userConfigurableFields": obj{"type": "array", "uniqueItems": true,
				"items": obj{"type": "string", "enum": []any{"role", "database", "schema", "warehouse", "dataset"}}},
			"allowAdminCredentials": obj{"type": "boolean", "default": false,
				"description": "Let users without a user or team config run queries with the admin's credentials."},
			"hostPort":          obj{"type": "string", "description": "host[:port]; defaults to the service's connection.config.hostPort."},
			"connectionOptions": obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "Engine options such as sslmode; never secrets."},
		}, "required": []any{"serviceName", "serviceType", "authConfig"}}
	qrStatus = obj{"type": "object", "properties": obj{
		"status":     obj{"type": "string", "enum": []any{queryrunner.StatusUntested, queryrunner.StatusTesting, queryrunner.StatusSuccessful, queryrunner.StatusFailed, queryrunner.StatusRevalidationRequired}},
		"message":    obj{"type": "string"},
		"updatedAt":  obj{"type": "integer"},
		"workflowId": obj{"type": "string"},
	}}
	qrCredConfig = obj{"type": "object", "description": "A user's or a team's config of a service.",
		"properties": obj{
			"id":               obj{"type": "string", "format": "uuid", "readOnly": true},
			"serviceName":      obj{"type": "string"},
			"userId":           obj{"type": "string", "format": "uuid", "readOnly": true},
			"teamId":           obj{"type": "string", "format": "uuid"},
			"userAuthConfig":   qrAuthConfig,
			"connectionStatus": qrStatus,
		}}
	qrServiceEntry = obj{"type": "object", "properties": obj{
		"serviceName": obj{"type": "string"}, "serviceType": obj{"type": "string"}, "authType": obj{"type": "string"},
		"userConfigurableFields": obj{"type": "array", "items": obj{"type": "string"}}, "allowAdminCredentials": obj{"type": "boolean"},
		"status": obj{"type": "string"}, "userConfig": obj{"anyOf": []any{qrCredConfig, obj{"type": "null"}}},
	}}
	qrNames      = obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": obj{"type": "string"}}}}
	qrSavedQuery = obj{"type": "object", "properties": obj{
		"id": obj{"type": "string", "format": "uuid", "readOnly": true}, "name": obj{"type": "string", "maxLength": 256},
		"serviceName": obj{"type": "string"}, "queryText": obj{"type": "string", "maxLength": queryrunner.MaxQueryText},
		"owner": obj{"type": "object"}, "createdAt": obj{"type": "integer"}, "updatedAt": obj{"type": "integer"},
	}}
	qrWorkflow = obj{"type": "object", "properties": obj{
		"workflowId": obj{"type": "string", "format": "uuid"}, "jobId": obj{"type": "string", "format": "uuid"},
		"status": obj{"type": "string"}, "serviceName": obj{"type": "string"}, "configId": obj{"type": "string"},
	}}
)

func qrServiceParam(required bool) obj {
	p := queryParam("service", "The database service's name.", obj{"type": "string", "minLength": 1, "maxLength": 256})
	if required {
		p["required"] = true
	}
	return p
}

func qrTeamParam(required bool) obj {
	p := queryParam("team", "The team's id.", obj{"type": "string", "format": "uuid"})
	if required {
		p["required"] = true
	}
	return p
}

// queryRunnerConfigRoutes are the /v1/queryRunner routes.
func (s *server) queryRunnerConfigRoutes() []route {
	admin := "Workspace admins only."
	svcReq := []any{qrServiceParam(true)}
	svcTeam := []any{qrServiceParam(true), qrTeamParam(true)}
	credBody := jsonBody("The config: serviceName and userAuthConfig (teamId too for a team config).", qrCredConfig, true)
	rt := func(method, path, id, summary, description string, h handler, params []any, body obj, ok obj, errs ...int) route {
		var listed []int
		for _, code := range errs {
			if code == http.StatusServiceUnavailable {
				// Not among the shared error responses: described here.
				ok["503"] = resp("The database or the token endpoint cannot be reached, or workflows are not available.", schemaRef("Error"))
				continue
			}
			listed = append(listed, code)
		}
		errs = listed
		return route{method: method, path: qrPrefix + path, handler: s.h(s.qrOnly(h)), id: id, tag: qrTag, summary: summary,
			description: description, params: params, body: body, responses: responses(ok, errs...)}
	}
	return []route{
		rt(http.MethodGet, "/configs/test", "testQueryRunnerConfigAPI", "Check the config API",
			admin+" Answers the storage's health and the engine types this server runs.", s.qrConfigTest, nil, nil,
			obj{"200": resp("Healthy.", obj{"type": "object"})}, 403, 404),
		rt(http.MethodGet, "/configs/defaults", "getQueryRunnerDefaults", "Get the platform default row cap",
			admin+" The QuerySettings applied when a service sets no maxResultSize.", s.qrConfigDefaults, nil, nil,
			obj{"200": resp("The default QuerySettings.", obj{"type": "object", "properties": obj{"maxResultSize": obj{"type": "integer"}}})}, 403, 404),
		rt(http.MethodGet, "/configs", "listQueryRunnerConfigs", "List database services with their Query Runner config status",
			admin+" With ?service= the one service's admin config (secrets masked); otherwise a page of database services, each with configured, enabled and its config or null.",
			s.qrListConfigs, []any{qrServiceParam(false), paramRef("limit"), paramRef("before"), paramRef("after")}, nil,
			obj{"200": resp("A page of services, or one config.", obj{"anyOf": []any{qrAdminConfig, obj{"type": "object", "properties": obj{"data": obj{"type": "array"}, "paging": obj{"type": "object"}}}}})}, 400, 403, 404),
		rt(http.MethodPost, "/configs", "createQueryRunnerConfig", "Create a service's admin config",
			admin+" One config per database service; a second answers 409 (PUT updates).", s.qrCreateConfig, nil,
			jsonBody("The admin config.", qrAdminConfig, true), obj{"201": resp("The created config, secrets masked.", qrAdminConfig)}, 400, 403, 404, 409),
		rt(http.MethodPut, "/configs", "putQueryRunnerConfig", "Create or update a service's admin config",
			admin+" Members left out keep their values; masked secrets keep the stored ones. Changing the credentials marks every user and team config of the service RevalidationRequired.",
			s.qrPutConfig, svcReq, jsonBody("The admin config.", qrAdminConfig, true),
			obj{"200": resp("The updated config.", qrAdminConfig), "201": resp("The created config.", qrAdminConfig)}, 400, 403, 404),
		rt(http.MethodDelete, "/configs", "deleteQueryRunnerConfig", "Delete a service's admin config",
			admin+" Deletes, in one transaction, every user config, team config and stored secret of the service.",
			s.qrDeleteConfig, svcReq, nil, obj{"200": resp("What was deleted.", obj{"type": "object"})}, 400, 403, 404),

		rt(http.MethodGet, "/user-configs", "getQueryRunnerUserConfigs", "Get the caller's user configs",
			"?userConfigId= one of the caller's configs (another user's is 404); ?service= the caller's entry for a service; no parameter: every service with an enabled admin config the caller may view, each with the caller's config or null.",
			s.qrGetUserConfigs, []any{queryParam("userConfigId", "A config id.", obj{"type": "string", "format": "uuid"}), qrServiceParam(false)}, nil,
			obj{"200": resp("A config, an entry, or {data: entries}.", obj{"anyOf": []any{qrCredConfig, qrServiceEntry, obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": qrServiceEntry}}}}})}, 400, 403, 404),
		rt(http.MethodPost, "/user-configs", "createQueryRunnerUserConfig", "Create or update the caller's config of a service",
			"The service's admin config must be enabled; userAuthConfig has its auth type and only the fields the admin made user-configurable.",
			s.qrPostUserConfig, nil, credBody, obj{"200": resp("The updated config.", qrCredConfig), "201": resp("The created config.", qrCredConfig)}, 400, 403, 404),
		rt(http.MethodPut, "/user-configs", "updateQueryRunnerUserConfig", "Update the caller's config of a service",
			"Masked secrets are restored before validation.", s.qrPutUserConfig, svcReq, credBody,
			obj{"200": resp("The updated config.", qrCredConfig)}, 400, 403, 404),
		rt(http.MethodDelete, "/user-configs", "deleteQueryRunnerUserConfig", "Delete the caller's config of a service",
			"", s.qrDeleteUserConfig, svcReq, nil, obj{"200": resp("Deleted.", obj{"type": "object"})}, 400, 403, 404),
		rt(http.MethodPost, "/user-configs/refresh-token", "refreshQueryRunnerUserToken", "Refresh the OAuth token of the caller's config",
			"Asks the admin's OAuth token endpoint for a new access token with the config's refresh token. A Basic config answers 400 saying why.",
			s.qrRefreshToken, svcReq, nil, obj{"200": resp("The config with its new token (masked) and tokenExpiresAt.", qrCredConfig)}, 400, 403, 404, 503),
		rt(http.MethodPost, "/user-configs/test-connection", "testQueryRunnerUserConnection", "Test the caller's stored credentials",
			"Starts a workflow (a durable job, GET /v1/jobs/{id}) that runs SELECT 1 with the caller's stored credentials and records its outcome as the config's connectionStatus. ?service= or body {serviceName}.",
			s.qrTestConnection(false), []any{qrServiceParam(false)}, nil, obj{"202": resp("The workflow started.", qrWorkflow)}, 400, 403, 404, 409, 429, 503),
		rt(http.MethodPost, "/user-configs/update-connection-status", "updateQueryRunnerUserConnectionStatus", "Record a test-connection workflow's result",
			"Body {workflowId}: the status recorded is the workflow's own outcome (Successful or Failed), never the caller's claim. A running workflow is 409.",
			s.qrUpdateStatus(false), svcReq, jsonBody("{workflowId}", obj{"type": "object", "properties": obj{"workflowId": obj{"type": "string"}}, "required": []any{"workflowId"}}, true),
			obj{"200": resp("The config with its status.", qrCredConfig)}, 400, 403, 404, 409),
		rt(http.MethodGet, "/user-configs/accessible-roles", "getQueryRunnerAccessibleRoles", "List the roles the caller's credentials can use",
			"Only for engine types with roles (Redshift); 400 otherwise. Runs on the database with the credentials a query of the caller would use.",
			s.qrIntrospect("roles"), svcReq, nil, obj{"200": resp("The roles.", qrNames)}, 400, 403, 404, 503),
		rt(http.MethodGet, "/user-configs/accessible-databases", "getQueryRunnerAccessibleDatabases", "List the databases the caller's credentials reach",
			"", s.qrIntrospect("databases"), svcReq, nil, obj{"200": resp("The databases.", qrNames)}, 400, 403, 404, 503),
		rt(http.MethodGet, "/user-configs/accessible-schemas", "getQueryRunnerAccessibleSchemas", "List the schemas of a database the caller's credentials reach",
			"?database= (default: the connection's database).", s.qrIntrospect("schemas"),
			[]any{qrServiceParam(true), queryParam("database", "The database.", obj{"type": "string", "maxLength": 256})}, nil,
			obj{"200": resp("The schemas.", qrNames)}, 400, 403, 404, 503),

		rt(http.MethodGet, "/team-configs", "getQueryRunnerTeamConfigs", "Look up team configs",
			"teamConfigId: one config; service and team: one config; service alone: the service's team configs; team alone: the team's configs. Shown to the team's owners and admins; lists leave out the other teams.",
			s.qrGetTeamConfigs, []any{queryParam("teamConfigId", "A team config id.", obj{"type": "string", "format": "uuid"}), qrServiceParam(false), qrTeamParam(false)}, nil,
			obj{"200": resp("A config, or {data: configs}.", obj{"anyOf": []any{qrCredConfig, obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": qrCredConfig}}}}})}, 400, 403, 404),
		rt(http.MethodPost, "/team-configs", "createQueryRunnerTeamConfig", "Create or update a team's config of a service",
			"Body serviceName and teamId (both required) and userAuthConfig. The team's owner or an admin.",
			s.qrPostTeamConfig, nil, credBody, obj{"200": resp("The updated config.", qrCredConfig), "201": resp("The created config.", qrCredConfig)}, 400, 403, 404),
		rt(http.MethodPut, "/team-configs", "updateQueryRunnerTeamConfig", "Update a team's config of a service",
			"Masked secrets are restored before validation. The team's owner or an admin.", s.qrPutTeamConfig, svcTeam, credBody,
			obj{"200": resp("The updated config.", qrCredConfig)}, 400, 403, 404),
		rt(http.MethodDelete, "/team-configs", "deleteQueryRunnerTeamConfig", "Delete a team's config of a service",
			"The team's owner or an admin.", s.qrDeleteTeamConfig, svcTeam, nil, obj{"200": resp("Deleted.", obj{"type": "object"})}, 400, 403, 404),
		rt(http.MethodPost, "/team-configs/test-connection", "testQueryRunnerTeamConnection", "Test a team's stored credentials",
			"As user-configs/test-connection, for the team's config (?service=&team= or body serviceName, teamId). The team's owner or an admin.",
			s.qrTestConnection(true), []any{qrServiceParam(false), qrTeamParam(false)}, nil, obj{"202": resp("The workflow started.", qrWorkflow)}, 400, 403, 404, 409, 429, 503),
		rt(http.MethodPost, "/team-configs/update-connection-status", "updateQueryRunnerTeamConnectionStatus", "Record a team test-connection workflow's result",
			"As user-configs/update-connection-status, for the team's config.", s.qrUpdateStatus(true), svcTeam,
			jsonBody("{workflowId}", obj{"type": "object", "properties": obj{"workflowId": obj{"type": "string"}}, "required": []any{"workflowId"}}, true),
			obj{"200": resp("The config with its status.", qrCredConfig)}, 400, 403, 404, 409),

		rt(http.MethodPost, "/savedQueries", "createQueryRunnerSavedQuery", "Save a query",
			"Body serviceName, name and queryText (all required); the caller owns it.", s.qrCreateSaved, nil,
			jsonBody("The saved query.", qrSavedQuery, true), obj{"201": resp("The saved query.", qrSavedQuery)}, 400, 403, 404),
		rt(http.MethodGet, "/savedQueries", "listQueryRunnerSavedQueries", "List the caller's saved queries",
			"Oldest first; ?service= keeps one service's; ?limit= (default 50, at most 100) and ?after= page them.", s.qrListSaved,
			[]any{qrServiceParam(false), queryParam("limit", "Page size.", obj{"type": "integer", "minimum": 1, "maximum": queryrunner.MaxSavedLimit, "default": queryrunner.DefaultSavedLimit}), paramRef("after")}, nil,
			obj{"200": resp("A page of saved queries.", obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": qrSavedQuery}, "paging": obj{"type": "object"}}})}, 400, 403),
		rt(http.MethodGet, "/savedQueries/{id}", "getQueryRunnerSavedQuery", "Get a saved query",
			"Owner only: another user's saved query answers 404, as one that does not exist.", s.qrGetSaved,
			[]any{pathParamSpec("id", "The saved query's id.", schemaRef("uuid"))}, nil, obj{"200": resp("The saved query.", qrSavedQuery)}, 400, 403, 404),
		rt(http.MethodPut, "/savedQueries/{id}", "updateQueryRunnerSavedQuery", "Update a saved query's name and/or queryText",
			"Owner only (others: 404).", s.qrUpdateSaved, []any{pathParamSpec("id", "The saved query's id.", schemaRef("uuid"))},
			jsonBody("name and/or queryText.", qrSavedQuery, true), obj{"200": resp("The saved query.", qrSavedQuery)}, 400, 403, 404),
		rt(http.MethodDelete, "/savedQueries/{id}", "deleteQueryRunnerSavedQuery", "Delete a saved query",
			"Owner only (others: 404).", s.qrDeleteSaved, []any{pathParamSpec("id", "The saved query's id.", schemaRef("uuid"))}, nil,
			obj{"200": resp("Deleted.", obj{"type": "object"})}, 400, 403, 404),
		rt(http.MethodPost, "/savedQueries/{id}/execute", "executeQueryRunnerSavedQuery", "Check a saved query and get its execution metadata",
			"Owner only (others: 404; release 2.0.2 does not check). Checks that the query is one read-only statement (400 naming why not) and answers its SQL text and the trigger call that runs it; nothing runs.",
			s.qrExecuteSaved, []any{pathParamSpec("id", "The saved query's id.", schemaRef("uuid"))}, nil,
			obj{"200": resp("The execution metadata.", obj{"type": "object"})}, 400, 403, 404),
	}
}

// qrOnly answers 404 when the server has no Query Runner service.
func (s *server) qrOnly(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.qr == nil {
			return meridian.Errorf(meridian.ENotFound, "Query Runner is not enabled on this server")
		}
		return h(w, r)
	}
}

// qrQuery reads a query parameter, bounded.
func qrQuery(r *http.Request, name string) (string, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if len(v) > 1024 {
		return "", invalid("[query param %s is too long]", name)
	}
	return v, nil
}

// qrRequired reads a required query parameter.
func qrRequired(r *http.Request, name string) (string, error) {
	v, err := qrQuery(r, name)
	if err == nil && v == "" {
		err = invalid("[query param %s is required]", name)
	}
	return v, err
}

// qrTeam reads ?team= (or ?teamId=).
func qrTeam(r *http.Request, required bool) (string, error) {
	v, err := qrQuery(r, "team")
	if err == nil && v == "" {
		v, err = qrQuery(r, "teamId")
	}
	if err == nil && v == "" && required {
		err = invalid("[query param team is required]")
	}
	return v, err
}

// qrServiceBody reads the required ?service= and then the JSON object body.
func qrServiceBody(r *http.Request) (string, meridian.Entity, error) {
	service, err := qrRequired(r, "service")
	if err != nil {
		return "", nil, err
	}
	body, err := readObject(r)
	return service, body, err
}

// qrServiceTeam reads the required ?service= and then ?team= (required when
// teamRequired).
func qrServiceTeam(r *http.Request, teamRequired bool) (string, string, error) {
	service, err := qrRequired(r, "service")
	if err != nil {
		return "", "", err
	}
	team, err := qrTeam(r, teamRequired)
	return service, team, err
}

func (s *server) qrConfigTest(w http.ResponseWriter, r *http.Request) error {
	v, err := s.qr.TestConfigAPI(r.Context(), principal(r))
	return respond(w, http.StatusOK, v, err)
}

func (s *server) qrConfigDefaults(w http.ResponseWriter, r *http.Request) error {
	v, err := s.qr.Defaults(principal(r))
	return respond(w, http.StatusOK, v, err)
}

func (s *server) qrListConfigs(w http.ResponseWriter, r *http.Request) error {
	service, err := qrQuery(r, "service")
	if err != nil {
		return err
	}
	if service != "" {
		v, err := s.qr.AdminConfig(r.Context(), principal(r), service)
		return respond(w, http.StatusOK, v, err)
	}
	q := r.URL.Query()
	limit, err := queryLimit(q)
	if err != nil {
		return err
	}
	page, err := s.qr.AdminConfigs(r.Context(), principal(r), store.ListOptions{Limit: limit, Before: q.Get("before"), After: q.Get("after")})
	return respond(w, http.StatusOK, map[string]any{"data": page.Data, "paging": paging{Before: page.Before, After: page.After, Total: page.Total}}, err)
}

func (s *server) qrCreateConfig(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	v, err := s.qr.CreateAdminConfig(r.Context(), principal(r), body)
	return respond(w, http.StatusCreated, v, err)
}

func (s *server) qrPutConfig(w http.ResponseWriter, r *http.Request) error {
	service, body, err := qrServiceBody(r)
	if err != nil {
		return err
	}
	v, created, err := s.qr.PutAdminConfig(r.Context(), principal(r), service, body)
	return respond(w, createdStatus(created), v, err)
}

func createdStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

func (s *server) qrDeleteConfig(w http.ResponseWriter, r *http.Request) error {
	service, err := qrRequired(r, "service")
	if err != nil {
		return err
	}
	res, err := s.qr.DeleteAdminConfig(r.Context(), principal(r), service)
	return respond(w, http.StatusOK, res, err)
}

func (s *server) qrGetUserConfigs(w http.ResponseWriter, r *http.Request) error {
	id, err := qrQuery(r, "userConfigId")
	if err != nil {
		return err
	}
	service, err := qrQuery(r, "service")
	if err != nil {
		return err
	}
	p := principal(r)
	switch {
	case id != "":
		v, err := s.qr.UserConfigByID(r.Context(), p, id)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, v)
	case service != "":
		v, err := s.qr.UserServiceConfig(r.Context(), p, service)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, v)
	default:
		list, err := s.qr.UserServices(r.Context(), p)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": list, "paging": paging{Total: len(list)}})
	}
	return nil
}

func (s *server) qrPostUserConfig(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	v, created, err := s.qr.PutUserConfig(r.Context(), principal(r), "", body, true)
	return respond(w, createdStatus(created), v, err)
}

func (s *server) qrPutUserConfig(w http.ResponseWriter, r *http.Request) error {
	service, body, err := qrServiceBody(r)
	if err != nil {
		return err
	}
	v, _, err := s.qr.PutUserConfig(r.Context(), principal(r), service, body, false)
	return respond(w, http.StatusOK, v, err)
}

func (s *server) qrDeleteUserConfig(w http.ResponseWriter, r *http.Request) error {
	service, err := qrRequired(r, "service")
	if err != nil {
		return err
	}
	if err := s.qr.DeleteUserConfig(r.Context(), principal(r), service); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"serviceName": service, "deleted": true})
	return nil
}

func (s *server) qrRefreshToken(w http.ResponseWriter, r *http.Request) error {
	service, err := qrRequired(r, "service")
	if err != nil {
		return err
	}
	v, err := s.qr.RefreshToken(r.Context(), principal(r), service, "")
	return respond(w, http.StatusOK, v, err)
}

// qrServiceAndTeam reads service (and team) from the query, else from an optional
// JSON body {serviceName, teamId}.
func qrServiceAndTeam(r *http.Request, team bool) (string, string, error) {
	service, err := qrQuery(r, "service")
	if err != nil {
		return "", "", err
	}
	var teamID string
	if team {
		if teamID, err = qrTeam(r, false); err != nil {
			return "", "", err
		}
	}
	if (service == "" || (team && teamID == "")) && r.ContentLength != 0 {
		body, err := readObject(r)
		if err != nil {
			return "", "", err
		}
		if service == "" {
			service, _ = body["serviceName"].(string)
		}
		if team && teamID == "" {
			teamID, _ = body["teamId"].(string)
		}
	}
	if strings.TrimSpace(service) == "" {
		return "", "", invalid("[query param service is required] (or body serviceName)")
	}
	if team && strings.TrimSpace(teamID) == "" {
		return "", "", invalid("[query param team is required] (or body teamId)")
	}
	return service, teamID, nil
}

func (s *server) qrTestConnection(team bool) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		service, teamID, err := qrServiceAndTeam(r, team)
		if err != nil {
			return err
		}
		v, err := s.qr.TestConnection(r.Context(), principal(r), service, teamID)
		return respond(w, http.StatusAccepted, v, err)
	}
}

func (s *server) qrUpdateStatus(team bool) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		service, teamID, err := qrServiceTeam(r, team)
		if err != nil {
			return err
		}
		body, err := readObject(r)
		if err != nil {
			return err
		}
		wf, _ := body["workflowId"].(string)
		if wf == "" {
			wf, _ = body["jobId"].(string)
		}
		v, err := s.qr.UpdateConnectionStatus(r.Context(), principal(r), service, teamID, wf)
		return respond(w, http.StatusOK, v, err)
	}
}

func (s *server) qrIntrospect(what string) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		service, err := qrRequired(r, "service")
		if err != nil {
			return err
		}
		p := principal(r)
		var names []string
		switch what {
		case "roles":
			names, err = s.qr.AccessibleRoles(r.Context(), p, service)
		case "databases":
			names, err = s.qr.AccessibleDatabases(r.Context(), p, service)
		default:
			db, derr := qrQuery(r, "database")
			if derr != nil {
				return derr
			}
			names, err = s.qr.AccessibleSchemas(r.Context(), p, service, db)
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": names, "paging": paging{Total: len(names)}})
		return nil
	}
}

func (s *server) qrGetTeamConfigs(w http.ResponseWriter, r *http.Request) error {
	var q queryrunner.TeamConfigQuery
	var err error
	if q.TeamConfigID, err = qrQuery(r, "teamConfigId"); err != nil {
		return err
	}
	if q.Service, err = qrQuery(r, "service"); err != nil {
		return err
	}
	if q.Team, err = qrTeam(r, false); err != nil {
		return err
	}
	one, list, err := s.qr.TeamConfigs(r.Context(), principal(r), q)
	if err != nil {
		return err
	}
	if one != nil {
		writeJSON(w, http.StatusOK, one)
		return nil
	}
	if list == nil {
		list = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list, "paging": paging{Total: len(list)}})
	return nil
}

func (s *server) qrPostTeamConfig(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	v, created, err := s.qr.PutTeamConfig(r.Context(), principal(r), "", "", body, true)
	return respond(w, createdStatus(created), v, err)
}

func (s *server) qrPutTeamConfig(w http.ResponseWriter, r *http.Request) error {
	service, team, err := qrServiceTeam(r, true)
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	v, _, err := s.qr.PutTeamConfig(r.Context(), principal(r), service, team, body, false)
	return respond(w, http.StatusOK, v, err)
}

func (s *server) qrDeleteTeamConfig(w http.ResponseWriter, r *http.Request) error {
	service, team, err := qrServiceTeam(r, true)
	if err != nil {
		return err
	}
	if err := s.qr.DeleteTeamConfig(r.Context(), principal(r), service, team); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"serviceName": service, "teamId": team, "deleted": true})
	return nil
}

func (s *server) qrCreateSaved(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	q, err := s.qr.CreateSavedQuery(r.Context(), principal(r), body)
	return respond(w, http.StatusCreated, q, err)
}

func (s *server) qrListSaved(w http.ResponseWriter, r *http.Request) error {
	service, err := qrQuery(r, "service")
	if err != nil {
		return err
	}
	limit := 0
	if v, err := qrQuery(r, "limit"); err != nil {
		return err
	} else if v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil {
			return invalid("[query param limit must be an integer]")
		}
		if n == 0 {
			n = -1 // refused as out of range, not taken as the default
		}
		limit = n
	}
	after, err := qrQuery(r, "after")
	if err != nil {
		return err
	}
	page, err := s.qr.SavedQueries(r.Context(), principal(r), service, limit, after)
	return respond(w, http.StatusOK, map[string]any{"data": page.Data, "paging": paging{After: page.After, Total: page.Total}}, err)
}

func (s *server) qrGetSaved(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "id")
	if err != nil {
		return err
	}
	q, err := s.qr.SavedQuery(r.Context(), principal(r), id)
	return respond(w, http.StatusOK, q, err)
}

func (s *server) qrUpdateSaved(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "id")
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	q, err := s.qr.UpdateSavedQuery(r.Context(), principal(r), id, body)
	return respond(w, http.StatusOK, q, err)
}

func (s *server) qrDeleteSaved(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "id")
	if err != nil {
		return err
	}
	if err := s.qr.DeleteSavedQuery(r.Context(), principal(r), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
	return nil
}

func (s *server) qrExecuteSaved(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "id")
	if err != nil {
		return err
	}
	x, err := s.qr.ExecuteSavedQuery(r.Context(), principal(r), id)
	return respond(w, http.StatusOK, x, err)
}
