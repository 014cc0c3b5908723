package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/activity"
	"github.com/meridian-catalog/meridian/collab/audit"
	"github.com/meridian-catalog/meridian/collab/executions"
)

// auditCapture is how much of a write's answer the audit middleware keeps to find the
// entity it wrote (its id and fullyQualifiedName); of a read's 401 it keeps
// auditCaptureRead bytes, enough for its message, and nothing of any other read's.
const (
	auditCapture     = 64 << 10
	auditCaptureRead = 1 << 10
)

// auditWriter remembers an answer's status and the start of its body, or, when the
// answer is an object writeJSON encodes, the id and fullyQualifiedName it names
// (noteAnswer), so that a write's answer need not be kept and read again.
type auditWriter struct {
	http.ResponseWriter
	status  int
	capture int  // bytes of the body to keep
	read    bool // a read, audited only when refused with 401
	body    bytes.Buffer

	noted   bool // noteAnswer saw the answer: id and fqn are its own, the body is not kept
	id, fqn string
}

func (w *auditWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *auditWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body.Len() < w.capture && !w.noted && (!w.read || w.status == http.StatusUnauthorized) {
		w.body.Write(b[:min(len(b), w.capture-w.body.Len())])
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *auditWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a streaming answer's flushes on.
func (w *auditWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// noteAnswer tells the audit middleware, when it wraps w, the id and fullyQualifiedName
// of v, a successful answer about to be written (writeJSON calls it), so that it need
// not keep the encoded answer and read them from it. Only an object answer is noted;
// another answer's body is kept and read as before.
func noteAnswer(w http.ResponseWriter, v any) {
	var m map[string]any
	switch o := v.(type) {
	case meridian.Entity:
		m = o
	case map[string]any:
		m = o
	default:
		return
	}
	for w != nil {
		if aw, ok := w.(*auditWriter); ok {
			aw.noted = true
			aw.id, _ = m["id"].(string)
			aw.fqn, _ = m["fullyQualifiedName"].(string)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// auditRequests records in the audit log every write under /api (any method but GET,
// HEAD and OPTIONS), whatever its outcome, and every authentication failure (401). It
// runs before authenticate, so it sees the 401s, and reads the caller's name from the
// access log's slot, which authenticate fills in. The entry is queued (audit.Writer):
// the request waits for no database write.
func (s *server) auditRequests(next http.Handler) http.Handler {
	if s.audit == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api" && !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		write := !readMethod(r.Method)
		aw := &auditWriter{ResponseWriter: w, capture: auditCaptureRead, read: !write}
		if write {
			aw.capture = auditCapture
		}
		next.ServeHTTP(aw, r)
		status := aw.status
		if status == 0 {
			status = http.StatusOK
		}
		if !write && status != http.StatusUnauthorized {
			return
		}
		e := audit.Entry{Source: audit.SourceREST, Kind: audit.KindWrite, Method: r.Method, Path: r.URL.Path, Status: status,
			RemoteAddr: audit.RemoteAddr(r, s.trustedProxies), RequestID: requestID(r.Context())}
		if u, ok := r.Context().Value(logUserKey{}).(*string); ok {
			e.UserName = *u
		}
		if status == http.StatusUnauthorized {
			e.Kind = audit.KindAuthFailure
		}
		e.EventType = w.Header().Get(ChangeHeader) // the change the write made, if any
		s.auditTarget(r, aw, &e)
		s.audit.Record(e)
	})
}

// auditTarget fills in the entity a request was about: its kind from the route's
// collection, its id or FQN from the path, and the id and FQN the answer names; the
// message of an error answer.
func (s *server) auditTarget(r *http.Request, aw *auditWriter, e *audit.Entry) {
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		pattern := strings.TrimPrefix(rctx.RoutePattern(), apiPrefix+"/v1/")
		best := 0
		for _, k := range s.ents.Registry().Kinds() {
			if (pattern == k.Collection || strings.HasPrefix(pattern, k.Collection+"/")) && len(k.Collection) > best {
				e.EntityType, best = k.Name, len(k.Collection)
			}
		}
		for i, key := range rctx.URLParams.Keys {
			switch key {
			case "id":
				e.EntityID = rctx.URLParams.Values[i]
			case "fqn":
				e.EntityFQN = rctx.URLParams.Values[i]
			}
		}
	}
	var fields map[string]string
	if aw.noted && e.Status < 400 {
		fields = map[string]string{"id": aw.id, "fullyQualifiedName": aw.fqn}
	} else {
		fields = topLevelStrings(aw.body.Bytes(), "id", "fullyQualifiedName", "message")
	}
	if e.Status >= 400 {
		e.Message = fields["message"]
		return
	}
	if v := fields["id"]; v != "" {
		e.EntityID = v
	}
	if v := fields["fullyQualifiedName"]; v != "" {
		e.EntityFQN = v
	}
}

// topLevelStrings reads the string members named by keys at the top level of a JSON
// object, from a body that may be cut short: it stops at the first member it cannot
// read and keeps what it found. Each member's value is read whole by the decoder's
// scanner (json.RawMessage), not token by token: an entity's columns are most of a
// response.
func topLevelStrings(body []byte, keys ...string) map[string]string {
	out := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return out
	}
	for dec.More() && len(out) < len(keys) {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		if key, _ := t.(string); slices.Contains(keys, key) && len(raw) > 0 && raw[0] == '"' {
			var v string
			if json.Unmarshal(raw, &v) == nil {
				out[key] = v
			}
		}
	}
	return out
}

// auditRoutes are /v1/audit/logs and its export.
func (s *server) auditRoutes() []route {
	entry := obj{"type": "object", "properties": obj{
		"id": obj{"type": "string"}, "timestamp": obj{"type": "integer", "format": "int64"},
		"source":   obj{"type": "string", "enum": []any{audit.SourceREST, audit.SourceMCP, audit.SourceEvent}},
		"kind":     obj{"type": "string", "enum": []any{audit.KindWrite, audit.KindAuthFailure, audit.KindChange}},
		"userName": obj{"type": "string"}, "method": obj{"type": "string"},
		"path":       obj{"type": "string", "description": "The REST path, or the MCP tool."},
		"entityType": obj{"type": "string"}, "entityId": obj{"type": "string"}, "entityFullyQualifiedName": obj{"type": "string"},
		"status": obj{"type": "integer"}, "outcome": obj{"type": "string", "enum": []any{audit.OutcomeSuccess, audit.OutcomeFailure}},
		"remoteAddr": obj{"type": "string"}, "requestId": obj{"type": "string"}, "eventType": obj{"type": "string"},
		"message": obj{"type": "string"}}}
	ts := obj{"type": "integer", "format": "int64", "minimum": 0}
	filters := []any{
		queryParam("q", "Text matched anywhere in the entry, case-insensitively (at most 256 bytes).", obj{"type": "string", "maxLength": audit.MaxQuery}),
		queryParam("userName", "Only this user's (or bot's) entries.", obj{"type": "string"}),
		queryParam("entityType", "Only entries about this entity type.", obj{"type": "string"}),
		queryParam("kind", "Only this kind of entry.", obj{"type": "string", "enum": []any{audit.KindWrite, audit.KindAuthFailure, audit.KindChange}}),
		queryParam("source", "Only entries from this source.", obj{"type": "string", "enum": []any{audit.SourceREST, audit.SourceMCP, audit.SourceEvent}}),
		queryParam("startTs", "Only entries at or after this time (epoch ms).", ts),
		queryParam("endTs", "Only entries at or before this time (epoch ms).", ts),
	}
	list := obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": entry}, "paging": obj{"type": "object",
		"properties": obj{"after": obj{"type": "string"}}}}}
	return []route{
		{method: http.MethodGet, path: apiPrefix + "/v1/audit/logs", handler: s.h(s.searchAudit), id: "listAuditLogs", tag: "audit",
			summary:     "Search the audit log",
			description: "Admins only. Every write (REST and MCP, whatever its outcome), every authentication failure and every committed change, newest first. The log is append-only: there is no update or delete.",
			params: cat(filters, []any{queryParam("limit", "Page size.", obj{"type": "integer", "minimum": 0, "maximum": audit.MaxLimit,
				"default": audit.DefaultLimit}), paramRef("after")}),
			responses: responses(obj{"200": resp("A page of entries.", list)}, 400, 403)},
		{method: http.MethodGet, path: apiPrefix + "/v1/audit/logs/export", handler: s.h(s.exportAudit), id: "exportAuditLogs", tag: "audit",
			summary:     "Export the audit log",
			description: "Admins only. Streams every entry the filters select, newest first, as CSV (format=csv, the default) or as one JSON array (format=json).",
			params: cat(filters, []any{queryParam("format", "The export format.", obj{"type": "string", "enum": []any{audit.FormatCSV, audit.FormatJSON},
				"default": audit.FormatCSV})}),
			responses: responses(obj{"200": obj{"description": "The entries.", "content": obj{
				"text/csv":         obj{"schema": obj{"type": "string"}},
				"application/json": obj{"schema": obj{"type": "array", "items": entry}}}}}, 400, 403)},
	}
}

