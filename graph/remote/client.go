package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	rdf "github.com/tggo/goRDFlib"
	"github.com/tggo/goRDFlib/nt"
	"github.com/tggo/goRDFlib/sparql"
	"github.com/tggo/goRDFlib/turtle"
)

// Media types of the SPARQL 1.1 protocol.
const (
	MediaResultsJSON = "application/sparql-results+json"
	MediaResultsXML  = "application/sparql-results+xml"
	MediaCSV         = "text/csv"
	MediaTSV         = "text/tab-separated-values"
	MediaTurtle      = "text/turtle"
	MediaNTriples    = "application/n-triples"
	mediaQuery       = "application/sparql-query"
	mediaUpdate      = "application/sparql-update"
	mediaForm        = "application/x-www-form-urlencoded"
)

// Errors a Client returns; test them with errors.Is.
var (
	// ErrTooLarge: the response is larger than MaxResponseBytes.
	ErrTooLarge = errors.New("sparql: response larger than the configured bound")
	// ErrTimeout: the endpoint did not answer within the timeout.
	ErrTimeout = errors.New("sparql: the endpoint did not answer in time")
	// ErrUnauthorized: the endpoint refused the credentials (or asked for some).
	ErrUnauthorized = errors.New("sparql: the endpoint refused the credentials")
	// ErrRefused: the endpoint answered with an error status (a bad query, a server
	// limit); the error's text carries the start of its answer.
	ErrRefused = errors.New("sparql: the endpoint refused the request")
	// ErrUnreachable: the endpoint could not be reached.
	ErrUnreachable = errors.New("sparql: the endpoint is unreachable")
)

// Client speaks the SPARQL 1.1 protocol to one query and one update endpoint. It is safe
// for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
	st   *state
	// defaultGraphs are sent as default-graph-uri with every query.
	defaultGraphs []string
}

// state is what a Client learns about its server, shared by its copies.
type state struct {
	answered atomic.Bool  // the server has answered once
	virtuoso atomic.Bool  // the server said it is Virtuoso
	maxRows  atomic.Int64 // the row cap the server announced (X-SPARQL-MaxRows), 0 if none seen
	auth     digestState
}

// withDefaultGraphs is a copy of c whose queries have graphs as their default graph
// (the protocol's default-graph-uri).
func (c *Client) withDefaultGraphs(graphs []string) *Client {
	cp := *c
	cp.defaultGraphs = graphs
	return &cp
}

