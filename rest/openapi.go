package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
)

// OpenAPIPath is where the API description is served. It is a public contract, like
// OpenMetadata's swagger.json: the authenticate middleware lets a GET of it through
// without a token.
const OpenAPIPath = "/api/v1/openapi.json"

// apiPrefix is the server URL of the document: its paths are written below it.
const apiPrefix = "/api"

// obj is a JSON object of the document under construction. encoding/json writes map keys
// sorted, so the document is byte-for-byte deterministic.
type obj = map[string]any

// kindSchemas are the embedded kind schemas, compiled once per process.
var kindSchemas = sync.OnceValues(schema.New)

// openAPI builds the document once, when the routes are set up, and serves it. A build
// failure is a programming error (the schemas are embedded); it is logged and answered
// 500 rather than taking the whole API down.
func (s *server) openAPI() http.HandlerFunc {
	doc, err := buildOpenAPI(s.ents.Registry(), s.serverVersion)
	return func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			s.writeError(w, r, fmt.Errorf("build the OpenAPI document: %w", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(doc)
	}
}

// buildOpenAPI returns the OpenAPI 3.1 description of every route New serves, generated
// from the registry and the kind schemas, as indented JSON.
func buildOpenAPI(reg *meridian.Registry, version string) ([]byte, error) {
	v, err := kindSchemas()
	if err != nil {
		return nil, err
	}
	d := &apiDoc{reg: reg, paths: obj{}, schemas: obj{}, params: sharedParameters(), tags: map[string]string{},
		opIDs: map[string]string{}}
	if err := d.addSchemas(v); err != nil {
		return nil, err
	}
	for _, k := range reg.Kinds() {
		d.addKind(k)
		d.addBulk(k)
	}
	d.addSpecialRoutes()
	if d.err != nil {
		return nil, d.err
	}
	if version == "" {
		version = "dev"
	}
	tags := make([]any, 0, len(d.tags))
	for _, name := range sortedKeys(d.tags) {
		tags = append(tags, obj{"name": name, "description": d.tags[name]})
	}
	doc := obj{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": obj{
			"title":   "Meridian",
			"version": version,
			"summary": "Metadata catalog with an OpenMetadata-compatible REST API",
			"description": "Meridian's REST API. Paths, bodies and errors follow OpenMetadata. " +
				"Every operation needs `Authorization: Bearer <JWT>` except this document itself. " +
				"Errors answer `{code, message}`. List answers are `{data, paging{before, after, total}}` " +
				"with opaque cursors. Writes name the change they made in the X-OpenMetadata-Change header.",
		},
		"servers":  []any{obj{"url": apiPrefix, "description": "This Meridian server"}},
		"security": []any{obj{"bearerAuth": []any{}}},
		"tags":     tags,
		"paths":    d.paths,
		"components": obj{
			"securitySchemes": obj{"bearerAuth": obj{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
				"description": "A personal access token or a bot token (a JWT signed by this server)."}},
			"schemas":    d.schemas,
			"parameters": d.params,
			"responses":  errorResponses(),
			"headers":    sharedHeaders(),
		},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// apiDoc accumulates paths, schemas and tags; the first error sticks.
type apiDoc struct {
	reg     *meridian.Registry
	paths   obj
	schemas obj
	params  obj // components.parameters: the shared ones and each kind's fields
	tags    map[string]string
	opIDs   map[string]string // operationId -> "METHOD path"
	err     error
}

func (d *apiDoc) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

// add adds one operation at a path below /api (e.g. /v1/tables).
func (d *apiDoc) add(method, path string, op obj) {
	item, _ := d.paths[path].(obj)
	if item == nil {
		item = obj{}
		d.paths[path] = item
	}
	m := strings.ToLower(method)
	if _, dup := item[m]; dup {
		d.fail("openapi: %s %s described twice", method, path)
	}
	id, _ := op["operationId"].(string)
	if prev, dup := d.opIDs[id]; dup {
		d.fail("openapi: operationId %s used by %s and %s %s", id, prev, method, path)
	}
	d.opIDs[id] = method + " " + path
	item[m] = op
}

func (d *apiDoc) tag(name, description string) string {
	if _, ok := d.tags[name]; !ok {
		d.tags[name] = description
	}
	return name
}

// --- Schemas -------------------------------------------------------------------------

// kindSchemaName is the component name of a kind's schema: Table, DatabaseSchema, …
func kindSchemaName(k *meridian.Kind) string { return upperFirst(k.Name) }

// createSchemaName is the component name of a kind's create body: CreateTable, …
func createSchemaName(k *meridian.Kind) string { return "Create" + upperFirst(k.Name) }

func schemaRef(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// addSchemas adds the shared definitions, every kind's schema and create body, and the
// shapes of the other answers.
func (d *apiDoc) addSchemas(v *schema.Validator) error {
	raw, ok := v.Schema("common")
	if !ok {
		return fmt.Errorf("openapi: the common schema is missing")
	}
	common, err := componentSchema(raw)
	if err != nil {
		return fmt.Errorf("openapi: common schema: %w", err)
	}
	defs, _ := common["$defs"].(obj)
	for name, def := range defs {
		d.schemas[name] = def
	}
	for name, sch := range fixedSchemas() {
		if _, dup := d.schemas[name]; dup {
			return fmt.Errorf("openapi: schema %s is defined twice", name)
		}
		d.schemas[name] = sch
	}
	for _, k := range d.reg.Kinds() {
		sch := obj{"type": "object", "description": "A " + k.Name + " entity."}
		if raw, ok := v.Schema(k.Name); ok {
			if sch, err = componentSchema(raw); err != nil {
				return fmt.Errorf("openapi: schema of %s: %w", k.Name, err)
			}
		}
		for _, name := range []string{kindSchemaName(k), createSchemaName(k)} {
			if _, dup := d.schemas[name]; dup {
				return fmt.Errorf("openapi: schema %s of kind %s clashes with another schema", name, k.Name)
			}
		}
		d.schemas[createSchemaName(k)] = createSchema(k, sch)
		d.schemas[kindSchemaName(k)] = answerSchema(k, sch)
	}
	return nil
}

// answerSchema is a kind's schema as the API answers the entity: the optional fields of
// ?fields= are left out unless requested, so none of them is required.
func answerSchema(k *meridian.Kind, sch obj) obj {
	req, _ := sch["required"].([]any)
	if len(req) == 0 {
		return sch
	}
	kept := []any{}
	for _, r := range req {
		if name, _ := r.(string); !k.HasField(name) {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(sch, "required")
	} else {
		sch["required"] = kept
	}
	return sch
}

// componentSchema turns an embedded schema into a component: $schema and $id go (the
// document's jsonSchemaDialect is 2020-12, and an $id would rebase the references), and
// references to common.json#/$defs/X or #/$defs/X point at #/components/schemas/X.
func componentSchema(raw json.RawMessage) (obj, error) {
	var m obj
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "$schema")
	delete(m, "$id")
	if err := rewriteRefs(m); err != nil {
		return nil, err
	}
	return m, nil
}

func rewriteRefs(v any) error {
	switch t := v.(type) {
	case map[string]any:
		for key, val := range t {
			if key == "$ref" {
				s, _ := val.(string)
				var name string
				switch {
				case strings.HasPrefix(s, "common.json#/$defs/"):
					name = strings.TrimPrefix(s, "common.json#/$defs/")
				case strings.HasPrefix(s, "#/$defs/"):
					name = strings.TrimPrefix(s, "#/$defs/")
				default:
					return fmt.Errorf("unsupported $ref %q", s)
				}
				t[key] = "#/components/schemas/" + name
				continue
			}
			if err := rewriteRefs(val); err != nil {
				return err
			}
		}
	case []any:
		for _, val := range t {
			if err := rewriteRefs(val); err != nil {
				return err
			}
		}
	}
	return nil
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// createSchema derives a kind's create (and PUT) body from its document schema: the
// parent, inherited and reference fields name their target by FQN string or by a
// reference object, relationship lists hold such references, and the parent field the
// engine demands is required.
func createSchema(k *meridian.Kind, doc obj) obj {
	c, _ := deepCopy(doc).(obj)
	c["title"] = createSchemaName(k)
	c["description"] = "Body of POST and PUT /v1/" + k.Collection + ". Parent and reference fields name " +
		"their target by FQN or by a reference object. System fields (id, fullyQualifiedName, version, " +
		"updatedAt, updatedBy, href, deleted, …) may be present, as in a document read and sent back, " +
		"and are ignored."
	props, _ := c["properties"].(obj)
	if props != nil {
		refFields := map[string]bool{}
		for _, p := range k.Parents {
			refFields[p.Field] = true
		}
		for _, f := range k.Inherit {
			refFields[f] = true
		}
		for f := range k.Refs {
			refFields[f] = true
		}
		isRef := func(f, target string) bool {
			p, _ := props[f].(obj)
			return p != nil && p["$ref"] == "#/components/schemas/"+target
		}
		for f := range refFields {
			if isRef(f, "EntityReference") {
				props[f] = schemaRef("EntityReferenceInput")
			}
		}
		for f := range meridian.RelationFields {
			if f != "followers" && k.HasField(f) && isRef(f, "EntityReferenceList") {
				props[f] = obj{"type": "array", "items": schemaRef("EntityReferenceInput")}
			}
		}
	}
	if k.ParentRequired && len(k.Parents) > 0 {
		if len(k.Parents) == 1 {
			req, _ := c["required"].([]any)
			has := false
			for _, r := range req {
				has = has || r == k.Parents[0].Field
			}
			if !has {
				c["required"] = append(req, k.Parents[0].Field)
			}
		} else {
			var alts []any
			for _, p := range k.Parents {
				alts = append(alts, obj{"required": []any{p.Field}})
			}
			c["anyOf"] = alts
		}
	}
	return c
}

// fixedSchemas are the shapes that do not come from the kind schemas.
func fixedSchemas() obj {
	str := obj{"type": "string"}
	integer := obj{"type": "integer", "format": "int64"}
	boolean := obj{"type": "boolean"}
	uuidRef := schemaRef("uuid")
	ts := schemaRef("timestamp")
	strList := obj{"type": "array", "items": str}
	return obj{
		"Error": obj{"type": "object", "description": "Every error answer: the HTTP status and a message.",
			"required": []any{"code", "message"}, "additionalProperties": false,
			"properties": obj{"code": obj{"type": "integer", "description": "The HTTP status."}, "message": str}},
		"EntityList": obj{"type": "object", "description": "One page of a list.",
			"required": []any{"data", "paging"},
			"properties": obj{
				"data": obj{"type": "array", "items": obj{"type": "object"}},
				"paging": obj{"type": "object", "required": []any{"total"},
					"properties": obj{
						"before": obj{"type": "string", "description": "Opaque cursor of the previous page; absent on the first page."},
						"after":  obj{"type": "string", "description": "Opaque cursor of the next page; absent on the last page."},
						"total":  obj{"type": "integer", "description": "Number of matching entities."},
					}},
			}},
		"EntityHistory": obj{"type": "object", "description": "Every version of an entity, newest first.",
			"required": []any{"entityType", "versions"},
			"properties": obj{"entityType": str,
				"versions": obj{"type": "array", "items": obj{"type": "string", "description": "One version, a serialized entity document."}}}},
		"ChangeEvent": obj{"type": "object", "description": "One entry of the change-event outbox.",
			"required": []any{"id", "eventType", "entityType", "entityId", "userName", "timestamp"},
			"properties": obj{
				"id": str,
				"eventType": obj{"type": "string", "description": "entityCreated, entityUpdated, entityNoChange, " +
					"entitySoftDeleted, entityDeleted, entityRestored, entityFieldsChanged, entityLineageAdded, " +
					"entityLineageUpdated, entityLineageDeleted, …"},
				"entityType":               str,
				"entityId":                 uuidRef,
				"entityFullyQualifiedName": str,
				"userName":                 str,
				"timestamp":                ts,
				"previousVersion":          obj{"type": "number"},
				"currentVersion":           obj{"type": "number"},
				"changeDescription":        schemaRef("ChangeDescription"),
				"entity":                   obj{"type": "object", "description": "The entity as the change left it."},
				"recursive":                obj{"type": "boolean", "description": "True for a cascade delete, recorded for the root only."},
			}},
		"ChangeEventList": obj{"type": "object", "required": []any{"data", "paging"},
			"properties": obj{
				"data": obj{"type": "array", "items": schemaRef("ChangeEvent")},
				"paging": obj{"type": "object", "properties": obj{
					"after": obj{"type": "string", "description": "Opaque cursor of the next page; absent on the last page."}}},
			}},
		"EventConsumerList": obj{"type": "object", "required": []any{"data"},
			"properties": obj{"data": obj{"type": "array", "items": obj{"type": "object",
				"required": []any{"name", "position", "pending"},
				"properties": obj{"name": str, "position": integer,
					"pending": obj{"type": "integer", "description": "Events waiting for this consumer."}}}}}},
		"SearchResponse": obj{"type": "object", "description": "Elasticsearch's search answer.",
			"required": []any{"took", "timed_out", "hits"},
			"properties": obj{
				"took":      integer,
				"timed_out": boolean,
				"hits": obj{"type": "object", "required": []any{"total", "max_score", "hits"},
					"properties": obj{
						"total": obj{"type": "object", "required": []any{"value", "relation"},
							"properties": obj{"value": obj{"type": "integer"}, "relation": obj{"type": "string", "enum": []any{"eq"}}}},
						"max_score": obj{"type": []any{"number", "null"}},
						"hits": obj{"type": "array", "items": obj{"type": "object",
							"required": []any{"_index", "_id", "_score", "_source"},
							"properties": obj{"_index": str, "_id": str, "_score": obj{"type": "number"},
								"_source": obj{"type": "object", "description": "The entity document."}}}},
					}},
			}},
		"LineageDetails": obj{"type": "object", "properties": obj{
			"sqlQuery": str,
			"columnsLineage": obj{"type": "array", "items": obj{"type": "object", "properties": obj{
				"fromColumns": strList, "toColumn": str, "function": str}}},
			"pipeline":    schemaRef("EntityReferenceInput"),
			"source":      str,
			"description": str,
		}},
		"LineageEdge": obj{"type": "object", "required": []any{"fromEntity", "toEntity"},
			"properties": obj{"fromEntity": uuidRef, "toEntity": uuidRef, "description": str,
				"lineageDetails": schemaRef("LineageDetails")}},
		"EntityLineage": obj{"type": "object", "description": "The lineage graph around one entity.",
			"required": []any{"entity", "nodes", "upstreamEdges", "downstreamEdges"},
			"properties": obj{
				"entity":          schemaRef("EntityReference"),
				"nodes":           obj{"type": "array", "items": schemaRef("EntityReference")},
				"upstreamEdges":   obj{"type": "array", "items": schemaRef("LineageEdge")},
				"downstreamEdges": obj{"type": "array", "items": schemaRef("LineageEdge")},
			}},
		"AddLineage": obj{"type": "object", "description": "Body of PUT /v1/lineage.", "required": []any{"edge"},
			"properties": obj{
				"description": str,
				"edge": obj{"type": "object", "required": []any{"fromEntity", "toEntity"},
					"properties": obj{
						"fromEntity":     schemaRef("LineageEndInput"),
						"toEntity":       schemaRef("LineageEndInput"),
						"description":    str,
						"lineageDetails": schemaRef("LineageDetails"),
					}},
			}},
		"LineageEndInput": obj{"type": "object", "description": "One end of an edge: its type and its id or fullyQualifiedName.",
			"required":   []any{"type"},
			"properties": obj{"type": str, "id": uuidRef, "fullyQualifiedName": str, "name": str}},
		"EntityReferenceInput": obj{
			"description": "An entity named by its fully qualified name, or by a reference object with its id or " +
				"fullyQualifiedName (and its type when the field may point at several kinds).",
			"anyOf": []any{
				schemaRef("fullyQualifiedName"),
				obj{"type": "object", "properties": obj{"id": uuidRef, "type": str, "fullyQualifiedName": str, "name": str},
					"anyOf": []any{
						obj{"required": []any{"id"}, "properties": obj{"id": uuidRef}},
						obj{"required": []any{"fullyQualifiedName"}, "properties": obj{"fullyQualifiedName": str}},
						obj{"required": []any{"name"}, "properties": obj{"name": str}},
					}},
			}},
		"JsonPatch": obj{"type": "array", "description": "An RFC 6902 JSON Patch.",
			"items": obj{"type": "object", "required": []any{"op", "path"},
				"properties": obj{
					"op":    obj{"type": "string", "enum": []any{"add", "remove", "replace", "move", "copy", "test"}},
					"path":  obj{"type": "string", "description": "JSON Pointer of the target."},
					"from":  obj{"type": "string", "description": "JSON Pointer of the source (move, copy)."},
					"value": obj{"description": "The value (add, replace, test)."},
				}}},
		"DeleteJob": obj{"type": "object", "description": "An accepted asynchronous delete.",
			"required":   []any{"jobId", "message", "entityName", "hardDelete", "recursive"},
			"properties": obj{"jobId": str, "message": str, "entityName": str, "hardDelete": boolean, "recursive": boolean}},
		"RestoreEntity": obj{"type": "object", "description": "Body of PUT …/restore.", "required": []any{"id"},
			"properties": obj{"id": uuidRef}},
		"TestConnectionOutcome": obj{"type": "object", "required": []any{"status", "message"},
			"properties": obj{"status": obj{"type": "string", "enum": []any{"Successful", "Failed"}}, "message": str}},
		"TestCaseResultList": obj{"type": "object", "description": "Results of a test case, newest first.",
			"required": []any{"data", "paging"},
			"properties": obj{
				"data":   obj{"type": "array", "items": schemaRef("TestCaseResult")},
				"paging": obj{"type": "object", "properties": obj{"total": obj{"type": "integer"}}},
			}},
		"CreatePersonalAccessToken": obj{"type": "object", "properties": obj{
			"tokenName": obj{"type": "string", "default": defaultTokenName},
			"JWTTokenExpiry": obj{"type": "string", "default": defaultTokenExpiry,
				"description": "Days (30), a duration (30d, 12h, 90m), or never / Unlimited."},
		}},
		"PersonalAccessToken": obj{"type": "object", "description": "A new token; the secret is shown only here.",
			"required":   []any{"id", "tokenName", "token", "tokenType", "createdAt"},
			"properties": obj{"id": str, "tokenName": str, "token": str, "tokenType": str, "createdAt": ts, "expiresAt": ts}},
		"TokenInfo": obj{"type": "object", "description": "A token as listed, without its secret.",
			"required":   []any{"id", "tokenName", "tokenType", "createdAt", "revoked"},
			"properties": obj{"id": str, "tokenName": str, "tokenType": str, "createdAt": ts, "expiresAt": ts, "revoked": boolean}},
		"RevokedToken": obj{"type": "object", "required": []any{"id", "revoked"},
			"properties": obj{"id": str, "revoked": boolean}},
		"GenerateBotToken": obj{"type": "object", "properties": obj{
			"JWTTokenExpiry": obj{"type": "string", "default": defaultTokenExpiry,
				"description": "Days (30), a duration (30d, 12h, 90m), or never / Unlimited."}}},
		"BotToken": obj{"type": "object", "required": []any{"JWTToken", "JWTTokenExpiry", "JWTTokenExpiresAt", "id", "userId", "tokenType"},
			"properties": obj{"JWTToken": str, "JWTTokenExpiry": str,
				"JWTTokenExpiresAt": obj{"type": []any{"integer", "null"}, "description": "Epoch milliseconds; null when it never expires."},
				"id":                str, "userId": uuidRef, "tokenType": str}},
	}
}

// --- Parameters, headers, responses --------------------------------------------------

func paramRef(name string) obj { return obj{"$ref": "#/components/parameters/" + name} }

func sharedParameters() obj {
	return obj{
		"id": obj{"name": "id", "in": "path", "required": true, "description": "The entity's id.",
			"schema": schemaRef("uuid")},
		"fqn": obj{"name": "fqn", "in": "path", "required": true,
			"description": "The entity's fully qualified name, percent-encoded as a path segment.",
			"schema":      obj{"type": "string", "minLength": 1}},
		"limit": obj{"name": "limit", "in": "query", "description": "Page size.",
			"schema": obj{"type": "integer", "minimum": 0, "maximum": maxLimit, "default": defaultLimit}},
		"before": obj{"name": "before", "in": "query", "description": "Cursor from paging.before: the previous page. Not with after.",
			"schema": obj{"type": "string"}},
		"after": obj{"name": "after", "in": "query", "description": "Cursor from paging.after: the next page. Not with before.",
			"schema": obj{"type": "string"}},
		"include": obj{"name": "include", "in": "query", "description": "Which entities to include by their deleted flag.",
			"schema": obj{"type": "string", "enum": []any{string(store.IncludeNonDeleted), string(store.IncludeDeleted), string(store.IncludeAll)},
				"default": string(store.IncludeNonDeleted)}},
		"hardDelete": obj{"name": "hardDelete", "in": "query",
			"description": "Remove the entity for good instead of marking it deleted.",
			"schema":      obj{"type": "boolean", "default": false}},
		"recursive": obj{"name": "recursive", "in": "query",
			"description": "Delete the entity's children too; without it an entity with children is not deleted.",
			"schema":      obj{"type": "boolean", "default": false}},
		"ifMatch": obj{"name": "If-Match", "in": "header",
			"description": "The ETag of the version the patch was written against; another version answers 412.",
			"schema":      obj{"type": "string"}},
	}
}

func headerRef(name string) obj { return obj{"$ref": "#/components/headers/" + name} }

func sharedHeaders() obj {
	return obj{
		"Change": obj{"description": "The change the write made: entityCreated, entityUpdated, entityNoChange, " +
			"entitySoftDeleted, entityDeleted, entityRestored, entityFieldsChanged, entityLineageAdded, …",
			"schema": obj{"type": "string"}},
		"ETag":            obj{"description": "The entity version's tag, for If-Match.", "schema": obj{"type": "string"}},
		"Location":        obj{"description": "The path of the created entity.", "schema": obj{"type": "string"}},
		"WWWAuthenticate": obj{"description": "Bearer.", "schema": obj{"type": "string"}},
	}
}

// errorStatuses maps the error statuses the document uses to their response components.
var errorStatuses = map[int]struct{ name, description string }{
	400: {"BadRequest", "Invalid request: a malformed body, parameter or field value."},
	401: {"Unauthorized", "Missing, malformed, bad-signature or expired token."},
	403: {"Forbidden", "The caller lacks the permission."},
	404: {"NotFound", "The entity, version or path does not exist."},
	409: {"Conflict", "A naming conflict or a concurrent modification."},
	412: {"PreconditionFailed", "If-Match names another version."},
	413: {"PayloadTooLarge", "The body is larger than 16 MiB."},
	415: {"UnsupportedMediaType", "PATCH takes application/json-patch+json."},
}

func errorResponses() obj {
	out := obj{}
	for _, e := range errorStatuses {
		r := obj{"description": e.description, "content": jsonContent(schemaRef("Error"))}
		if e.name == "Unauthorized" {
			r["headers"] = obj{"WWW-Authenticate": headerRef("WWWAuthenticate")}
		}
		out[e.name] = r
	}
	return out
}

func jsonContent(sch obj) obj { return obj{"application/json": obj{"schema": sch}} }

// resp is a JSON answer; headers name components (Change, ETag, Location).
func resp(description string, sch obj, headers ...string) obj {
	r := obj{"description": description}
	if sch != nil {
		r["content"] = jsonContent(sch)
	}
	if len(headers) > 0 {
		h := obj{}
		for _, name := range headers {
			wire := name
			if name == "Change" {
				wire = ChangeHeader
			}
			h[wire] = headerRef(name)
		}
		r["headers"] = h
	}
	return r
}

// responses merges the success answers with error references for the given statuses;
// 401 is added to every operation.
func responses(ok obj, errs ...int) obj {
	out := obj{}
	for k, v := range ok {
		out[k] = v
	}
	for _, code := range append(errs, 401) {
		out[fmt.Sprint(code)] = obj{"$ref": "#/components/responses/" + errorStatuses[code].name}
	}
	return out
}

func jsonBody(description string, sch obj, required bool) obj {
	return obj{"description": description, "required": required, "content": jsonContent(sch)}
}

func queryParam(name, description string, sch obj) obj {
	return obj{"name": name, "in": "query", "description": description, "schema": sch}
}

func pathParamSpec(name, description string, sch obj) obj {
	return obj{"name": name, "in": "path", "required": true, "description": description, "schema": sch}
}

// fieldsParam returns ?fields= for a kind, a comma list of its optional fields or *, as
// a reference to the component <kind>Fields; none when the kind has no optional fields.
func (d *apiDoc) fieldsParam(k *meridian.Kind) []any {
	if len(k.Fields) == 0 {
		return nil
	}
	name := k.Name + "Fields"
	if _, done := d.params[name]; !done {
		enum := []any{"*"}
		for _, f := range k.Fields {
			enum = append(enum, f)
		}
		d.params[name] = obj{"name": "fields", "in": "query", "style": "form", "explode": false,
			"description": "Optional fields of a " + k.Name + " to include, comma-separated; * for all of them.",
			"schema":      obj{"type": "array", "items": obj{"type": "string", "enum": enum}, "uniqueItems": true}}
	}
	return []any{paramRef(name)}
}

// --- Kind routes (kindRoutes) --------------------------------------------------------

// addKind describes the standard operation set of kindRoutes.
func (d *apiDoc) addKind(k *meridian.Kind) {
	one := upperFirst(k.Name)
	many := plural(one)
	p := "/v1/" + k.Collection
	tagDesc := k.Name + " entities, served at " + apiPrefix + p + "."
	if sch, _ := d.schemas[kindSchemaName(k)].(obj); sch != nil {
		if desc, _ := sch["description"].(string); desc != "" {
			tagDesc = desc + " Served at " + apiPrefix + p + "."
		}
	}
	tag := d.tag(k.Name, tagDesc)
	entity := schemaRef(kindSchemaName(k))
	create := jsonBody("The entity to create.", schemaRef(createSchemaName(k)), true)
	readParams := append(d.fieldsParam(k), paramRef("include"))
	op := func(id, summary, description string, params []any, body obj, resps obj) obj {
		o := obj{"operationId": id, "summary": summary, "tags": []any{tag}, "responses": resps}
		if description != "" {
			o["description"] = description
		}
		if len(params) > 0 {
			o["parameters"] = params
		}
		if body != nil {
			o["requestBody"] = body
		}
		return o
	}
	cat := func(lists ...[]any) []any {
		var out []any
		for _, l := range lists {
			out = append(out, l...)
		}
		return out
	}
	byID := []any{paramRef("id")}
	byName := []any{paramRef("fqn")}

	// List.
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
	d.add("GET", p, op("list"+many, "List "+k.Name+" entities", "A page of "+k.Name+" entities, ordered by name.",
		listParams, nil, responses(obj{"200": resp("A page of "+k.Name+" entities.", list)}, 400, 403)))

	// Create, create or update.
	d.add("POST", p, op("create"+one, "Create a "+k.Name, "", nil, create,
		responses(obj{"201": resp("The created entity.", entity, "Change", "Location")}, 400, 403, 404, 409, 413)))
	d.add("PUT", p, op("createOrUpdate"+one, "Create or update a "+k.Name,
		"Creates the entity named by the body's name and parent, or updates it when it exists.", nil, create,
		responses(obj{
			"200": resp("The updated entity.", entity, "Change"),
			"201": resp("The created entity.", entity, "Change", "Location"),
		}, 400, 403, 404, 409, 413)))

	// Read.
	d.add("GET", p+"/{id}", op("get"+one, "Get a "+k.Name+" by id", "", cat(byID, readParams), nil,
		responses(obj{"200": resp("The entity.", entity, "ETag")}, 400, 403, 404)))
	d.add("GET", p+"/name/{fqn}", op("get"+one+"ByName", "Get a "+k.Name+" by fully qualified name", "",
		cat(byName, readParams), nil, responses(obj{"200": resp("The entity.", entity, "ETag")}, 400, 403, 404)))

	// Patch.
	patch := obj{"description": "An RFC 6902 JSON Patch.", "required": true, "content": obj{
		"application/json-patch+json": obj{"schema": schemaRef("JsonPatch")},
		"application/json":            obj{"schema": schemaRef("JsonPatch")},
	}}
	patched := responses(obj{"200": resp("The patched entity.", entity, "Change", "ETag")}, 400, 403, 404, 409, 412, 413, 415)
	d.add("PATCH", p+"/{id}", op("patch"+one, "Patch a "+k.Name+" by id", "", cat(byID, []any{paramRef("ifMatch")}), patch, patched))
	d.add("PATCH", p+"/name/{fqn}", op("patch"+one+"ByName", "Patch a "+k.Name+" by fully qualified name", "",
		cat(byName, []any{paramRef("ifMatch")}), patch, patched))

	// Delete.
	delParams := []any{paramRef("hardDelete"), paramRef("recursive")}
	deleted := obj{"200": resp("The deleted entity (soft delete, or hard delete).", entity, "Change")}
	if k.HardDeleteNoContent {
		deleted = obj{
			"200": resp("The soft-deleted entity.", entity, "Change"),
			"204": resp("Hard delete (hardDelete=true): no content.", nil, "Change"),
		}
	}
	d.add("DELETE", p+"/{id}", op("delete"+one, "Delete a "+k.Name+" by id", "", cat(byID, delParams), nil,
		responses(deleted, 400, 403, 404, 409)))
	d.add("DELETE", p+"/name/{fqn}", op("delete"+one+"ByName", "Delete a "+k.Name+" by fully qualified name", "",
		cat(byName, delParams), nil, responses(deleted, 400, 403, 404, 409)))
	d.add("DELETE", p+"/async/{id}", op("delete"+one+"Async", "Delete a "+k.Name+" asynchronously", "",
		cat(byID, delParams), nil, responses(obj{"202": resp("The delete job was accepted.", schemaRef("DeleteJob"))}, 400, 403, 404, 409)))
	d.add("PUT", p+"/restore", op("restore"+one, "Restore a soft-deleted "+k.Name, "", nil,
		jsonBody("The id of the entity to restore.", schemaRef("RestoreEntity"), true),
		responses(obj{"200": resp("The restored entity.", entity, "Change")}, 400, 403, 404, 413)))

	// Versions.
	d.add("GET", p+"/{id}/versions", op("list"+one+"Versions", "List the versions of a "+k.Name, "", byID, nil,
		responses(obj{"200": resp("Every version, newest first.", schemaRef("EntityHistory"))}, 400, 403, 404)))
	d.add("GET", p+"/{id}/versions/{version}", op("get"+one+"Version", "Get one version of a "+k.Name, "",
		cat(byID, []any{pathParamSpec("version", "The version number, for example 0.2.", obj{"type": "string"})}), nil,
		responses(obj{"200": resp("The entity as it was at that version.", entity)}, 400, 403, 404)))

	// Followers.
	follower := obj{"description": "The follower's user id as a JSON string; an empty body means the caller.",
		"required": false, "content": jsonContent(schemaRef("uuid"))}
	followed := responses(obj{"200": resp("The change event of the follower change.", schemaRef("ChangeEvent"), "Change")}, 400, 403, 404)
	d.add("PUT", p+"/{id}/followers", op("add"+one+"Follower", "Add a follower to a "+k.Name, "", byID, follower, followed))
	d.add("DELETE", p+"/{id}/followers/{userId}", op("delete"+one+"Follower", "Remove a follower from a "+k.Name, "",
		cat(byID, []any{pathParamSpec("userId", "The follower's user id.", schemaRef("uuid"))}), nil, followed))

	if strings.HasPrefix(k.Collection, "services/") {
		d.add("PUT", p+"/{id}/testConnectionResult", op("add"+one+"TestConnectionResult",
			"Store the result of a connection test of a "+k.Name, "", byID,
			jsonBody("The test connection result.", obj{"type": "object"}, true),
			responses(obj{"200": resp("The service with its testConnectionResult.", entity, "Change", "ETag")}, 400, 403, 404, 413)))
	}
	if k.Name == "contextPlugin" {
		d.add("POST", p+"/{id}/testConnection", op("test"+one+"Connection",
			"Check a "+k.Name+"'s connection configuration",
			"Validates the stored connectionConfig without a network call.", byID, nil,
			responses(obj{"200": resp("The outcome of the check.", schemaRef("TestConnectionOutcome"))}, 400, 403, 404)))
	}
}

// --- Special families ----------------------------------------------------------------

// addSpecialRoutes describes the routes of users.go, events.go, search.go, lineage.go,
// quality.go and this document.
func (d *apiDoc) addSpecialRoutes() {
	simple := func(method, path, id, tag, summary string, params []any, body obj, resps obj) {
		o := obj{"operationId": id, "summary": summary, "tags": []any{tag}, "responses": resps}
		if len(params) > 0 {
			o["parameters"] = params
		}
		if body != nil {
			o["requestBody"] = body
		}
		d.add(method, path, o)
	}
	kindRef := func(name string) obj {
		if k, ok := d.reg.Kind(name); ok {
			return schemaRef(kindSchemaName(k))
		}
		return obj{"type": "object"}
	}

	// This document.
	meta := d.tag("meta", "The API description itself.")
	d.add("GET", strings.TrimPrefix(OpenAPIPath, apiPrefix), obj{"operationId": "getOpenAPI",
		"summary": "Get this OpenAPI document", "description": "Public: no token is needed.",
		"tags": []any{meta}, "security": []any{},
		"responses": obj{"200": resp("The OpenAPI 3.1 document.", obj{"type": "object"})}})

	// Users and tokens (users.go).
	var userParams []any
	if k, ok := d.reg.Kind("user"); ok {
		userParams = d.fieldsParam(k)
	}
	userParams = append(userParams, paramRef("include"))
	simple("GET", "/v1/users/me", "getCurrentUser", d.tag("user", "Users."), "Get the calling user", userParams, nil,
		responses(obj{"200": resp("The caller's user entity.", kindRef("user"))}, 400, 403, 404))
	sec := d.tag("security", "Personal access tokens and bot tokens.")
	simple("PUT", "/v1/users/security/token", "createPersonalAccessToken", sec, "Create a personal access token for the caller", nil,
		jsonBody("The token's name and lifetime.", schemaRef("CreatePersonalAccessToken"), true),
		responses(obj{"201": resp("The new token, with its secret.", schemaRef("PersonalAccessToken"))}, 400, 403, 404, 413))
	simple("GET", "/v1/users/security/token", "listPersonalAccessTokens", sec, "List the caller's tokens", nil, nil,
		responses(obj{"200": resp("The caller's tokens, without their secrets.", obj{"type": "array", "items": schemaRef("TokenInfo")})}, 403))
	simple("DELETE", "/v1/users/security/token/{tokenId}", "revokePersonalAccessToken", sec,
		"Revoke a token (the caller's own; an admin may revoke any)",
		[]any{pathParamSpec("tokenId", "The token's id.", obj{"type": "string", "minLength": 1})}, nil,
		responses(obj{"200": resp("The token was revoked.", schemaRef("RevokedToken"))}, 400, 403, 404))
	simple("PUT", "/v1/users/generateToken/{userId}", "generateBotToken", sec, "Generate a bot token (admins only)",
		[]any{pathParamSpec("userId", "The bot user's id.", schemaRef("uuid"))},
		jsonBody("The token's lifetime; the body may be empty.", schemaRef("GenerateBotToken"), false),
		responses(obj{"200": resp("The new bot token.", schemaRef("BotToken"))}, 400, 403, 404, 413))

	// Events (events.go).
	ev := d.tag("events", "The change-event outbox (admins only).")
	simple("GET", "/v1/events", "listChangeEvents", ev, "List change events", []any{
		queryParam("timestamp", "Only events at or after this time (epoch milliseconds).", obj{"type": "integer", "format": "int64", "minimum": 0}),
		queryParam("entityType", "Comma-separated entity types; * for all.", obj{"type": "string"}),
		queryParam("limit", "Page size.", obj{"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
		queryParam("after", "Cursor from paging.after: the next page.", obj{"type": "string"}),
	}, nil, responses(obj{"200": resp("A page of change events.", schemaRef("ChangeEventList"))}, 400, 403))
	simple("GET", "/v1/events/consumers", "listEventConsumers", ev, "List the outbox consumers and their backlog", nil, nil,
		responses(obj{"200": resp("Each consumer's position and pending events.", schemaRef("EventConsumerList"))}, 403))

	// Search (search.go).
	simple("GET", "/v1/search/query", "searchQuery", d.tag("search", "Keyword search, answered in Elasticsearch's shape."),
		"Search entities by keyword", []any{
			queryParam("q", "The query text; * or empty matches everything.", obj{"type": "string"}),
			queryParam("index", "A search index name (table_search_index, …), an entity type, or dataAsset / all.", obj{"type": "string"}),
			queryParam("from", "Offset of the first hit.", obj{"type": "integer", "minimum": 0, "default": 0}),
			queryParam("size", "Number of hits; 0 answers the total only.", obj{"type": "integer", "minimum": 0,
				"maximum": store.MaxSearchSize, "default": store.DefaultSearchSize}),
			queryParam("deleted", "Search deleted (true) or live (false) entities.", obj{"type": "boolean"}),
			queryParam("query_filter", "An Elasticsearch query as JSON, restricting the hits.", obj{"type": "string"}),
		}, nil, responses(obj{"200": resp("The hits.", schemaRef("SearchResponse"))}, 400, 403))

	// Lineage (lineage.go).
	lin := d.tag("lineage", "Lineage edges between entities.")
	var kinds []any
	for _, k := range d.reg.Kinds() {
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
	simple("PUT", "/v1/lineage", "addLineage", lin, "Add a lineage edge, or replace its details", nil,
		jsonBody("The edge.", schemaRef("AddLineage"), true),
		responses(obj{"200": resp("The edge was added (entityLineageAdded), updated or left unchanged.", nil, "Change")}, 400, 403, 404, 413))
	simple("GET", "/v1/lineage/{entity}/{id}", "getLineage", lin, "Get the lineage of an entity by id",
		append([]any{entityParam("entity"), paramRef("id")}, graphParams...), nil,
		responses(obj{"200": resp("The lineage graph.", schemaRef("EntityLineage"))}, 400, 403, 404))
	simple("GET", "/v1/lineage/{entity}/name/{fqn}", "getLineageByName", lin, "Get the lineage of an entity by fully qualified name",
		append([]any{entityParam("entity"), paramRef("fqn")}, graphParams...), nil,
		responses(obj{"200": resp("The lineage graph.", schemaRef("EntityLineage"))}, 400, 403, 404))
	simple("DELETE", "/v1/lineage/{entity}/{id}/{toEntity}/{toId}", "deleteLineage", lin, "Delete a lineage edge by ids",
		[]any{entityParam("entity"), pathParamSpec("id", "The upstream entity's id.", schemaRef("uuid")),
			entityParam("toEntity"), pathParamSpec("toId", "The downstream entity's id.", schemaRef("uuid"))}, nil,
		responses(obj{"200": resp("The edge was deleted.", nil, "Change")}, 400, 403, 404))
	simple("DELETE", "/v1/lineage/{entity}/name/{fqn}/{toEntity}/name/{toFqn}", "deleteLineageByName", lin,
		"Delete a lineage edge by fully qualified names",
		[]any{entityParam("entity"), pathParamSpec("fqn", "The upstream entity's fully qualified name.", obj{"type": "string", "minLength": 1}),
			entityParam("toEntity"), pathParamSpec("toFqn", "The downstream entity's fully qualified name.", obj{"type": "string", "minLength": 1})}, nil,
		responses(obj{"200": resp("The edge was deleted.", nil, "Change")}, 400, 403, 404))

	// Test case results (quality.go).
	tc := "testCase"
	if k, ok := d.reg.Kind("testCase"); ok {
		tc = d.tag(k.Name, "")
	}
	tcPath := "/v1/dataQuality/testCases"
	resultParams := []any{
		queryParam("startTs", "Only results at or after this time (epoch milliseconds).", obj{"type": "integer", "format": "int64", "minimum": 0}),
		queryParam("endTs", "Only results at or before this time (epoch milliseconds).", obj{"type": "integer", "format": "int64", "minimum": 0}),
	}
	legacyFQN := pathParamSpec("id", "The test case's fully qualified name (this path segment shares its name with the id routes).",
		obj{"type": "string", "minLength": 1})
	fqnParam := pathParamSpec("fqn", "The test case's fully qualified name.", obj{"type": "string", "minLength": 1})
	result := jsonBody("One result of a test case run.", schemaRef("TestCaseResult"), true)
	added := responses(obj{"200": resp("The stored result.", schemaRef("TestCaseResult"), "Change")}, 400, 403, 404, 413)
	listed := responses(obj{"200": resp("The results, newest first.", schemaRef("TestCaseResultList"))}, 400, 403, 404)
	simple("PUT", tcPath+"/{id}/testCaseResult", "putTestCaseResultLegacy", tc, "Add a test case result (OpenMetadata 1.x path)",
		[]any{legacyFQN}, result, added)
	simple("GET", tcPath+"/{id}/testCaseResult", "listTestCaseResultsLegacy", tc, "List a test case's results (OpenMetadata 1.x path)",
		append([]any{legacyFQN}, resultParams...), nil, listed)
	simple("POST", tcPath+"/testCaseResults/{fqn}", "addTestCaseResult", tc, "Add a test case result", []any{fqnParam}, result, added)
	simple("PUT", tcPath+"/testCaseResults/{fqn}", "putTestCaseResult", tc, "Add a test case result (PUT)", []any{fqnParam}, result, added)
	simple("GET", tcPath+"/testCaseResults/{fqn}", "listTestCaseResults", tc, "List a test case's results",
		append([]any{fqnParam}, resultParams...), nil, listed)
}

// --- Names ---------------------------------------------------------------------------

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// plural is the English plural of a kind name: Tables, Glossaries, SearchIndexes.
func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "x"), strings.HasSuffix(s, "s"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	}
	return s + "s"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
