package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/server"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/audit"
)

// Paths of the HTTP transport.
const (
	// Path is the MCP endpoint; AliasPath serves the same, under /api.
	Path      = "/mcp"
	AliasPath = "/api/mcp"
	// MetadataPath is the RFC 9728 protected-resource metadata of the server; the
	// metadata of each endpoint is at MetadataPath + its path.
	MetadataPath = server.WellKnownProtectedResourcePath
)

// maxBodyBytes bounds an MCP request body: the largest document plus room for the
// JSON-RPC envelope, as for REST.
const maxBodyBytes = meridian.MaxDocumentBytes + 1<<20

// HTTP serves MCP over stateless streamable HTTP with Bearer JWT authentication and
// Origin validation, and the RFC 9728 metadata documents.
type HTTP struct {
	cfg     Config
	mcp     *server.StreamableHTTPServer
	clients *clientInfos
}

// NewHTTP returns the HTTP transport. Mount it with Mount, or serve the endpoint
// itself (ServeHTTP) and the metadata (Metadata) on routes of your own.
func NewHTTP(c Config) *HTTP {
	s := NewServer(c)
	return &HTTP{cfg: c, clients: newClientInfos(), mcp: server.NewStreamableHTTPServer(s,
		server.WithStateLess(true),
		server.WithDisableLocalhostProtection(c.DisableLocalhostProtection),
		server.WithStreamableHTTPLogger(c.logger()),
	)}
}

// Mount registers the endpoint at /mcp and /api/mcp and the metadata at
// /.well-known/oauth-protected-resource, …/mcp and …/api/mcp.
func (h *HTTP) Mount(mux *http.ServeMux) {
	mux.Handle(Path, h)
	mux.Handle(AliasPath, h)
	meta := h.Metadata()
	mux.Handle(MetadataPath, meta)
	mux.Handle(MetadataPath+Path, meta)
	mux.Handle(MetadataPath+AliasPath, meta)
}

// ServeHTTP serves the MCP endpoint: Origin check (403), CORS preflight, Bearer
// authentication (401 with a WWW-Authenticate header naming the metadata document),
// then the MCP exchange with the principal in the context.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !h.originAllowed(r, origin) {
			writeError(w, http.StatusForbidden, "Forbidden: origin "+origin+" is not allowed")
			return
		}
		cors(w, origin)
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	p, err := h.authenticate(r)
	if err != nil {
		challenge := fmt.Sprintf(`Bearer resource_metadata="%s"`, h.baseURL(r)+MetadataPath+endpointPath(r))
		if r.Header.Get("Authorization") != "" {
			challenge = fmt.Sprintf(`Bearer error="invalid_token", error_description="%s", resource_metadata="%s"`,
				strings.ReplaceAll(meridian.ErrorMessage(err), `"`, `'`), h.baseURL(r)+MetadataPath+endpointPath(r))
		}
		w.Header().Set("WWW-Authenticate", challenge)
		status := meridian.HTTPStatus(meridian.ErrorCode(err))
		h.cfg.Audit.Record(audit.Entry{Source: audit.SourceMCP, Kind: audit.KindAuthFailure, Method: r.Method,
			Path: r.URL.Path, Status: status, RemoteAddr: audit.RemoteAddr(r, h.cfg.TrustedProxies),
			RequestID: r.Header.Get("X-Request-ID"), Message: meridian.ErrorMessage(err)})
		if status != http.StatusUnauthorized {
			h.cfg.logger().ErrorContext(r.Context(), "mcp authentication failed", "error", err.Error())
		}
		writeError(w, status, meridian.ErrorMessage(err))
		return
	}
	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = readBody(w, r); !ok {
			return
		}
	}
	ctx := context.WithValue(meridian.WithPrincipal(r.Context(), p), httpClientKey{}, h.clients.of(r, p, body))
	ctx = audit.WithRequest(ctx, audit.Request{RemoteAddr: audit.RemoteAddr(r, h.cfg.TrustedProxies), RequestID: r.Header.Get("X-Request-ID")})
	h.mcp.ServeHTTP(w, r.WithContext(ctx))
}

