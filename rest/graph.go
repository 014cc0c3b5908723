package rest

import (
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
)

// The knowledge graph over REST: the SPARQL 1.1 protocol at /api/v1/rdf/sparql (GET
// and POST, with content negotiation), one entity's description as Turtle or JSON-LD,
// the ontology, and an admin rebuild.

// completenessHeader carries an answer's completeness (COMPLETE or TRUNCATED).
const completenessHeader = "X-Meridian-Completeness"

// graphRoutes are the knowledge graph's routes.
func (s *server) graphRoutes() []route {
	p := apiPrefix + "/v1/rdf"
	sparqlAnswers := obj{"description": "The answer, in the negotiated format. Completeness is in the " + completenessHeader + " header (and in the JSON body).",
		"headers": obj{completenessHeader: obj{"description": "COMPLETE, or TRUNCATED when rows were left out.", "schema": obj{"type": "string", "enum": []any{"COMPLETE", "TRUNCATED"}}}},
		"content": obj{
			"application/sparql-results+json": obj{"schema": obj{"type": "object"}},
			"application/sparql-results+xml":  obj{"schema": obj{"type": "string"}},
			"text/csv":                        obj{"schema": obj{"type": "string"}},
			"text/tab-separated-values":       obj{"schema": obj{"type": "string"}},
			"text/turtle":                     obj{"schema": obj{"type": "string"}},
			"application/ld+json":             obj{"schema": obj{"type": "object"}},
		}}
	queryParams := []any{
		queryParam("limit", "Most rows (or triples) answered; default the query's LIMIT, else 1000.", obj{"type": "integer", "minimum": 1, "maximum": graph.MaxRows}),
		queryParam("timeout", "Time limit in seconds (default 30).", obj{"type": "integer", "minimum": 1, "maximum": int(graph.MaxTimeout / time.Second)}),
		queryParam("format", "Answer format, overriding Accept: json, xml, csv, tsv, turtle, jsonld or ntriples.", obj{"type": "string"}),
		queryParam("includeDeleted", "Admins only: include soft-deleted entities.", obj{"type": "boolean", "default": false}),
	}
	desc := "The SPARQL 1.1 protocol, read-only and bounded, for every authenticated caller: SELECT, ASK, CONSTRUCT and DESCRIBE; " +
		"no update, SERVICE, FROM or GRAPH (checked at every nesting level). Errors are {code, message} with the message " +
		"starting with a stable code: QUERY_INVALID, QUERY_FORM_NOT_ALLOWED, GRAPH_SELECTION_NOT_ALLOWED, QUERY_LIMIT_EXCEEDED, " +
		"EXECUTION_TIMEOUT, QUERY_WORK_EXCEEDED (400), EXECUTION_CAPACITY_EXHAUSTED (429), GRAPH_UNAVAILABLE (503)."
	return []route{
		{method: http.MethodGet, path: p + "/sparql", handler: s.h(s.sparqlGet), id: "sparqlQuery", tag: "rdf",
			summary: "Run a SPARQL query (GET)", description: desc,
			params:    append([]any{queryParam("query", "The SPARQL query (at most 100000 characters).", obj{"type": "string"})}, queryParams...),
			responses: responses(obj{"200": sparqlAnswers}, 400, 403, 406, 429, 503)},
		{method: http.MethodPost, path: p + "/sparql", handler: s.h(s.sparqlPost), id: "sparqlQueryPost", tag: "rdf",
			summary: "Run a SPARQL query (POST)", description: desc, reads: true, params: queryParams,
			body: obj{"required": true, "description": "The query: the body itself (application/sparql-query) or the form field query (application/x-www-form-urlencoded).",
				"content": obj{
					"application/sparql-query":          obj{"schema": obj{"type": "string"}},
					"application/x-www-form-urlencoded": obj{"schema": obj{"type": "object", "properties": obj{"query": obj{"type": "string"}}}},
				}},
			responses: responses(obj{"200": sparqlAnswers}, 400, 403, 406, 413, 415, 429, 503)},
		{method: http.MethodGet, path: p + "/entity/{type}/{id}", handler: s.h(s.entityRDF), id: "getEntityRdf", tag: "rdf",
			summary:     "Get an entity's RDF description",
			description: "The entity's triples and its columns', as Turtle (text/turtle, the default) or JSON-LD (application/ld+json).",
			params: []any{pathParamSpec("type", "The entity type (table, glossaryTerm, …).", obj{"type": "string"}),
				pathParamSpec("id", "The entity's id.", schemaRef("uuid")),
				queryParam("includeDeleted", "Admins only: describe a soft-deleted entity.", obj{"type": "boolean", "default": false})},
			responses: responses(obj{"200": obj{"description": "The description.", "content": obj{
				"text/turtle": obj{"schema": obj{"type": "string"}}, "application/ld+json": obj{"schema": obj{"type": "object"}}}}},
				400, 403, 404, 406, 429, 503)},
		{method: http.MethodGet, path: p + "/ontology", handler: s.h(s.ontology), id: "getOntology", tag: "rdf",
			summary: "Get the Meridian ontology", description: "The classes and properties of the projection, in Turtle, for every authenticated caller.",
			responses: responses(obj{"200": obj{"description": "The ontology.", "content": obj{"text/turtle": obj{"schema": obj{"type": "string"}}}}}, 403)},
		{method: http.MethodPost, path: p + "/rebuild", handler: s.h(s.rebuildGraph), id: "rebuildGraph", tag: "rdf",
			summary:     "Rebuild the knowledge graph",
			description: "Admins only. Starts the durable job graph.rebuild, which projects the whole catalog again; follow it at /api/v1/jobs/{id}.",
			responses:   responses(obj{"202": resp("The job.", obj{"type": "object", "properties": obj{"jobId": obj{"type": "string"}}})}, 403, 429)},
	}
}

