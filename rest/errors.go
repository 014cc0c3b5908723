package rest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/meridian-catalog/meridian"
)

// statusError is an HTTP-level failure that has no application error code: an unknown
// path (404), a wrong method (405), an oversized body (413) or a wrong content type
// (415). Application errors are *meridian.Error values.
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string { return e.message }

// errStatus returns an HTTP-level error with a status and a message.
func errStatus(status int, message string) error {
	return &statusError{status: status, message: message}
}

// invalid returns an EInvalid application error.
func invalid(format string, args ...any) error {
	return meridian.Errorf(meridian.EInvalid, format, args...)
}

// errorBody is the body of every error answer, as OpenMetadata's ErrorMessage.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// StatusClientClosedRequest is the status logged and counted for a request whose client
// hung up before it was answered, as nginx and OpenMetadata count it; it is never seen
// by that client.
const StatusClientClosedRequest = 499

// errClientClosed is the failure of a request whose client went away.
var errClientClosed = errStatus(StatusClientClosedRequest, "Client closed request")

// clientGone reports whether the client of r hung up (its context was cancelled by the
// server because the connection closed), as opposed to a server-side failure.
func clientGone(r *http.Request) bool {
	return errors.Is(r.Context().Err(), context.Canceled)
}

// writeError is the one error writer: it maps any error to its HTTP status and writes
// {code, message}. Errors that are not application errors are logged with the request
// id and answered with a generic message. A failure caused by the client hanging up is
// StatusClientClosedRequest, not a server error.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, message := statusOf(err)
	if status >= 500 && clientGone(r) {
		status, message = StatusClientClosedRequest, errClientClosed.Error()
	}
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed",
			slog.String("requestId", requestID(r.Context())),
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.String("error", err.Error()))
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	writeJSON(w, status, errorBody{Code: status, Message: message})
}

// statusOf returns the HTTP status and the caller-safe message of an error.
func statusOf(err error) (int, string) {
	var se *statusError
	if errors.As(err, &se) {
		return se.status, se.message
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, tooLarge(mbe.Limit)
	}
	code := meridian.ErrorCode(err)
	status := meridian.HTTPStatus(code)
	if status < 400 { // a nil error never reaches here; be safe anyway
		status = http.StatusInternalServerError
	}
	msg := meridian.ErrorMessage(err)
	if status >= 500 && code != meridian.EInternal && code != meridian.EUnavailable {
		msg = "Internal error"
	}
	return status, msg
}

// writeJSON writes v as the JSON answer with the given status, its hrefs absolute.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err == nil && status < 400 {
		noteAnswer(w, v)
	}
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"code":500,"message":"Internal error"}`)
	}
	writeBody(w, status, withBase(b, w))
}

// writeBody writes b, a whole JSON answer, with the given status and its length: an
// answer of more than 2 KB without one went out in chunks.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// marshal encodes v without HTML escaping, as OpenMetadata's Jackson does, with
// segmentio's drop-in codec: the bytes encoding/json would write, about three times
// faster.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := fastjson.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
