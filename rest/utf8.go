package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
)

// checkUTF8 refuses a body that is not valid UTF-8 with a 400 that names the field
// holding the first bad bytes. encoding/json would silently replace them with U+FFFD,
// so a name could be stored that is not the one the client sent.
func checkUTF8(b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	bad := meridian.InvalidUTF8Offset(b)
	if field := jsonFieldAt(b, bad); field != "" {
		return invalid("%s must be valid UTF-8", field)
	}
	return invalid("Invalid request format: the body is not valid UTF-8 (byte offset %d)", bad)
}

// jsonLevel is one open object or array while walking a JSON document.
type jsonLevel struct {
	object  bool
	wantKey bool   // an object's next string is a key
	key     string // the object's current member
	index   int    // the array's current element
}

// jsonFieldAt is the path (name, columns[0].name) of the JSON value or key that holds
// byte offset off of doc, or "" when doc is not JSON up to there or the offset is at
// the top level.
func jsonFieldAt(doc []byte, off int) string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var stack []jsonLevel
	next := func() { // one value of the innermost container is complete
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		n := len(stack)
		isKey := n > 0 && stack[n-1].object && stack[n-1].wantKey
		if isKey {
			stack[n-1].key, _ = tok.(string)
			stack[n-1].wantKey = false
		}
		if int(dec.InputOffset()) > off {
			return jsonPath(stack)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, jsonLevel{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:n-1]
			next()
		default:
			if !isKey {
				next()
			}
		}
	}
}

// jsonPath renders the open containers as a field path: a.b[2].c.
func jsonPath(stack []jsonLevel) string {
	var sb strings.Builder
	for _, l := range stack {
		if l.object {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(l.key)
		} else {
			sb.WriteString("[" + strconv.Itoa(l.index) + "]")
		}
	}
	return sb.String()
}

// refuseNUL answers 400 to a request whose path or query holds a NUL character
// (%00). No name, FQN, id or filter value may hold one, and PostgreSQL's text cannot,
// so such a request can match nothing; refusing it here, once, keeps every handler and
// both drivers from meeting it (on PostgreSQL a list filter holding one was a 500).
func (s *server) refuseNUL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.ContainsRune(r.URL.Path, 0) || strings.Contains(r.URL.EscapedPath(), "%00") ||
			strings.Contains(r.URL.RawQuery, "%00") || strings.ContainsRune(r.URL.RawQuery, 0) {
			s.writeError(w, r, invalid("The request's path and query must not hold a NUL character (%%00)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