// graphService returns the knowledge graph, or the error of a server without one.
func (s *server) graphService() (*graph.Service, error) {
	if s.graph == nil {
		return nil, meridian.Errorf(meridian.EUnavailable, "The knowledge graph is not configured on this server")
	}
	return s.graph, nil
}

func (s *server) sparqlGet(w http.ResponseWriter, r *http.Request) error {
	return s.sparql(w, r, r.URL.Query().Get("query"), r.URL.Query())
}

func (s *server) sparqlPost(w http.ResponseWriter, r *http.Request) error {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return errStatus(http.StatusUnsupportedMediaType, "Send the query as application/sparql-query or application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, graph.MaxQueryBytes*3+1))
	if err != nil {
		return errStatus(http.StatusRequestEntityTooLarge, tooLarge(MaxBodyBytes))
	}
	if len(body) > graph.MaxQueryBytes*3 {
		return graph.Errorf(graph.CodeLimitExceeded, "the request body is longer than %d bytes", graph.MaxQueryBytes*3)
	}
	params := r.URL.Query()
	switch ct {
	case "application/sparql-query":
		return s.sparql(w, r, string(body), params)
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return invalid("The form body does not parse: %s", err.Error())
		}
		if form.Has("update") {
			return graph.Errorf(graph.CodeFormNotAllowed, "SPARQL Update is not accepted here")
		}
		for k, v := range form {
			if k != "query" && !params.Has(k) {
				params[k] = v
			}
		}
		return s.sparql(w, r, form.Get("query"), params)
	case "application/sparql-update":
		return graph.Errorf(graph.CodeFormNotAllowed, "SPARQL Update is not accepted here")
	}
	return errStatus(http.StatusUnsupportedMediaType, "Send the query as application/sparql-query or application/x-www-form-urlencoded")
}

// sparql runs one protocol request.
func (s *server) sparql(w http.ResponseWriter, r *http.Request, query string, params url.Values) error {
	g, err := s.graphService()
	if err != nil {
		return err
	}
	if params.Has("default-graph-uri") || params.Has("named-graph-uri") {
		return graph.Errorf(graph.CodeGraphSelection, "default-graph-uri and named-graph-uri select a dataset; queries run over the catalog graph only")
	}
	if strings.TrimSpace(query) == "" {
		return graph.Errorf(graph.CodeQueryInvalid, "the query parameter is required")
	}
	req := graph.Request{Query: query}
	if v := params.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return graph.Errorf(graph.CodeLimitExceeded, "limit must be an integer between 1 and %d", graph.MaxRows)
		}
		req.Limit = n
	}
	if v := params.Get("timeout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || time.Duration(n)*time.Second > graph.MaxTimeout {
			return graph.Errorf(graph.CodeLimitExceeded, "timeout must be a number of seconds between 1 and %d", int(graph.MaxTimeout/time.Second))
		}
		req.Timeout = time.Duration(n) * time.Second
	}
	if req.IncludeDeleted, err = boolParam(params, "includeDeleted"); err != nil {
		return err
	}
	c, err := graph.Check(query)
	if err != nil {
		return err
	}
	format, err := negotiate(r.Header.Get("Accept"), params.Get("format"), c.Form)
	if err != nil {
		return err
	}
	req.Format = format
	ans, err := g.Query(r.Context(), principal(r), req)
	if err != nil {
		if graph.GraphCode(err) == graph.CodeCapacity {
			w.Header().Set("Retry-After", "1")
		}
		return err
	}
	w.Header().Set("Content-Type", ans.ContentType)
	w.Header().Set("Vary", "Accept")
	w.Header().Set(completenessHeader, string(ans.Completeness))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ans.Body)
	return nil
}

