package rest

import (
	"log/slog"
	"net/http"

	"github.com/meridian-catalog/meridian"
)

// bulkResult is OpenMetadata's BulkOperationResult. A successful request is
// {request: the entity's fully qualified name, message: the change it made
// (entityCreated, entityUpdated, entityRestored, entityNoChange)}; a failed one is
// {request: the create request as sent, message: the error message}.
type bulkResult struct {
	DryRun                bool           `json:"dryRun"`
	Status                string         `json:"status"`
	AbortReason           string         `json:"abortReason,omitempty"`
	NumberOfRowsProcessed int            `json:"numberOfRowsProcessed"`
	NumberOfRowsPassed    int            `json:"numberOfRowsPassed"`
	NumberOfRowsFailed    int            `json:"numberOfRowsFailed"`
	SuccessRequest        []bulkResponse `json:"successRequest"`
	FailedRequest         []bulkResponse `json:"failedRequest"`
}

type bulkResponse struct {
	Request any    `json:"request"`
	Message string `json:"message"`
}

// Bulk statuses, as OpenMetadata's basic.json status.
const (
	bulkSuccess        = "success"
	bulkPartialSuccess = "partialSuccess"
	bulkFailure        = "failure"
	bulkAborted        = "aborted"
)

func (s *server) bulk(k *meridian.Kind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		b, err := readBody(r)
		if err != nil {
			return err
		}
		v, err := decodeJSON(b)
		if err != nil {
			return err
		}
		list, ok := v.([]any)
		if !ok {
			return invalid("Invalid request format: a bulk body must be a JSON array of create requests")
		}
		bodies := make([]meridian.Entity, len(list))
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				return invalid("Invalid request format: bulk element %d is not a JSON object", i)
			}
			bodies[i] = m
		}
		items, err := s.ents.BulkCreateOrUpdate(r.Context(), principal(r), k.Name, bodies)
		if items == nil && err != nil {
			return err // refused before anything was written
		}
		out := bulkResult{SuccessRequest: []bulkResponse{}, FailedRequest: []bulkResponse{}}
		for i, it := range items {
			if it.Err != nil {
				out.FailedRequest = append(out.FailedRequest, bulkResponse{Request: bodies[i], Message: s.itemMessage(r, it.Err)})
				continue
			}
			fqn := ""
			if it.Result.Entity != nil {
				fqn = it.Result.Entity.FQN()
			}
			out.SuccessRequest = append(out.SuccessRequest, bulkResponse{Request: fqn, Message: it.Result.Change})
		}
		out.NumberOfRowsProcessed = len(items)
		out.NumberOfRowsPassed = len(out.SuccessRequest)
		out.NumberOfRowsFailed = len(out.FailedRequest)
		switch {
		case err != nil:
			out.Status, out.AbortReason = bulkAborted, s.itemMessage(r, err)
		case out.NumberOfRowsFailed == 0:
			out.Status = bulkSuccess
		case out.NumberOfRowsPassed == 0:
			out.Status = bulkFailure
		default:
			out.Status = bulkPartialSuccess
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// itemMessage is the caller-safe message of one entity's error; a server-side failure
// is logged and answered with a generic message, as writeError does.
func (s *server) itemMessage(r *http.Request, err error) string {
	status, msg := statusOf(err)
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "bulk item failed",
			slog.String("requestId", requestID(r.Context())), slog.String("path", r.URL.Path),
			slog.String("error", err.Error()))
	}
	return msg
}
