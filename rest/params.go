package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Limits of the ?limit= query parameter, as OpenMetadata's @Min(0) @Max(1000000).
const (
	defaultLimit = 10
	maxLimit     = 1000000
)

// pathParam returns a path parameter, unescaped once (chi routes on the escaped path).
func pathParam(r *http.Request, name string) (string, error) {
	raw := chi.URLParam(r, name)
	v, err := url.PathUnescape(raw)
	if err != nil {
		return "", invalid("Invalid path parameter %s: %s", name, raw)
	}
	return v, nil
}

// uuidParam returns a path parameter that must be a UUID, in its canonical form.
func uuidParam(r *http.Request, name string) (string, error) {
	v, err := pathParam(r, name)
	if err != nil {
		return "", err
	}
	return parseUUID(v)
}

// parseUUID checks an id: "Invalid id <x>: must be a UUID".
func parseUUID(v string) (string, error) {
	u, err := uuid.Parse(v)
	if err != nil {
		return "", invalid("Invalid id %s: must be a UUID", v)
	}
	return u.String(), nil
}

// fqnParam returns the {fqn} path parameter. Quotes, dots and escaped characters are
// kept as the client meant them.
func fqnParam(r *http.Request) (string, error) {
	v, err := pathParam(r, "fqn")
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", invalid("Invalid fully qualified name: empty")
	}
	return v, nil
}

// queryLimit parses ?limit=: an integer from 0 to 1000000, 10 when absent.
func queryLimit(q url.Values) (int, error) {
	s := strings.TrimSpace(q.Get("limit"))
	if s == "" {
		return defaultLimit, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && strings.HasPrefix(s, "-"):
		return 0, invalid("[query param limit must be greater than or equal to 0]")
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, invalid("[query param limit must be less than or equal to %d]", maxLimit)
	case err != nil:
		return 0, invalid("[query param limit must be an integer]")
	case n < 0:
		return 0, invalid("[query param limit must be greater than or equal to 0]")
	case n > maxLimit:
		return 0, invalid("[query param limit must be less than or equal to %d]", maxLimit)
	}
	return int(n), nil
}

// queryBool parses a boolean query parameter: true or false (any case), false when
// absent or empty.
func queryBool(q url.Values, name string) (bool, error) {
	s := strings.TrimSpace(q.Get(name))
	switch strings.ToLower(s) {
	case "":
		return false, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalid("[query param %s must be true or false]", name)
}

// queryInclude parses ?include=: all, deleted or non-deleted (the default).
func queryInclude(q url.Values) (store.Include, error) {
	switch s := strings.TrimSpace(q.Get("include")); s {
	case "":
		return store.IncludeNonDeleted, nil
	case string(store.IncludeAll), string(store.IncludeDeleted), string(store.IncludeNonDeleted):
		return store.Include(s), nil
	}
	return "", invalid("[query param include must be one of [all, deleted, non-deleted]]")
}

// getOptions parses ?fields= and ?include= of a read.
func getOptions(r *http.Request) (store.GetOptions, error) {
	q := r.URL.Query()
	inc, err := queryInclude(q)
	if err != nil {
		return store.GetOptions{}, err
	}
	return store.GetOptions{Fields: q.Get("fields"), Include: inc}, nil
}

// deleteOptions parses ?hardDelete= and ?recursive=.
func deleteOptions(r *http.Request) (store.DeleteOptions, error) {
	q := r.URL.Query()
	hard, err := queryBool(q, "hardDelete")
	if err != nil {
		return store.DeleteOptions{}, err
	}
	rec, err := queryBool(q, "recursive")
	if err != nil {
		return store.DeleteOptions{}, err
	}
	return store.DeleteOptions{Hard: hard, Recursive: rec}, nil
}

// readBody reads the whole request body (bounded by limitBody, and in time by the
// server's read timeout). A body larger than the limit is 413, one that did not arrive
// in time 408, one whose client hung up StatusClientClosedRequest, and one that is not
// valid UTF-8 400 naming the field that holds the bad bytes.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, errStatus(http.StatusRequestEntityTooLarge, tooLarge(mbe.Limit))
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, errStatus(http.StatusRequestTimeout, "Request body was not received in time")
		case clientGone(r):
			return nil, errClientClosed
		}
		return nil, invalid("Invalid request format: the body could not be read")
	}
	if err := checkUTF8(b); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeJSON parses a JSON body into any value. Malformed JSON is 400 "Invalid request
// format: …"; so is a body past the document limits on arrays, containers and depth
// (meridian.ScanJSONLimits), which are checked before it is decoded.
func decodeJSON(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, invalid("Invalid request format: the body is empty")
	}
	if err := meridian.ScanJSONLimits(b); err != nil {
		return nil, err
	}
	// segmentio's drop-in codec decodes what encoding/json would, about two and a half
	// times faster; a body it refuses is decoded again by encoding/json, which decides
	// and words the problem (jsonProblem).
	var v any
	if fastjson.Unmarshal(b, &v) == nil {
		return v, nil
	}
	v = nil
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, invalid("Invalid request format: %s", jsonProblem(err))
	}
	return v, nil
}

// jsonProblem describes a JSON syntax error without echoing the body.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error() + " at offset " + strconv.FormatInt(se.Offset, 10)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of JSON input"
	}
	return err.Error()
}

// readObject reads a body that must be one JSON object.
func readObject(r *http.Request) (meridian.Entity, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("Invalid request format: the body must be a JSON object")
	}
	return meridian.Entity(m), nil
}

// requireJSONPatch checks the Content-Type of a PATCH: application/json-patch+json, or
// application/json for clients that cannot set it.
func requireJSONPatch(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json-patch+json" || mt == "application/json") {
		return nil
	}
	return errStatus(http.StatusUnsupportedMediaType,
		"Unsupported Content-Type "+strconv.Quote(ct)+": PATCH takes application/json-patch+json")
}

// readPatch reads a JSON Patch body: a JSON array.
func readPatch(r *http.Request) ([]byte, error) {
	if err := requireJSONPatch(r); err != nil {
		return nil, err
	}
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	if _, ok := v.([]any); !ok {
		return nil, invalid("Invalid request format: a JSON Patch body must be a JSON array of operations")
	}
	return b, nil
}
