package rest

import (
	"fmt"
	"net/http"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// route is one row of the route table: New serves each row on the router, and the
// OpenAPI document describes each row that has an operation id. No route is written
// anywhere else.
type route struct {
	// method is the HTTP method; "" serves every method (the Prometheus handler).
	method string
	// path is the router pattern, /api/v1/… for the catalog API.
	path    string
	handler http.Handler

	// The OpenAPI operation. A row without id is left out of the document: only the
	// operational endpoints outside /api (healthz, readyz, metrics) have none.
	id, tag, summary, description string
	params                        []any // parameter objects or references to components
	body                          obj   // the requestBody, nil for none
	responses                     obj
	// public routes need no token: the document gives them an empty security list and
	// authenticate lets them through.
	public bool
	// reads marks a POST that only reads (a SPARQL query): tokens scoped to
	// metadata:read may call it.
	reads bool
}

// familyTags describe the tags of the special families. A tag named after a kind is
// described by the kind's schema instead.
var familyTags = map[string]string{
	"meta":           "The API description itself.",
	"user":           "Users.",
	"security":       "Personal access tokens and bot tokens.",
	"events":         "The change-event outbox (admins only).",
	"jobs":           "Durable asynchronous jobs (async deletes, …).",
	"search":         "Keyword, semantic and hybrid search, answered in Elasticsearch's shape.",
	"lineage":        "Lineage edges between entities.",
	"testCase":       "Test cases.",
	qrRunTag:         "Query Runner execution: read-only queries run as durable workflows, stopped on the database server, with paged stored results.",
	qrTag:            "Query Runner: admin, user and team configs with layered credentials, connection tests, and saved queries.",
	"feed":           "Conversations about entities, and the legacy task threads (description, tag, approval, test case failure resolution).",
	"activity":       "The activity stream of the system's changes, and its retention.",
	"audit":          "The append-only audit log of writes and authentication failures (admins only).",
	"mcpExecution":   "Runtime records of MCP servers, kept as a time series.",
	"agentExecution": "Runtime records of AI agents (AI applications), kept as a time series.",
	"billing":        "AI credit usage: the ledger's reports, budgets, credit alerts and MCP usage (workspace admins; me endpoints for any user).",
	"rdf":            "The knowledge graph: SPARQL, RDF descriptions and the ontology.",
}

// routes is the route table: the operational endpoints, this document, the special
// families, and the standard operation set of every kind.
func (s *server) routes(reg *meridian.Registry) []route {
	rs := []route{
		{method: http.MethodGet, path: "/healthz", handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		})},
		{method: http.MethodGet, path: "/readyz", handler: http.HandlerFunc(s.readyz)},
		{path: "/metrics", handler: s.metrics.handler()},
		{method: http.MethodGet, path: OpenAPIPath, handler: http.HandlerFunc(s.openAPI), id: "getOpenAPI", tag: "meta",
			summary: "Get this OpenAPI document", description: "Public: no token is needed.", public: true,
			responses: obj{"200": resp("The OpenAPI 3.1 document.", obj{"type": "object"})}},
	}
	rs = append(rs, s.systemRoutes()...)
	rs = append(rs, s.userRoutes(reg)...)
	rs = append(rs, s.secretsRoutes()...)
	rs = append(rs, s.eventRoutes()...)
	rs = append(rs, s.subscriptionRoutes()...)
	rs = append(rs, route{method: http.MethodGet, path: apiPrefix + "/v1/jobs/{id}", handler: s.h(s.getJob), id: "getJob",
		tag: "jobs", summary: "Get an asynchronous job",
		description: "Shown to the principal that started the job and to admins; anyone else gets 404, as for a job that does not exist.",
		params:      []any{pathParamSpec("id", "The job's id.", schemaRef("uuid"))},
		responses:   responses(obj{"200": resp("The job.", schemaRef("Job"))}, 400, 403, 404)})
	rs = append(rs, s.searchRoutes()...)
	rs = append(rs, s.lineageRoutes(reg)...)
	rs = append(rs, s.qualityRoutes(reg)...)
	rs = append(rs, s.queryRunnerConfigRoutes()...)
	rs = append(rs, s.queryRunnerRunRoutes()...)
	rs = append(rs, s.taskRoutes(reg)...)
	rs = append(rs, s.feedRoutes()...)
	rs = append(rs, s.collabAuditRoutes()...)
	rs = append(rs, s.billingRoutes()...)
	rs = append(rs, s.graphRoutes()...)
	// A family's row replaces the generic row of a kind at the same method and path (the
	// task list, with its time window).
	taken := map[string]bool{}
	for _, rt := range rs {
		taken[rt.method+" "+rt.path] = true
	}
	for _, k := range reg.Kinds() {
		for _, rt := range s.kindRoutes(k) {
			if !taken[rt.method+" "+rt.path] {
				rs = append(rs, rt)
			}
		}
	}
	return rs
}

