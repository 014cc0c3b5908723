package rest

import (
	"net/http"
	"strings"

	"github.com/meridian-catalog/meridian/billing"
)

// Headers a REST client may send to attribute its spend.
const (
	headerConversation = "X-Meridian-Conversation-Id"
	headerAgent        = "X-Meridian-Agent"
	// headerClient "ui" marks the requests of the web UI (source UI instead of REST).
	headerClient = "X-Meridian-Client"
)

// meterRoute wraps the handler of a metered operation (billing.PriceTable.Operations):
// the call is admitted against the credit budgets before it runs (429 naming the
// ceiling when refused) and recorded when it ends; a 4xx or 5xx answer is recorded as
// a failure that costs nothing.
func (s *server) meterRoute(id string, next http.Handler) http.Handler {
	feature, ok := s.billing.Prices().Operation(id)
	if !ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := billing.Attribution{Principal: principal(r), App: billing.AppREST,
			Conversation: r.Header.Get(headerConversation), Agent: r.Header.Get(headerAgent)}
		if strings.EqualFold(r.Header.Get(headerClient), "ui") {
			a.App = billing.AppUI
		}
		ctx := billing.WithAttribution(r.Context(), a)
		resv, err := s.billing.Reserve(ctx, feature, id, 1, nil)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() { resv.Done(sw.status >= 400) }()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// statusWriter remembers the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
