package rest

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store/jobs"
)

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
