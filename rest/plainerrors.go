package rest

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonErrors turns a plain-text error answer of a handler (http.Error, http.NotFound,
// the MCP library's own refusals) into the {code, message} JSON body every error has.
// Other answers pass through untouched.
func jsonErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jw := &jsonErrorWriter{ResponseWriter: w}
		next.ServeHTTP(jw, r)
		jw.finish()
	})
}

// maxPlainErrorBytes bounds the plain-text message kept from a handler's error answer.
const maxPlainErrorBytes = 1024

// jsonErrorWriter holds back an error answer whose body is not JSON, and writes it as
// {code, message} when the handler is done.
type jsonErrorWriter struct {
	http.ResponseWriter
	wroteHeader bool
	held        int // the status held back, 0 when the answer passes through
	text        []byte
}

func (w *jsonErrorWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if code < 200 { // informational: pass it on, the real status follows
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.wroteHeader = true
	if code >= 400 && !isJSON(w.Header().Get("Content-Type")) {
		w.held = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.held != 0 {
		if room := maxPlainErrorBytes - len(w.text); room > 0 {
			w.text = append(w.text, b[:min(room, len(b))]...)
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client, except a held-back error.
func (w *jsonErrorWriter) Flush() {
	if w.held == 0 && w.wroteHeader {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held-back error as JSON, with the handler's text as its message.
func (w *jsonErrorWriter) finish() {
	if w.held == 0 {
		return
	}
	msg := strings.TrimSpace(string(w.text))
	if msg == "" || !utf8.ValidString(msg) {
		msg = http.StatusText(w.held)
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options")
	writeJSON(w.ResponseWriter, w.held, errorBody{Code: w.held, Message: msg})
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// net/http answers a request it cannot parse itself, before any handler, by writing a
// fixed plain-text answer on the connection in one write: "HTTP/1.1 <status>" followed
// by plainErrorHeaders and a short text (400 for a malformed request, 431 for headers
// beyond MaxHeaderBytes, 501 for an unknown transfer coding, 505 for an unsupported
// protocol version). It has no hook for their bodies, so the connection rewrites them
// (rewritePlainError) into the same answers with a JSON {code, message} body.
const plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// expectationFailed is the head of net/http's empty 417 answer to an Expect header it
// does not support, also written before any handler.
const expectationFailed = "HTTP/1.1 417 Expectation Failed\r\n"

// rewritePlainError returns the JSON version of one of net/http's own plain-text error
// answers, or nil when b is not one.
func rewritePlainError(b []byte) []byte {
	var status int
	var message string
	switch {
	case bytes.HasPrefix(b, []byte(expectationFailed)) && bytes.HasSuffix(b, []byte("\r\n\r\n")):
		status, message = http.StatusExpectationFailed, "Expectation Failed: only Expect: 100-continue is supported"
	case bytes.HasPrefix(b, []byte("HTTP/1.1 ")):
		rest := b[len("HTTP/1.1 "):]
		eol := bytes.IndexByte(rest, '\r')
		if eol < 3 || !bytes.HasPrefix(rest[eol:], []byte(plainErrorHeaders)) {
			return nil
		}
		text := rest[eol+len(plainErrorHeaders):]
		code, err := strconv.Atoi(string(rest[:3]))
		if err != nil || code < 400 || code > 599 {
			return nil
		}
		status = code
		message = strings.TrimSpace(string(text))
		if rest, ok := strings.CutPrefix(message, strconv.Itoa(code)+" "); ok {
			message = rest // "400 Bad Request: missing required Host header"
		}
		if code == http.StatusRequestHeaderFieldsTooLarge {
			message = fmt.Sprintf("Request Header Fields Too Large: the request line and headers are limited to %d bytes", MaxHeaderBytes)
		}
		if message == "" || !utf8.ValidString(message) {
			message = http.StatusText(code)
		}
	default:
		return nil
	}
	body, _ := marshal(errorBody{Code: status, Message: message})
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}
