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

// openAPI serves the document New built from the route table. A build failure is a
// programming error (the schemas are embedded); it is answered 500 rather than taking
// the whole API down.
func (s *server) openAPI(w http.ResponseWriter, r *http.Request) {
	if s.apiErr != nil {
		s.writeError(w, r, fmt.Errorf("build the OpenAPI document: %w", s.apiErr))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.apiDoc)
}

// buildOpenAPI returns the OpenAPI 3.1 description of the route table, with the kind
// schemas and the REST shapes of schema/api.json as components, as indented JSON.
func buildOpenAPI(reg *meridian.Registry, version string, routes []route) ([]byte, error) {
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
		if len(k.Fields) > 0 {
			d.params[fieldsParamName(k)] = fieldsParamSpec(k)
		}
	}
	for _, rt := range routes {
		d.addRoute(rt)
	}
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

// addRoute describes one row of the route table at its path below /api (e.g.
// /v1/tables), and tags it. Only the catalog API under /api is described, all of it.
func (d *apiDoc) addRoute(rt route) {
	path, underAPI := strings.CutPrefix(rt.path, apiPrefix+"/")
	switch {
	case rt.id == "" && underAPI:
		d.fail("openapi: %s %s has no operation id", rt.method, rt.path)
		return
	case rt.id == "":
		return
	case !underAPI || rt.method == "":
		d.fail("openapi: %s %s is described but is not one operation under %s", rt.method, rt.path, apiPrefix)
		return
	case rt.public && strings.Contains(rt.path, "{"):
		d.fail("openapi: public route %s %s has path parameters", rt.method, rt.path)
		return
	}
	path = "/" + path
	item, _ := d.paths[path].(obj)
	if item == nil {
		item = obj{}
		d.paths[path] = item
	}
	m := strings.ToLower(rt.method)
	if _, dup := item[m]; dup {
		d.fail("openapi: %s %s described twice", rt.method, path)
	}
	if prev, dup := d.opIDs[rt.id]; dup {
		d.fail("openapi: operationId %s used by %s and %s %s", rt.id, prev, rt.method, path)
	}
	d.opIDs[rt.id] = rt.method + " " + path
	item[m] = rt.operation()
	d.tag(rt.tag)
}

// tag adds a tag to the document: a kind's is described by its schema and collection,
// a special family's by familyTags.
func (d *apiDoc) tag(name string) {
	if _, ok := d.tags[name]; ok {
		return
	}
	if k, ok := d.reg.Kind(name); ok && k.Name == name {
		p := apiPrefix + "/v1/" + k.Collection
		desc := k.Name + " entities, served at " + p + "."
		if sch, _ := d.schemas[kindSchemaName(k)].(obj); sch != nil {
			if s, _ := sch["description"].(string); s != "" {
				desc = s + " Served at " + p + "."
			}
		}
		d.tags[name] = desc
		return
	}
	desc, ok := familyTags[name]
	if !ok {
		d.fail("openapi: tag %s has no description", name)
	}
	d.tags[name] = desc
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
	shapes, err := componentSchema(schema.API())
	if err != nil {
		return fmt.Errorf("openapi: api schema: %w", err)
	}
	defs, _ = shapes["$defs"].(obj)
	for name, sch := range defs {
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
				case strings.HasPrefix(s, "kinds/common.json#/$defs/"):
					name = strings.TrimPrefix(s, "kinds/common.json#/$defs/")
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
	413: {"PayloadTooLarge", "The body is larger than 9 MiB."},
	415: {"UnsupportedMediaType", "PATCH takes application/json-patch+json."},
	429: {"TooManyRequests", "Too many requests or jobs are waiting; try again later."},
	406: {"NotAcceptable", "No format the Accept header allows can carry the answer."},
	503: {"ServiceUnavailable", "A component the operation needs is not ready (the knowledge graph is being built)."},
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
func fieldsParam(k *meridian.Kind) []any {
	if len(k.Fields) == 0 {
		return nil
	}
	return []any{paramRef(fieldsParamName(k))}
}

func fieldsParamName(k *meridian.Kind) string { return k.Name + "Fields" }

// fieldsParamSpec is the component fieldsParam refers to.
func fieldsParamSpec(k *meridian.Kind) obj {
	enum := []any{"*"}
	for _, f := range k.Fields {
		enum = append(enum, f)
	}
	return obj{"name": "fields", "in": "query", "style": "form", "explode": false,
		"description": "Optional fields of a " + k.Name + " to include, comma-separated; * for all of them.",
		"schema":      obj{"type": "array", "items": obj{"type": "string", "enum": enum}, "uniqueItems": true}}
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