func boolParam(params url.Values, name string) (bool, error) {
	v := params.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, invalid("%s must be true or false", name)
	}
	return b, nil
}

// mediaFormats maps media types to answer formats.
var mediaFormats = map[string]graph.Format{
	"application/sparql-results+json": graph.FormatJSON, "application/json": graph.FormatJSON,
	"application/sparql-results+xml": graph.FormatXML, "application/xml": graph.FormatXML, "text/xml": graph.FormatXML,
	"text/csv": graph.FormatCSV, "text/tab-separated-values": graph.FormatTSV,
	"text/turtle": graph.FormatTurtle, "application/x-turtle": graph.FormatTurtle,
	"application/ld+json": graph.FormatJSONLD, "application/n-triples": graph.FormatNTriple,
}

// negotiate picks the answer format: the format parameter when given, else the
// acceptable media type of highest quality that can carry the form, else the form's
// default (JSON results, or Turtle for graphs). Errors: FORMAT_NOT_SUPPORTED, 406.
func negotiate(accept, param string, form graph.Form) (graph.Format, error) {
	graphForm := form == graph.FormConstruct || form == graph.FormDescribe
	if param != "" {
		return graph.ParseFormat(param)
	}
	def := graph.FormatJSON
	if graphForm {
		def = graph.FormatTurtle
	}
	if strings.TrimSpace(accept) == "" {
		return def, nil
	}
	type choice struct {
		f     graph.Format
		q     float64
		order int
	}
	var choices []choice
	wildcard := false
	for i, part := range strings.Split(accept, ",") {
		mt, ps, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := ps["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				q = 0
			}
		}
		if q <= 0 {
			continue
		}
		if mt == "*/*" || mt == "application/*" || mt == "text/*" {
			wildcard = true
			continue
		}
		if f, ok := mediaFormats[mt]; ok && formFits(f, form) {
			choices = append(choices, choice{f, q, i})
		}
	}
	if len(choices) > 0 {
		sort.SliceStable(choices, func(i, j int) bool { return choices[i].q > choices[j].q })
		return choices[0].f, nil
	}
	if wildcard {
		return def, nil
	}
	return "", errStatus(http.StatusNotAcceptable, "No acceptable format for a "+string(form)+" answer: ask for "+acceptable(form))
}

// formFits reports whether a format can carry the form's answer.
func formFits(f graph.Format, form graph.Form) bool {
	graphForm := form == graph.FormConstruct || form == graph.FormDescribe
	switch f {
	case graph.FormatTurtle, graph.FormatJSONLD, graph.FormatNTriple:
		return graphForm
	case graph.FormatXML:
		return !graphForm
	}
	return true
}

func acceptable(form graph.Form) string {
	if form == graph.FormConstruct || form == graph.FormDescribe {
		return "text/turtle, application/ld+json, application/n-triples, text/csv or text/tab-separated-values"
	}
	return "application/sparql-results+json, application/sparql-results+xml, text/csv or text/tab-separated-values"
}

func (s *server) entityRDF(w http.ResponseWriter, r *http.Request) error {
	g, err := s.graphService()
	if err != nil {
		return err
	}
	kind, id := chi.URLParam(r, "type"), chi.URLParam(r, "id")
	if _, ok := s.ents.Registry().Kind(kind); !ok {
		return meridian.Errorf(meridian.ENotFound, "Unknown entity type %s", kind)
	}
	includeDeleted, err := boolParam(r.URL.Query(), "includeDeleted")
	if err != nil {
		return err
	}
	format, err := negotiate(r.Header.Get("Accept"), r.URL.Query().Get("format"), graph.FormDescribe)
	if err != nil {
		return err
	}
	if format != graph.FormatJSONLD && format != graph.FormatNTriple {
		format = graph.FormatTurtle
	}
	ts, comp, err := g.EntityTriples(r.Context(), principal(r), kind, id, includeDeleted)
	if err != nil {
		return err
	}
	body, comp2, err := graph.Encode(&graph.Result{Form: graph.FormDescribe, Triples: ts, Completeness: comp}, format, 0)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", graph.ContentType(format, graph.FormDescribe))
	w.Header().Set("Vary", "Accept")
	w.Header().Set(completenessHeader, string(comp2))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

func (s *server) ontology(w http.ResponseWriter, r *http.Request) error {
	g, err := s.graphService()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/turtle; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, g.OntologyTurtle())
	return nil
}

func (s *server) rebuildGraph(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "Only admins may rebuild the knowledge graph")
	}
	if s.graphRebuild == nil {
		return meridian.Errorf(meridian.EUnavailable, "The knowledge graph is not configured on this server")
	}
	id, err := s.graphRebuild(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"jobId": id})
	return nil
}
