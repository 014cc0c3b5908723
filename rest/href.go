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

// hrefKey and apiPath are how every path href of a JSON answer starts: a key, compactly
// encoded, and the start of an API path. A string value holding these characters would
// have its quotes escaped, so only a key matches.
var hrefKey, apiPath = []byte(`"href":"`), []byte(`/api/`)

// withBase makes the path hrefs of an encoded answer absolute.
func withBase(b []byte, w http.ResponseWriter) []byte {
	hw, ok := w.(*hrefWriter)
	if !ok {
		return b
	}
	return rebase(b, hw.base)
}

// rebase returns b with base put before the path of every href, b itself when it has
// none. It looks for the path's start ("/api/") and then checks the key before it: a
// slash is rare in an answer, while the key's first byte, a quote, starts every key
// and string of it, so a search for the whole key stopped at each.
func rebase(b []byte, base string) []byte {
	var out, abs []byte
	from := 0 // b[:from] is in out, rebased
	for at := 0; ; {
		i := bytes.Index(b[at:], apiPath)
		if i < 0 {
			break
		}
		i += at
		at = i + len(apiPath)
		if i < len(hrefKey) || !bytes.Equal(b[i-len(hrefKey):i], hrefKey) {
			continue
		}
		if out == nil {
			abs = []byte(jsonEscape(base))
			out = make([]byte, 0, len(b)+8*len(abs))
		}
		out = append(append(out, b[from:i]...), abs...)
		from = i
	}
	if out == nil {
		return b
	}
	return append(out, b[from:]...)
}

// jsonEscape escapes a base URL for a JSON string. rpc.BaseURL admits no quote or
// backslash in a host, so this is a safeguard.
func jsonEscape(s string) string {
	b, _ := marshal(s)
	return string(bytes.TrimSuffix(bytes.TrimSpace(b[1:]), []byte(`"`)))
}
