package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// decodeBody decodes an optional JSON object body into v; an empty body leaves v as
// it is. Unknown fields are refused.
func decodeBody(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if _, err := decodeJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("Invalid request body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// uuidAndBody reads the UUID path parameter name, then decodes the optional JSON body
// into body as decodeBody does.
func uuidAndBody(r *http.Request, name string, body any) (string, error) {
	id, err := uuidParam(r, name)
	if err != nil {
		return "", err
	}
	return id, decodeBody(r, body)
}

// uuidPair reads the UUID path parameters first and second, in that order.
func uuidPair(r *http.Request, first, second string) (string, string, error) {
	a, err := uuidParam(r, first)
	if err != nil {
		return "", "", err
	}
	b, err := uuidParam(r, second)
	return a, b, err
}