func (s *server) auditQuery(r *http.Request) (audit.Query, error) {
	q := r.URL.Query()
	aq := audit.Query{Text: q.Get("q"), UserName: q.Get("userName"), EntityType: q.Get("entityType"), Kind: q.Get("kind"),
		Source: q.Get("source"), After: q.Get("after")}
	var err error
	if aq.Start, _, err = queryTs(r, "startTs"); err != nil {
		return aq, err
	}
	if aq.End, _, err = queryTs(r, "endTs"); err != nil {
		return aq, err
	}
	if q.Get("limit") != "" {
		if aq.Limit, err = queryLimit(q); err != nil {
			return aq, err
		}
		if aq.Limit == 0 {
			aq.Limit = audit.DefaultLimit
		}
	}
	return aq, nil
}

func (s *server) auditLogService() (*audit.Service, error) {
	if s.auditLog == nil {
		return nil, meridian.Errorf(meridian.EUnavailable, "The audit log is not configured on this server")
	}
	return s.auditLog, nil
}

// auditLogServiceAndQuery is the audit log service and the query of r.
func (s *server) auditLogServiceAndQuery(r *http.Request) (*audit.Service, audit.Query, error) {
	svc, err := s.auditLogService()
	if err != nil {
		return nil, audit.Query{}, err
	}
	q, err := s.auditQuery(r)
	return svc, q, err
}

