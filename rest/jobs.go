package rest

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// jobRoutes serves GET /v1/jobs/{id}: an asynchronous job (an async delete, …) to the
// principal that started it and to admins. Anyone else gets 404, as for a job that does
// not exist, so that job ids reveal nothing.
func (s *server) jobRoutes(r chi.Router) {
	r.Get("/api/v1/jobs/{id}", s.h(s.getJob))
}

// jobView is a job as the API answers it. A failed job's error has the {code, message}
// shape of an error answer.
type jobView struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Status    string          `json:"status"`
	Progress  int             `json:"progress"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *errorBody      `json:"error,omitempty"`
	CreatedBy jobPrincipal    `json:"createdBy"`
	Attempts  int             `json:"attempts"`
	CreatedAt int64           `json:"createdAt"`
	UpdatedAt int64           `json:"updatedAt"`
}

type jobPrincipal struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
}

func (s *server) getJob(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if s.jobs == nil {
		return meridian.Errorf(meridian.ENotFound, "Job %s not found", id)
	}
	j, err := s.jobs.Get(r.Context(), principal(r), id)
	if err != nil {
		return err
	}
	v := jobView{ID: j.ID, Type: j.Type, Status: j.Status, Progress: j.Progress, Result: j.Result,
		CreatedBy: jobPrincipal(j.Principal), Attempts: j.Attempts, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt}
	if j.Status == jobs.StatusFailed {
		v.Error = &errorBody{Code: meridian.HTTPStatus(j.ErrorCode), Message: j.Error}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// addJobRoutes describes jobRoutes and the Job answer in the OpenAPI document.
func (d *apiDoc) addJobRoutes() {
	str := obj{"type": "string"}
	d.schemas["Job"] = obj{"type": "object", "description": "A durable asynchronous job.",
		"required": []any{"id", "type", "status", "progress", "createdBy", "attempts", "createdAt", "updatedAt"},
		"properties": obj{
			"id":       schemaRef("uuid"),
			"type":     obj{"type": "string", "description": "What the job does: entity.delete, …"},
			"status":   obj{"type": "string", "enum": []any{jobs.StatusPending, jobs.StatusRunning, jobs.StatusCompleted, jobs.StatusFailed}},
			"progress": obj{"type": "integer", "minimum": 0, "maximum": 100, "description": "Percent done."},
			"result":   obj{"description": "A completed job's result; for entity.delete, the deleted entity's type, id and name."},
			"error": obj{"description": "A failed job's error, for example an interruption by a restart.",
				"allOf": []any{schemaRef("Error")}},
			"createdBy": obj{"type": "object", "required": []any{"name"},
				"properties": obj{"id": str, "name": str}, "description": "The principal that started the job."},
			"attempts":  obj{"type": "integer", "description": "1, plus one for each resumption after a restart."},
			"createdAt": obj{"type": "integer", "format": "int64", "description": "Epoch milliseconds."},
			"updatedAt": obj{"type": "integer", "format": "int64", "description": "Epoch milliseconds."},
		}}
	d.add("GET", "/v1/jobs/{id}", obj{"operationId": "getJob", "summary": "Get an asynchronous job",
		"description": "Shown to the principal that started the job and to admins; anyone else gets 404.",
		"tags":        []any{d.tag("jobs", "Durable asynchronous jobs (async deletes, …).")},
		"parameters":  []any{pathParamSpec("id", "The job's id.", schemaRef("uuid"))},
		"responses":   responses(obj{"200": resp("The job.", schemaRef("Job"))}, 400, 403, 404)})
}