// RefusedError is an error status answered by the endpoint; it matches ErrRefused.
type RefusedError struct {
	Status  int
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s (HTTP %d): %s", ErrRefused.Error(), e.Status, e.Message)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// New returns a client for cfg. It makes no request.
func New(cfg Config) (*Client, error) {
	if cfg.QueryEndpoint == "" {
		return nil, fmt.Errorf("sparql: no query endpoint")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Client{cfg: cfg, st: &state{}, http: &http.Client{
		// No overall Timeout here: each request carries its own deadline.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Config returns the client's configuration with its defaults applied.
func (c *Client) Config() Config { return c.cfg }

// Graph returns the IRI of the named graph the projection lives in.
func (c *Client) Graph() string { return c.cfg.Graph }

// IsVirtuoso reports whether the server said it is Virtuoso (its Server header), as seen
// on any answer so far; Ping finds out.
func (c *Client) IsVirtuoso() bool { return c.st.virtuoso.Load() }

// Ping asks the query endpoint ASK {} and learns which server it is.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Ask(ctx, "ASK {}")
	return err
}

// Response is a raw answer of the query endpoint.
type Response struct {
	// ContentType is the media type of Body, without parameters.
	ContentType string
	// Body is the answer, at most MaxResponseBytes.
	Body []byte
	// MaxRows is the row cap the server says it applied to this answer (Virtuoso's
	// X-SPARQL-MaxRows), 0 when it said none.
	MaxRows int
}

// QueryRaw sends query to the query endpoint asking for accept (a media type list) and
// returns the answer, read up to MaxResponseBytes. Errors: ErrTooLarge, ErrTimeout,
// ErrUnauthorized, ErrRefused, ErrUnreachable.
func (c *Client) QueryRaw(ctx context.Context, query, accept string) (*Response, error) {
	form := dataQuery(query, c.defaultGraphs)
	resp, body, err := c.do(ctx, c.cfg.QueryEndpoint, mediaForm, accept, []byte(form))
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	r := &Response{ContentType: ct, Body: body}
	if v := resp.Header.Get("X-SPARQL-MaxRows"); v != "" {
		var n int
		if _, err := fmt.Sscanf(v, "%d", &n); err == nil && n > 0 {
			r.MaxRows = n
			c.st.maxRows.Store(int64(n))
		}
	}
	return r, nil
}

// Select runs a SELECT query and returns its solutions as goRDFlib terms. The query is
// sent as is: Limited applies an outer row limit and reports truncation. Results come
// as JSON, except from Virtuoso, whose JSON writer is five to ten times slower than its
// XML one (measured: 230 rows in 40–140 ms as JSON, 7–60 ms as XML).
func (c *Client) Select(ctx context.Context, query string) (*sparql.Result, *Response, error) {
	accept := MediaResultsJSON + ", " + MediaResultsXML + ";q=0.9"
	if c.IsVirtuoso() {
		accept = MediaResultsXML + ", " + MediaResultsJSON + ";q=0.9"
	}
	r, err := c.QueryRaw(ctx, query, accept)
	if err != nil {
		return nil, nil, err
	}
	res, err := parseResults(r)
	if err != nil {
		return nil, nil, err
	}
	return res, r, nil
}

// Ask runs an ASK query.
func (c *Client) Ask(ctx context.Context, query string) (bool, error) {
	res, _, err := c.Select(ctx, query)
	if err != nil {
		return false, err
	}
	if res.Type != "ASK" {
		return false, fmt.Errorf("%w: the answer to an ASK query is not a boolean", ErrRefused)
	}
	return res.AskResult, nil
}

// Construct runs a CONSTRUCT or DESCRIBE query and returns its graph, asked for as
// N-Triples (Turtle accepted).
func (c *Client) Construct(ctx context.Context, query string) (*rdf.Graph, error) {
	r, err := c.QueryRaw(ctx, query, MediaNTriples+", text/plain;q=0.9, "+MediaTurtle+";q=0.8")
	if err != nil {
		return nil, err
	}
	g := rdf.NewGraph()
	switch r.ContentType {
	case MediaNTriples, "text/plain", "text/ntriples":
		err = nt.Parse(g, bytes.NewReader(r.Body))
	case MediaTurtle, "application/x-turtle":
		err = turtle.Parse(g, bytes.NewReader(r.Body))
	default:
		return nil, fmt.Errorf("%w: unexpected graph media type %q", ErrRefused, r.ContentType)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: unreadable graph: %v", ErrRefused, err)
	}
	return g, nil
}

// Update sends a SPARQL Update request to the update endpoint. Errors: ErrTooLarge,
// ErrTimeout, ErrUnauthorized, ErrRefused, ErrUnreachable.
//
// A request the server rolled back as a deadlock victim (Virtuoso's SR172, SQL state
// 40001) is sent again, up to three times.
func (c *Client) Update(ctx context.Context, update string) error {
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if _, _, err = c.do(ctx, c.cfg.UpdateEndpoint, mediaUpdate, "*/*", []byte(update)); err == nil || !deadlocked(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(50*(attempt+1)) * time.Millisecond):
		}
	}
	return err
}

// deadlocked reports whether the server rolled the request back as a deadlock victim.
func deadlocked(err error) bool {
	var re *RefusedError
	return errors.As(err, &re) && (strings.Contains(re.Message, "SR172") || strings.Contains(re.Message, "40001") ||
		strings.Contains(strings.ToLower(re.Message), "deadlock"))
}

// keepCarriageReturns makes every raw carriage return inside the root element of an XML
// document a character reference: an XML parser turns a raw one into a line feed, and
// Virtuoso writes the carriage returns of literals raw. (Between elements it is
// whitespace either way; the prolog, where a reference is not allowed, is left alone.)
func keepCarriageReturns(doc []byte) []byte {
	root := bytes.Index(doc, []byte("<sparql"))
	if root < 0 || bytes.IndexByte(doc[root:], '\r') < 0 {
		return doc
	}
	out := append([]byte(nil), doc[:root]...)
	return append(out, bytes.ReplaceAll(doc[root:], []byte("\r"), []byte("&#13;"))...)
}

// parseResults decodes a SELECT or ASK answer in JSON or XML.
func parseResults(r *Response) (*sparql.Result, error) {
	var (
		res *sparql.Result
		err error
	)
	switch r.ContentType {
	case MediaResultsJSON, "application/json":
		res, err = sparql.ParseSRJ(bytes.NewReader(r.Body))
	case MediaResultsXML, "application/xml", "text/xml":
		res, err = sparql.ParseSRX(bytes.NewReader(keepCarriageReturns(r.Body)))
	default:
		return nil, fmt.Errorf("%w: unexpected results media type %q", ErrRefused, r.ContentType)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: unreadable results: %v", ErrRefused, err)
	}
	askAsSelect(res)
	return res, nil
}

// virtuosoAskVar is the variable Virtuoso 7 answers an ASK query with: it sends a
// SELECT result with one row (value 1) for true and none for false.
const virtuosoAskVar = "__ASK_RETVAL"

// askAsSelect turns Virtuoso's SELECT-shaped answer to an ASK query into a boolean.
func askAsSelect(res *sparql.Result) {
	if res.Type != "SELECT" || len(res.Vars) != 1 || res.Vars[0] != virtuosoAskVar || len(res.Bindings) > 1 {
		return
	}
	res.Type, res.AskResult = "ASK", false
	if len(res.Bindings) == 1 {
		if l, ok := res.Bindings[0][virtuosoAskVar].(rdf.Literal); ok && l.Lexical() != "0" {
			res.AskResult = true
		}
	}
	res.Vars, res.Bindings = nil, nil
}

// do sends one POST with the timeout, answering a Digest or Basic challenge once, and
// reads the answer up to MaxResponseBytes.
func (c *Client) do(ctx context.Context, endpoint, contentType, accept string, body []byte) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	send := func(authz string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("sparql: %v", err)
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", accept)
		// Virtuoso answers late on a connection it has already answered on: a query
		// whose answer is a few dozen kilobytes took 45–60 ms on a reused connection
		// and 11–20 ms on a new one (measured with Go and with curl on loopback), so
		// each query to it has its own connection. Updates, whose answers are short,
		// keep theirs.
		req.Close = c.IsVirtuoso() && contentType == mediaForm
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, classify(ctx, err)
		}
		c.st.answered.Store(true)
		if strings.HasPrefix(resp.Header.Get("Server"), "Virtuoso") {
			c.st.virtuoso.Store(true)
		}
		return resp, nil
	}
	u, _ := url.Parse(endpoint)
	resp, err := send(c.st.auth.preemptive(c.cfg, http.MethodPost, u.RequestURI()))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized && c.cfg.User != "" {
		challenge := resp.Header.Values("WWW-Authenticate")
		drain(resp)
		authz, aerr := c.st.auth.answer(c.cfg, challenge, http.MethodPost, u.RequestURI())
		if aerr != nil {
			return nil, nil, aerr
		}
		if resp, err = send(authz); err != nil {
			return nil, nil, err
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		drain(resp)
		return nil, nil, fmt.Errorf("%w (HTTP %d)", ErrUnauthorized, resp.StatusCode)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, nil, &RefusedError{Status: resp.StatusCode, Message: firstLine(msg)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, nil, classify(ctx, err)
	}
	if int64(len(data)) > c.cfg.MaxResponseBytes {
		return nil, nil, ErrTooLarge
	}
	return resp, data, nil
}

// classify maps a transport error to ErrTimeout or ErrUnreachable.
func classify(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return ErrTimeout
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

// drain discards a little of an answer so that its connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// firstLine is the first non-empty line of an error answer, trimmed to 300 bytes.
func firstLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 300 {
				l = l[:300]
			}
			return l
		}
	}
	return "(no message)"
}