func (s *server) searchAudit(w http.ResponseWriter, r *http.Request) error {
	svc, q, err := s.auditLogServiceAndQuery(r)
	if err != nil {
		return err
	}
	page, err := svc.Search(r.Context(), principal(r), q)
	if err != nil {
		return err
	}
	pg := map[string]any{}
	if page.After != "" {
		pg["after"] = page.After
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": page.Data, "paging": pg})
	return nil
}

func (s *server) exportAudit(w http.ResponseWriter, r *http.Request) error {
	svc, q, err := s.auditLogServiceAndQuery(r)
	if err != nil {
		return err
	}
	format := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("format")))
	if format == "" {
		format = audit.FormatCSV
	}
	check := q
	if err := svc.CheckExport(principal(r), &check, format); err != nil {
		return err
	}
	if format == audit.FormatCSV {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Content-Disposition", `attachment; filename="audit-log.`+format+`"`)
	w.WriteHeader(http.StatusOK)
	if err := svc.Export(r.Context(), principal(r), q, format, flushWriter{w}); err != nil {
		// The status is sent: the client sees a cut stream; the log says why.
		s.log.ErrorContext(r.Context(), "audit export failed", "requestId", requestID(r.Context()), "error", err.Error())
	}
	return nil
}

// flushWriter sends what a streaming answer has written at each Flush.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(b []byte) (int, error) { return f.w.Write(b) }

func (f flushWriter) Flush() { _ = http.NewResponseController(f.w).Flush() }

// collabAuditRoutes are the activity stream, the audit log and the execution records.
func (s *server) collabAuditRoutes() []route {
	return append(append(s.activityRoutes(), s.auditRoutes()...), s.executionRoutes()...)
}

// defaultCollab builds the collaboration services Config left nil over the engine's
// driver.
func (s *server) defaultCollab() {
	if s.ents == nil {
		return
	}
	if s.auditLog == nil {
		s.auditLog = audit.New(s.ents.Driver())
	}
	if s.activity == nil {
		s.activity = activity.New(s.ents, s.ents.Driver(), activity.Config{})
	}
	if s.executions == nil {
		if svc, err := executions.New(s.ents); err == nil {
			s.executions = svc
		}
	}
}
