package rest

import "net/http"

// respond ends a handler that called one service method: it returns err when there is
// one, and otherwise writes v as JSON with status.
func respond(w http.ResponseWriter, status int, v any, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}