// readBody reads a POST body whole and puts it back on r for the MCP library, which
// would answer any failure to read it 400 with a JSON-RPC parse error. A body larger
// than maxBodyBytes is 413, one that did not arrive in time 408, and one that is not
// valid UTF-8 (which encoding/json would silently replace with U+FFFD) 400. It returns
// the body and whether the request may go on; when not, the answer has been written.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > maxBodyBytes { // refuse before reading a byte of it
		w.Header().Set("Connection", "close")
		writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpcInvalidRequest, tooLarge())
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpcInvalidRequest, tooLarge())
		return nil, false
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeRPCError(w, http.StatusRequestTimeout, jsonrpcInvalidRequest, "Request body was not received in time")
		return nil, false
	case err != nil:
		writeRPCError(w, http.StatusBadRequest, jsonrpcParseError, "Parse error: the request body could not be read")
		return nil, false
	case !utf8.Valid(body):
		writeRPCError(w, http.StatusBadRequest, jsonrpcParseError,
			fmt.Sprintf("Parse error: the request body is not valid UTF-8 (byte offset %d)", meridian.InvalidUTF8Offset(body)))
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

func tooLarge() string {
	return fmt.Sprintf("Request body is larger than %d bytes", maxBodyBytes)
}

// authenticate verifies the Bearer token. Errors are EUnauthorized, or the store's
// failure.
func (h *HTTP) authenticate(r *http.Request) (*meridian.Principal, error) {
	hdr := strings.TrimSpace(r.Header.Get("Authorization"))
	if hdr == "" {
		return nil, meridian.Errorf(meridian.EUnauthorized, "Not authorized: missing Authorization header")
	}
	scheme, raw, ok := strings.Cut(hdr, " ")
	raw = strings.TrimSpace(raw)
	if !ok || !strings.EqualFold(scheme, "Bearer") || raw == "" {
		return nil, meridian.Errorf(meridian.EUnauthorized, "Not authorized: the Authorization header must be 'Bearer <token>'")
	}
	if h.cfg.Auth == nil {
		return nil, meridian.Errorf(meridian.EUnauthorized, "Not authorized: no token authority is configured")
	}
	p, err := h.cfg.Auth.Verify(r.Context(), raw)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, meridian.Errorf(meridian.EUnauthorized, "Not authorized: invalid token")
	}
	return p, nil
}

// originAllowed accepts the server's own host, localhost and the configured origins. A
// request without Origin (not from a browser) never gets here.
func (h *HTTP) originAllowed(r *http.Request, origin string) bool {
	for _, o := range h.cfg.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // includes the opaque origin "null"
	}
	switch strings.ToLower(u.Hostname()) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return strings.EqualFold(u.Host, h.requestHost(r)) || strings.EqualFold(u.Host, r.Host)
}

// cors answers an allowed cross-origin browser request.
func cors(w http.ResponseWriter, origin string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
	h.Set("Access-Control-Max-Age", "600")
}

// Metadata serves the RFC 9728 protected-resource metadata. The resource is the
// absolute URL of the endpoint the path names (/mcp for the bare path), computed from
// the request, and X-Forwarded-Proto/-Host when a trusted proxy sent it.
func (h *HTTP) Metadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			writeError(w, http.StatusMethodNotAllowed, "Method "+r.Method+" is not allowed")
			return
		}
		resource := strings.TrimPrefix(r.URL.Path, MetadataPath)
		if resource == "" || resource == "/" {
			resource = Path
		}
		doc := server.ProtectedResourceMetadataConfig{
			Resource:               h.baseURL(r) + resource,
			ScopesSupported:        []string{meridian.ScopeRead, meridian.ScopeWrite},
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "Meridian metadata catalog",
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(doc)
	})
}

// endpointPath is the MCP path a request came to: /mcp or /api/mcp.
func endpointPath(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, AliasPath) {
		return AliasPath
	}
	return Path
}

// writeError writes a JSON {code, message} error body, as REST does.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": status, "message": msg})
}

// JSON-RPC error codes of the transport.
const (
	jsonrpcParseError     = -32700
	jsonrpcInvalidRequest = -32600
)

// writeRPCError answers a request the MCP exchange never saw with an HTTP status and a
// JSON-RPC error without id, as the MCP library answers transport failures.
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": msg}})
}