// operation is the row's OpenAPI operation object.
func (rt route) operation() obj {
	o := obj{"operationId": rt.id, "summary": rt.summary, "tags": []any{rt.tag}, "responses": rt.responses}
	if rt.description != "" {
		o["description"] = rt.description
	}
	if len(rt.params) > 0 {
		o["parameters"] = rt.params
	}
	if rt.body != nil {
		o["requestBody"] = rt.body
	}
	if rt.public {
		o["security"] = []any{}
	}
	return o
}

// kindRef is the schema of a kind's documents, or any object when the registry does
// not have the kind.
func kindRef(reg *meridian.Registry, name string) obj {
	if k, ok := reg.Kind(name); ok {
		return schemaRef(kindSchemaName(k))
	}
	return obj{"type": "object"}
}

// kindRoutes is the standard operation set of one kind under /api/v1/<collection>.
func (s *server) kindRoutes(k *meridian.Kind) []route {
	one := upperFirst(k.Name)
	many := plural(one)
	p := apiPrefix + "/v1/" + k.Collection
	entity := schemaRef(kindSchemaName(k))
	create := jsonBody("The entity to create.", schemaRef(createSchemaName(k)), true)
	readParams := append(fieldsParam(k), paramRef("include"))
	byIDParams := []any{paramRef("id")}
	byNameParams := []any{paramRef("fqn")}

	listParams := cat([]any{paramRef("limit"), paramRef("before"), paramRef("after")}, readParams)
	for _, f := range k.Filters {
		desc := "Only entities whose " + f.Param + " equals this value."
		if f.Prefix {
			desc = "Only entities below this " + f.Param + " (its fully qualified name)."
		} else if f.Field != "" && f.Field != f.Param {
			desc = "Only entities whose " + f.Field + " holds this value."
		}
		listParams = append(listParams, queryParam(f.Param, desc, obj{"type": "string"}))
	}
	list := obj{"allOf": []any{schemaRef("EntityList"),
		obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": entity}}}}}

	patch := obj{"description": "An RFC 6902 JSON Patch.", "required": true, "content": obj{
		"application/json-patch+json": obj{"schema": schemaRef("JsonPatch")},
		"application/json":            obj{"schema": schemaRef("JsonPatch")},
	}}
	patched := responses(obj{"200": resp("The patched entity.", entity, "Change", "ETag")}, 400, 403, 404, 409, 412, 413, 415)

	delParams := []any{paramRef("hardDelete"), paramRef("recursive")}
	deleted := obj{"200": resp("The deleted entity (soft delete, or hard delete).", entity, "Change")}
	if k.HardDeleteNoContent {
		deleted = obj{
			"200": resp("The soft-deleted entity.", entity, "Change"),
			"204": resp("Hard delete (hardDelete=true): no content.", nil, "Change"),
		}
	}

	follower := obj{"description": "The follower's user id as a JSON string; an empty body means the caller.",
		"required": false, "content": jsonContent(schemaRef("uuid"))}
	followed := responses(obj{"200": resp("The change event of the follower change.", schemaRef("ChangeEvent"), "Change")}, 400, 403, 404)

	rs := []route{
		{method: http.MethodGet, path: p, handler: s.h(s.list(k)), id: "list" + many,
			summary: "List " + k.Name + " entities", description: "A page of " + k.Name + " entities, ordered by name.",
			params: listParams, responses: responses(obj{"200": resp("A page of "+k.Name+" entities.", list)}, 400, 403)},
		{method: http.MethodPost, path: p, handler: s.h(s.create(k)), id: "create" + one,
			summary: "Create a " + k.Name, body: create,
			responses: responses(obj{"201": resp("The created entity.", entity, "Change", "Location")}, 400, 403, 404, 409, 413)},
		{method: http.MethodPut, path: p, handler: s.h(s.createOrUpdate(k)), id: "createOrUpdate" + one,
			summary:     "Create or update a " + k.Name,
			description: "Creates the entity named by the body's name and parent, or updates it when it exists.", body: create,
			responses: responses(obj{
				"200": resp("The updated entity.", entity, "Change"),
				"201": resp("The created entity.", entity, "Change", "Location"),
			}, 400, 403, 404, 409, 413)},
		{method: http.MethodPut, path: p + "/restore", handler: s.h(s.restore(k)), id: "restore" + one,
			summary:   "Restore a soft-deleted " + k.Name,
			body:      jsonBody("The id of the entity to restore.", schemaRef("RestoreEntity"), true),
			responses: responses(obj{"200": resp("The restored entity.", entity, "Change")}, 400, 403, 404, 413)},
		{method: http.MethodPut, path: p + "/bulk", handler: s.h(s.bulk(k)), id: "bulkCreateOrUpdate" + many,
			summary: "Create or update many " + k.Name + " entities",
			description: fmt.Sprintf("PUT /bulk takes a JSON array of create requests, as OpenMetadata's bulk API does. Each "+
				"element is created or updated as a PUT of it alone would: validated, versioned and evented on its own, "+
				"with a result of its own. At most %d elements; an entity that fails does not fail the others.", store.MaxBulk),
			body: jsonBody("The create requests.", obj{"type": "array", "maxItems": store.MaxBulk,
				"items": schemaRef(createSchemaName(k))}, true),
			responses: responses(obj{"200": resp("The outcome of every element.", schemaRef("BulkOperationResult"))},
				400, 403, 413)},

		{method: http.MethodGet, path: p + "/{id}", handler: s.h(s.get(k, byID)), id: "get" + one,
			summary: "Get a " + k.Name + " by id", params: cat(byIDParams, readParams),
			responses: responses(obj{"200": resp("The entity.", entity, "ETag")}, 400, 403, 404)},
		{method: http.MethodGet, path: p + "/name/{fqn}", handler: s.h(s.get(k, byName)), id: "get" + one + "ByName",
			summary: "Get a " + k.Name + " by fully qualified name", params: cat(byNameParams, readParams),
			responses: responses(obj{"200": resp("The entity.", entity, "ETag")}, 400, 403, 404)},

		{method: http.MethodPatch, path: p + "/{id}", handler: s.h(s.patch(k, byID)), id: "patch" + one,
			summary: "Patch a " + k.Name + " by id", params: cat(byIDParams, []any{paramRef("ifMatch")}),
			body: patch, responses: patched},
		{method: http.MethodPatch, path: p + "/name/{fqn}", handler: s.h(s.patch(k, byName)), id: "patch" + one + "ByName",
			summary: "Patch a " + k.Name + " by fully qualified name", params: cat(byNameParams, []any{paramRef("ifMatch")}),
			body: patch, responses: patched},

		{method: http.MethodDelete, path: p + "/{id}", handler: s.h(s.remove(k, byID)), id: "delete" + one,
			summary: "Delete a " + k.Name + " by id", params: cat(byIDParams, delParams),
			responses: responses(deleted, 400, 403, 404, 409)},
		{method: http.MethodDelete, path: p + "/name/{fqn}", handler: s.h(s.remove(k, byName)), id: "delete" + one + "ByName",
			summary: "Delete a " + k.Name + " by fully qualified name", params: cat(byNameParams, delParams),
			responses: responses(deleted, 400, 403, 404, 409)},
		{method: http.MethodDelete, path: p + "/async/{id}", handler: s.h(s.removeAsync(k)), id: "delete" + one + "Async",
			summary: "Delete a " + k.Name + " asynchronously", params: cat(byIDParams, delParams),
			responses: responses(obj{"202": resp("The delete job was accepted.", schemaRef("DeleteJob"))}, 400, 403, 404, 409, 429)},

		{method: http.MethodGet, path: p + "/{id}/versions", handler: s.h(s.versions(k)), id: "list" + one + "Versions",
			summary: "List the versions of a " + k.Name, params: byIDParams,
			responses: responses(obj{"200": resp("Every version, newest first.", schemaRef("EntityHistory"))}, 400, 403, 404)},
		{method: http.MethodGet, path: p + "/{id}/versions/{version}", handler: s.h(s.version(k)), id: "get" + one + "Version",
			summary:   "Get one version of a " + k.Name,
			params:    cat(byIDParams, []any{pathParamSpec("version", "The version number, for example 0.2.", obj{"type": "string"})}),
			responses: responses(obj{"200": resp("The entity as it was at that version.", entity)}, 400, 403, 404)},

		{method: http.MethodPut, path: p + "/{id}/followers", handler: s.h(s.addFollower(k)), id: "add" + one + "Follower",
			summary: "Add a follower to a " + k.Name, params: byIDParams, body: follower, responses: followed},
		{method: http.MethodDelete, path: p + "/{id}/followers/{userId}", handler: s.h(s.removeFollower(k)), id: "delete" + one + "Follower",
			summary: "Remove a follower from a " + k.Name,
			params:  cat(byIDParams, []any{pathParamSpec("userId", "The follower's user id.", schemaRef("uuid"))}), responses: followed},
	}
	if k.HasAction(meridian.ActionTestConnectionResult) {
		rs = append(rs, route{method: http.MethodPut, path: p + "/{id}/testConnectionResult", handler: s.h(s.testConnectionResult(k)),
			id: "add" + one + "TestConnectionResult", summary: "Store the result of a connection test of a " + k.Name,
			params: byIDParams, body: jsonBody("The test connection result.", obj{"type": "object"}, true),
			responses: responses(obj{"200": resp("The service with its testConnectionResult.", entity, "Change", "ETag")}, 400, 403, 404, 413)})
	}
	if k.HasAction(meridian.ActionTestConnection) {
		rs = append(rs, route{method: http.MethodPost, path: p + "/{id}/testConnection", handler: s.h(s.testPluginConnection(k)),
			id: "test" + one + "Connection", summary: "Check a " + k.Name + "'s connection configuration",
			description: "Validates the stored connectionConfig without a network call.", params: byIDParams,
			responses: responses(obj{"200": resp("The outcome of the check.", schemaRef("TestConnectionOutcome"))}, 400, 403, 404)})
	}
	for i := range rs {
		rs[i].tag = k.Name
	}
	return rs
}

// userRoutes are the users and tokens family beside the generic user routes (users.go).
func (s *server) userRoutes(reg *meridian.Registry) []route {
	var me []any
	if k, ok := reg.Kind("user"); ok {
		me = fieldsParam(k)
	}
	me = append(me, paramRef("include"))
	p := apiPrefix + "/v1/users"
	return []route{
		{method: http.MethodGet, path: p + "/me", handler: s.h(s.me), id: "getCurrentUser", tag: "user",
			summary: "Get the calling user", params: me,
			responses: responses(obj{"200": resp("The caller's user entity.", kindRef(reg, "user"))}, 400, 403, 404)},
		{method: http.MethodPut, path: p + "/security/token", handler: s.h(s.createPersonalToken), id: "createPersonalAccessToken",
			tag: "security", summary: "Create a personal access token for the caller",
			body:      jsonBody("The token's name and lifetime.", schemaRef("CreatePersonalAccessToken"), true),
			responses: responses(obj{"201": resp("The new token, with its secret.", schemaRef("PersonalAccessToken"))}, 400, 403, 404, 413)},
		{method: http.MethodGet, path: p + "/security/token", handler: s.h(s.listTokens), id: "listPersonalAccessTokens",
			tag: "security", summary: "List the caller's tokens",
			responses: responses(obj{"200": resp("The caller's tokens, without their secrets.",
				obj{"type": "array", "items": schemaRef("TokenInfo")})}, 403)},
		{method: http.MethodDelete, path: p + "/security/token/{tokenId}", handler: s.h(s.revokeToken), id: "revokePersonalAccessToken",
			tag: "security", summary: "Revoke a token (the caller's own; an admin may revoke any)",
			params:    []any{pathParamSpec("tokenId", "The token's id.", obj{"type": "string", "minLength": 1})},
			responses: responses(obj{"200": resp("The token was revoked.", schemaRef("RevokedToken"))}, 400, 403, 404)},
		{method: http.MethodPut, path: p + "/generateToken/{userId}", handler: s.h(s.generateBotToken), id: "generateBotToken",
			tag: "security", summary: "Generate a bot token (admins only)",
			params:    []any{pathParamSpec("userId", "The bot user's id.", schemaRef("uuid"))},
			body:      jsonBody("The token's lifetime; the body may be empty.", schemaRef("GenerateBotToken"), false),
			responses: responses(obj{"200": resp("The new bot token.", schemaRef("BotToken"))}, 400, 403, 404, 413)},
	}
}

// eventRoutes serve the change-event outbox to admins (events.go): the events, paged and
// filtered by timestamp and entityType, and each outbox consumer's position and backlog.
func (s *server) eventRoutes() []route {
	p := apiPrefix + "/v1/events"
	return []route{
		{method: http.MethodGet, path: p, handler: s.h(s.listEvents), id: "listChangeEvents", tag: "events",
			summary: "List change events", params: []any{
				queryParam("timestamp", "Only events at or after this time (epoch milliseconds).", obj{"type": "integer", "format": "int64", "minimum": 0}),
				queryParam("entityType", "Comma-separated entity types; * for all.", obj{"type": "string"}),
				queryParam("limit", "Page size.", obj{"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
				queryParam("after", "Cursor from paging.after: the next page.", obj{"type": "string"}),
			},
			responses: responses(obj{"200": resp("A page of change events.", schemaRef("ChangeEventList"))}, 400, 403)},
		{method: http.MethodGet, path: p + "/consumers", handler: s.h(s.eventConsumers), id: "listEventConsumers", tag: "events",
			summary:   "List the outbox consumers and their backlog",
			responses: responses(obj{"200": resp("Each consumer's position and pending events.", schemaRef("EventConsumerList"))}, 403)},
	}
}

// searchRoutes are keyword search, answered in Elasticsearch's shape from the store's own
// full-text index (search.go).
func (s *server) searchRoutes() []route {
	return []route{
		{method: http.MethodGet, path: apiPrefix + "/v1/search/query", handler: s.h(s.searchQuery), id: "searchQuery", tag: "search",
			summary: "Search entities by keyword", params: []any{
				queryParam("q", "The query text; * or empty matches everything.", obj{"type": "string"}),
				queryParam("index", "A search index name (table_search_index, …), an entity type, or dataAsset / all.", obj{"type": "string"}),
				queryParam("from", "Offset of the first hit.", obj{"type": "integer", "minimum": 0, "default": 0}),
				queryParam("size", "Number of hits; 0 answers the total only.", obj{"type": "integer", "minimum": 0,
					"maximum": search.MaxSize, "default": search.DefaultSize}),
				queryParam("deleted", "Search deleted (true) or live (false) entities.", obj{"type": "boolean"}),
				queryParam("query_filter", "An Elasticsearch query as JSON, restricting the hits.", obj{"type": "string"}),
				queryParam("track_total_hits", fmt.Sprintf("Count every match for hits.total; otherwise counting stops at %d and hits.total.relation is gte once it does.", search.TrackTotalHitsUpTo),
					obj{"type": "boolean", "default": false}),
			},
			responses: responses(obj{"200": resp("The hits.", schemaRef("SearchResponse"))}, 400, 403)},
		{method: http.MethodGet, path: apiPrefix + "/v1/search/semantic", handler: s.h(s.searchByMeaning(search.Vector)), id: "searchSemantic", tag: "search",
			summary:     "Search entities by meaning",
			description: "The question is embedded and compared with each entity's indexed text; hits are the nearest entities by cosine similarity (_score, 0 to 1), each with the passage that matched in highlight.passage.",
			params:      meaningParams(), responses: responses(obj{"200": resp("The hits.", schemaRef("SearchResponse"))}, 400, 403)},
		{method: http.MethodGet, path: apiPrefix + "/v1/search/hybrid", handler: s.h(s.searchByMeaning(search.Hybrid)), id: "searchHybrid", tag: "search",
			summary:     "Search entities by keywords and meaning, fused",
			description: "Keyword and semantic retrieval of the k best each, fused into one ranking; each hit carries the passage that matched in highlight.passage.",
			params:      meaningParams(), responses: responses(obj{"200": resp("The hits.", schemaRef("SearchResponse"))}, 400, 403)},
		{method: http.MethodPost, path: apiPrefix + "/v1/search/vector/query", handler: s.h(s.vectorQuery), id: "vectorSearch", tag: "search",
			summary: "Vector semantic search, as OpenMetadata's",
			body: jsonBody("The question, filters (entityType, service, tags: arrays), size (1–100, default 10), from, k (1–1000) and threshold (0–1).", obj{
				"type": "object", "required": []any{"query"},
				"properties": obj{
					"query":     obj{"type": "string", "maxLength": search.MaxQueryLength},
					"filters":   obj{"type": "object", "additionalProperties": obj{"type": "array", "items": obj{"type": "string"}}},
					"size":      obj{"type": "integer", "minimum": 1, "maximum": 100, "default": search.DefaultSize},
					"from":      obj{"type": "integer", "minimum": 0, "default": 0},
					"k":         obj{"type": "integer", "minimum": 1, "maximum": search.MaxK, "default": search.MaxK},
					"threshold": obj{"type": "number", "minimum": 0, "maximum": 1, "default": 0},
				}}, true),
			responses: responses(obj{"200": resp("The nearest entities: each hit is the entity document with _score and _passage.", obj{
				"type": "object", "required": []any{"tookMillis", "hits"},
				"properties": obj{
					"tookMillis": obj{"type": "integer", "format": "int64"},
					"total":      obj{"type": "integer"},
					"hits":       obj{"type": "array", "items": obj{"type": "object"}},
				}})}, 400, 403, 413)},
	}
}

// meaningParams are the query parameters of the semantic and hybrid searches.
func meaningParams() []any {
	return []any{
		queryParam("q", "The question, in plain words (required).", obj{"type": "string", "maxLength": search.MaxQueryLength}),
		queryParam("index", "A search index name (table_search_index, …), an entity type, or dataAsset / all.", obj{"type": "string"}),
		queryParam("from", "Offset of the first hit.", obj{"type": "integer", "minimum": 0, "default": 0}),
		queryParam("size", "Number of hits.", obj{"type": "integer", "minimum": 0, "maximum": search.MaxSize, "default": search.DefaultSize}),
		queryParam("k", "Nearest entities considered (per side, for hybrid) before the threshold and paging.", obj{"type": "integer",
			"minimum": 1, "maximum": search.MaxK, "default": search.DefaultK}),
		queryParam("threshold", "Lowest score kept, 0.0 to 1.0.", obj{"type": "number", "minimum": 0, "maximum": 1, "default": 0}),
		queryParam("query_filter", "An Elasticsearch query as JSON, restricting the hits (entityType, service.name, tags.tagFQN, deleted).", obj{"type": "string"}),
	}
}

// lineageRoutes are OpenMetadata's lineage API (lineage.go): PUT adds an edge (200, empty
// body; the change header says entityLineageAdded, entityLineageUpdated or
// entityNoChange), GET reads the graph by id or FQN, DELETE removes an edge by ids or by
// FQNs.
func (s *server) lineageRoutes(reg *meridian.Registry) []route {
	var kinds []any
	for _, k := range reg.Kinds() {
		kinds = append(kinds, k.Name)
	}
	entityParam := func(name string) obj {
		return pathParamSpec(name, "An entity type.", obj{"type": "string", "enum": kinds})
	}
	depth := func(name string) obj {
		return queryParam(name, "How many hops to walk.", obj{"type": "integer", "minimum": 0, "maximum": maxRESTLineageDepth, "default": 1})
	}
	graphParams := []any{depth("upstreamDepth"), depth("downstreamDepth"),
		queryParam("includeDeleted", "Include deleted entities.", obj{"type": "boolean", "default": false})}
	graph := responses(obj{"200": resp("The lineage graph.", schemaRef("EntityLineage"))}, 400, 403, 404)
	removed := responses(obj{"200": resp("The edge was deleted.", nil, "Change")}, 400, 403, 404)
	p := apiPrefix + "/v1/lineage"
	rs := []route{
		{method: http.MethodPut, path: p, handler: s.h(s.addLineage), id: "addLineage",
			summary: "Add a lineage edge, or replace its details", body: jsonBody("The edge.", schemaRef("AddLineage"), true),
			responses: responses(obj{"200": resp("The edge was added (entityLineageAdded), updated or left unchanged.", nil, "Change")},
				400, 403, 404, 413)},
		{method: http.MethodGet, path: p + "/{entity}/{id}", handler: s.h(s.getLineage(byID)), id: "getLineage",
			summary: "Get the lineage of an entity by id",
			params:  cat([]any{entityParam("entity"), paramRef("id")}, graphParams), responses: graph},
		{method: http.MethodGet, path: p + "/{entity}/name/{fqn}", handler: s.h(s.getLineage(byName)), id: "getLineageByName",
			summary: "Get the lineage of an entity by fully qualified name",
			params:  cat([]any{entityParam("entity"), paramRef("fqn")}, graphParams), responses: graph},
		{method: http.MethodDelete, path: p + "/{entity}/{id}/{toEntity}/{toId}", handler: s.h(s.deleteLineage(false)),
			id: "deleteLineage", summary: "Delete a lineage edge by ids",
			params: []any{entityParam("entity"), pathParamSpec("id", "The upstream entity's id.", schemaRef("uuid")),
				entityParam("toEntity"), pathParamSpec("toId", "The downstream entity's id.", schemaRef("uuid"))},
			responses: removed},
		{method: http.MethodDelete, path: p + "/{entity}/name/{fqn}/{toEntity}/name/{toFqn}", handler: s.h(s.deleteLineage(true)),
			id: "deleteLineageByName", summary: "Delete a lineage edge by fully qualified names",
			params: []any{entityParam("entity"), pathParamSpec("fqn", "The upstream entity's fully qualified name.", obj{"type": "string", "minLength": 1}),
				entityParam("toEntity"), pathParamSpec("toFqn", "The downstream entity's fully qualified name.", obj{"type": "string", "minLength": 1})},
			responses: removed},
	}
	for i := range rs {
		rs[i].tag = "lineage"
	}
	return rs
}

// qualityRoutes serve test case results, kept as a time series (quality.go): Meridian's
// and OpenMetadata 1.x's …/testCases/{fqn}/testCaseResult, and OpenMetadata's current
// …/testCases/testCaseResults/{fqn}. Test definitions and test cases themselves are
// served by the generic kind routes.
func (s *server) qualityRoutes(reg *meridian.Registry) []route {
	tag := "testCase"
	if k, ok := reg.Kind("testCase"); ok {
		tag = k.Name
	}
	resultParams := []any{
		queryParam("startTs", "Only results at or after this time (epoch milliseconds).", obj{"type": "integer", "format": "int64", "minimum": 0}),
		queryParam("endTs", "Only results at or before this time (epoch milliseconds).", obj{"type": "integer", "format": "int64", "minimum": 0}),
	}
	legacyFQN := pathParamSpec("id", "The test case's fully qualified name (this path segment shares its name with the id routes).",
		obj{"type": "string", "minLength": 1})
	byFQN := pathParamSpec("fqn", "The test case's fully qualified name.", obj{"type": "string", "minLength": 1})
	result := jsonBody("One result of a test case run.", schemaRef("TestCaseResult"), true)
	added := responses(obj{"200": resp("The stored result.", schemaRef("TestCaseResult"), "Change")}, 400, 403, 404, 413)
	listed := responses(obj{"200": resp("The results, newest first.", schemaRef("TestCaseResultList"))}, 400, 403, 404)
	p := apiPrefix + "/v1/dataQuality/testCases"
	// {id} holds the test case FQN here; chi needs the one parameter name at this level.
	rs := []route{
		{method: http.MethodPut, path: p + "/{id}/testCaseResult", handler: s.h(s.addTestCaseResult("id")), id: "putTestCaseResultLegacy",
			summary: "Add a test case result (OpenMetadata 1.x path)", params: []any{legacyFQN}, body: result, responses: added},
		{method: http.MethodGet, path: p + "/{id}/testCaseResult", handler: s.h(s.listTestCaseResults("id")), id: "listTestCaseResultsLegacy",
			summary: "List a test case's results (OpenMetadata 1.x path)", params: cat([]any{legacyFQN}, resultParams), responses: listed},
		{method: http.MethodPost, path: p + "/testCaseResults/{fqn}", handler: s.h(s.addTestCaseResult("fqn")), id: "addTestCaseResult",
			summary: "Add a test case result", params: []any{byFQN}, body: result, responses: added},
		{method: http.MethodPut, path: p + "/testCaseResults/{fqn}", handler: s.h(s.addTestCaseResult("fqn")), id: "putTestCaseResult",
			summary: "Add a test case result (PUT)", params: []any{byFQN}, body: result, responses: added},
		{method: http.MethodGet, path: p + "/testCaseResults/{fqn}", handler: s.h(s.listTestCaseResults("fqn")), id: "listTestCaseResults",
			summary: "List a test case's results", params: cat([]any{byFQN}, resultParams), responses: listed},
	}
	for i := range rs {
		rs[i].tag = tag
	}
	if suite, target, err := quality.BasicSuiteKind(reg); err == nil {
		rs = append(rs, route{method: http.MethodPost, path: apiPrefix + "/v1/" + suite.Collection + "/basic",
			handler: s.h(s.createBasicSuite), id: "createBasic" + upperFirst(suite.Name), tag: suite.Name,
			summary: "Create the basic test suite of a " + target.Name,
			description: "basicEntityReference (or executableEntityReference) names the " + target.Name + " by fully qualified name or reference; " +
				"the suite is named after it (<fqn>.testSuite). A " + target.Name + "'s first test case creates it when no one did.",
			body: jsonBody("The "+target.Name+" and, optionally, description, displayName, owners and domains.",
				obj{"type": "object", "properties": obj{"basicEntityReference": obj{}, "executableEntityReference": obj{},
					"description": obj{"type": "string"}, "displayName": obj{"type": "string"}}}, true),
			responses: responses(obj{"201": resp("The basic test suite.", schemaRef(kindSchemaName(suite)), "Change", "Location")},
				400, 403, 404, 409, 413)})
	}
	return rs
}

// cat concatenates parameter lists into a new one.
func cat(lists ...[]any) []any {
	var out []any
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
