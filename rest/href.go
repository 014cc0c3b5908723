package rest

import (
	"bytes"
	"net/http"

	"github.com/meridian-catalog/meridian/rpc"
)

// hrefWriter carries the base URL of a request (scheme://host as the client sees it) to
// writeJSON, which makes the answer's hrefs absolute, as OpenMetadata's are. The store
// keeps hrefs as paths, so one document serves every host it is reached by.
type hrefWriter struct {
	http.ResponseWriter
	base string
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *hrefWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// absoluteHrefs passes the request's base URL on to writeJSON. X-Forwarded-Proto and
// X-Forwarded-Host count only from the trusted proxies (Config.TrustedProxies).
func (s *server) absoluteHrefs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&hrefWriter{ResponseWriter: w, base: rpc.BaseURL(r, s.trustedProxies)}, r)
	})
}

// hrefPath is how every path href of a JSON answer starts: a key, compactly encoded, and
// the start of an API path. A string value holding these characters would have its
// quotes escaped, so only a key matches.
var hrefPath = []byte(`"href":"/api/`)

// withBase makes the path hrefs of an encoded answer absolute.
func withBase(b []byte, w http.ResponseWriter) []byte {
	hw, ok := w.(*hrefWriter)
	if !ok || !bytes.Contains(b, hrefPath) {
		return b
	}
	return bytes.ReplaceAll(b, hrefPath, []byte(`"href":"`+jsonEscape(hw.base)+`/api/`))
}

// jsonEscape escapes a base URL for a JSON string. rpc.BaseURL admits no quote or
// backslash in a host, so this is a safeguard.
func jsonEscape(s string) string {
	b, _ := marshal(s)
	return string(bytes.TrimSuffix(bytes.TrimSpace(b[1:]), []byte(`"`)))
}
