package rest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Default bounds of the HTTP server (Limits), and the fixed ones.
const (
	DefaultMaxConnections    = 4096
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	// MaxHeaderBytes bounds a request's line and headers; a larger one is answered 431.
	MaxHeaderBytes = 64 << 10
	// ProbeConnections are kept, beyond MaxConnections, for the probes (/healthz,
	// /readyz, /metrics), so that they answer while the other connections are all busy.
	ProbeConnections = 32
	// MaxWriteStall is the longest a client may leave an answer unread: a write to a
	// connection that does not complete within it closes the connection, so a client
	// that stops reading cannot hold a busy connection forever.
	MaxWriteStall = time.Minute
)

// Limits bound what clients can hold of the HTTP server. A zero field takes its default.
type Limits struct {
	// MaxConnections caps the open client connections. At the cap a new connection
	// replaces the oldest one that has not sent a whole request head yet or sits idle
	// between requests; when every connection is busy with a request, it gets one of the
	// ProbeConnections, which answer only the probes, or else a 503 and is closed.
	MaxConnections int
	// ReadHeaderTimeout bounds the time a client takes to send a request's line and
	// headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time a client takes to send a whole request, body
	// included; a body that is not there in time is answered 408.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends nothing for that long.
	IdleTimeout time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	return l
}

// Server serves Meridian's HTTP handler (the REST API with MCP in front of it) within
// Limits. Beyond the timeouts of net/http it closes a connection, without reading it,
// whose request body the handler did not read (an unauthenticated request is answered
// 401 at once, however slowly its body comes), and it answers every error, including
// the ones net/http writes itself before any handler runs (400, 431, 501, 505), with a
// JSON {code, message} body.
type Server struct {
	srv   *http.Server
	conns *connLimiter
}

// NewServer returns a server for h. log receives net/http's own errors.
func NewServer(h http.Handler, l Limits, log *slog.Logger) *Server {
	l = l.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	conns := newConnLimiter(l.MaxConnections, ProbeConnections)
	return &Server{conns: conns, srv: &http.Server{
		Handler:           probesOnly(closeUnreadBody(jsonErrors(h))),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         conns.connState,
		ConnContext:       withConn,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
}

// Serve accepts connections on ln, within the connection cap, until Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	return s.srv.Serve(&limitListener{Listener: ln, conns: s.conns})
}

// Shutdown stops accepting and waits for the requests in flight, as
// http.Server.Shutdown.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Close closes every connection at once.
func (s *Server) Close() error { return s.srv.Close() }

// isProbe reports whether a path is one of the probes kept answering at the cap.
func isProbe(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics"
}

// probesOnly lets a connection taken from the probe reserve ask only for a probe, and
// closes it after the answer.
func probesOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := connOf(r.Context()); c != nil && c.probe {
			w.Header().Set("Connection", "close")
			if !isProbe(r.URL.Path) {
				w.Header().Set("Retry-After", "1")
				writeJSON(w, http.StatusServiceUnavailable, errorBody{Code: http.StatusServiceUnavailable,
					Message: "The server is at its connection limit; retry later"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// closeUnreadBody closes the connection of a request whose body the handler left
// unread, without reading it: the answer carries Connection: close, and the read
// deadline is moved to now so that net/http does not wait for the rest of the body
// before it closes. A client that sends a body slowly holds a connection only for as
// long as a handler reads it.
func closeUnreadBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body := &trackedBody{ReadCloser: r.Body}
		r = r.WithContext(r.Context()) // a copy: net/http keeps its own view of the body
		r.Body = body
		next.ServeHTTP(&closeIfUnread{ResponseWriter: w, body: body}, r)
		if !body.eof.Load() {
			w.Header().Set("Connection", "close") // when nothing was written yet
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
	})
}

// trackedBody remembers whether a request body was read to its end.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// closeIfUnread adds Connection: close to an answer written before its request body
// was read to the end, so that net/http neither reads nor waits for the rest of it.
type closeIfUnread struct {
	http.ResponseWriter
	body        *trackedBody
	wroteHeader bool
}

func (w *closeIfUnread) WriteHeader(code int) {
	if code >= 200 && !w.wroteHeader {
		w.wroteHeader = true
		if !w.body.eof.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeIfUnread) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client (server-sent events).
func (w *closeIfUnread) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *closeIfUnread) Unwrap() http.ResponseWriter { return w.ResponseWriter }
