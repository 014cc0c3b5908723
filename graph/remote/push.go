package remote

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	rdf "github.com/tggo/goRDFlib"
)

// maxBatchBytes bounds the text of one update request.
const maxBatchBytes = 4 << 20

// InsertData adds triples to the client's named graph with INSERT DATA, in batches of at
// most BatchTriples triples. When the server refuses a batch as too large to compile
// (Virtuoso's SPARQL compiler gives up on a few thousand triples), the batch is halved and
// retried. Errors: those of Update.
func (c *Client) InsertData(ctx context.Context, triples []rdf.Triple) error {
	return c.dataBatches(ctx, "INSERT DATA", triples)
}

// DeleteData removes triples from the client's named graph with DELETE DATA, batched as
// InsertData is. Blank nodes cannot be deleted this way; DeleteSubjects can.
func (c *Client) DeleteData(ctx context.Context, triples []rdf.Triple) error {
	return c.dataBatches(ctx, "DELETE DATA", triples)
}

// dataBatches sends triples under op into the client's graph in bounded batches.
func (c *Client) dataBatches(ctx context.Context, op string, triples []rdf.Triple) error {
	return c.dataBatchesInto(ctx, op, c.cfg.Graph, triples)
}

// dataBatchesInto sends triples under op into graph g in bounded batches.
func (c *Client) dataBatchesInto(ctx context.Context, op, g string, triples []rdf.Triple) error {
	size := c.cfg.BatchTriples
	for len(triples) > 0 {
		n := min(size, len(triples))
		text, used := dataUpdate(op, g, triples[:n])
		err := c.Update(ctx, text)
		if err != nil && used > 1 && tooBig(err) {
			size = max(1, used/2)
			continue
		}
		if err != nil {
			return err
		}
		triples = triples[used:]
	}
	return nil
}

// tooBig reports whether an update failed because the server could not compile a
// request of its size.
func tooBig(err error) bool {
	if !errors.Is(err, ErrRefused) {
		return false
	}
	m := err.Error()
	return strings.Contains(m, "memory exhausted") || strings.Contains(m, "exceeded") || strings.Contains(m, "HTTP 413")
}

// dataUpdate is op (INSERT DATA or DELETE DATA) of triples into graph g, cut
// at maxBatchBytes; used is how many triples it carries.
func dataUpdate(op, g string, triples []rdf.Triple) (string, int) {
	var b strings.Builder
	b.WriteString(op)
	b.WriteString(" { GRAPH ")
	b.WriteString(IRI(g))
	b.WriteString(" {\n")
	used := 0
	for _, t := range triples {
		line := Triple(t)
		if used > 0 && b.Len()+len(line) > maxBatchBytes {
			break
		}
		b.WriteString(line)
		b.WriteString(" .\n")
		used++
	}
	b.WriteString("} }")
	return b.String(), used
}

// DeleteSubjects removes every triple whose subject is one of subjects from the
// client's named graph, BatchTriples subjects a request.
func (c *Client) DeleteSubjects(ctx context.Context, subjects []string) error {
	const perRequest = 500
	g := IRI(c.cfg.Graph)
	for len(subjects) > 0 {
		n := min(perRequest, len(subjects))
		var b strings.Builder
		fmt.Fprintf(&b, "DELETE { GRAPH %s { ?s ?p ?o } } WHERE { GRAPH %s { VALUES ?s {", g, g)
		for _, s := range subjects[:n] {
			b.WriteByte(' ')
			b.WriteString(IRI(s))
		}
		b.WriteString(" } ?s ?p ?o } }")
		if err := c.Update(ctx, b.String()); err != nil {
			return err
		}
		subjects = subjects[n:]
	}
	return nil
}

// Clear removes every triple of the client's named graph.
func (c *Client) Clear(ctx context.Context) error {
	return c.Update(ctx, "CLEAR SILENT GRAPH "+IRI(c.cfg.Graph))
}

// Count is the number of triples in the client's named graph.
func (c *Client) Count(ctx context.Context) (int, error) {
	res, _, err := c.Select(ctx, "SELECT (COUNT(*) AS ?n) WHERE { GRAPH "+IRI(c.cfg.Graph)+" { ?s ?p ?o } }")
	if err != nil {
		return 0, err
	}
	if len(res.Bindings) != 1 {
		return 0, fmt.Errorf("%w: COUNT answered %d rows", ErrRefused, len(res.Bindings))
	}
	var n int
	if l, ok := res.Bindings[0]["n"].(rdf.Literal); ok {
		_, _ = fmt.Sscanf(l.Lexical(), "%d", &n)
	}
	return n, nil
}

// Triple is t in N-Triples syntax (without the final dot), safe to embed in a SPARQL
// request whatever its terms hold.
func Triple(t rdf.Triple) string {
	return Term(t.Subject) + " " + IRI(t.Predicate.Value()) + " " + Term(t.Object)
}

// Term is t in N-Triples syntax, escaped so that no value can end the term early.
func Term(t rdf.Term) string {
	switch v := t.(type) {
	case rdf.URIRef:
		return IRI(v.Value())
	case rdf.BNode:
		return "_:" + bnodeLabel(v.Value())
	case rdf.Literal:
		s := `"` + escapeString(v.Lexical()) + `"`
		if lang := v.Language(); lang != "" && validLang(lang) {
			return s + "@" + lang
		}
		if dt := v.Datatype().Value(); dt != "" && dt != xsdString {
			return s + "^^" + IRI(dt)
		}
		return s
	}
	return `""`
}

const (
	xsdString   = "http://www.w3.org/2001/XMLSchema#string"
	xsdBoolean  = "http://www.w3.org/2001/XMLSchema#boolean"
	xsdDateTime = "http://www.w3.org/2001/XMLSchema#dateTime"
)

// IRI is <iri> with every character an IRIREF may not hold percent-encoded.
func IRI(iri string) string {
	var b strings.Builder
	b.Grow(len(iri) + 2)
	b.WriteByte('<')
	for i := 0; i < len(iri); {
		r, size := utf8.DecodeRuneInString(iri[i:])
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&b, "%%%02X", iri[i])
			i++
			continue
		}
		if r <= 0x20 || strings.ContainsRune("<>\"{}|^`\\", r) {
			fmt.Fprintf(&b, "%%%02X", r)
		} else {
			b.WriteString(iri[i : i+size])
		}
		i += size
	}
	b.WriteByte('>')
	return b.String()
}

// validIRI reports whether s is an absolute IRI that needs no escaping.
func validIRI(s string) bool {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || rest == "" {
		return false
	}
	return IRI(s) == "<"+s+">"
}

// escapeString escapes a literal's text for a double-quoted SPARQL string: quotes,
// backslashes and control characters are escaped, invalid UTF-8 becomes U+FFFD.
func escapeString(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// validLang reports whether s is a BCP 47 shaped language tag.
func validLang(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i, part := range strings.Split(s, "-") {
		if part == "" || len(part) > 8 {
			return false
		}
		for _, r := range part {
			alpha := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
			if !alpha && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// bnodeLabel keeps the characters of a blank node label N-Triples allows.
func bnodeLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "x%X", r)
		}
	}
	if b.Len() == 0 {
		return "b"
	}
	return "b" + b.String()
}

// graphStoreBatch bounds the triples of one Graph Store POST.
const graphStoreBatch = 20000

// graphStore is the Graph Store endpoint bulk loads use, "" for none.
func (c *Client) graphStore() string {
	if c.cfg.GraphStoreEndpoint != "" {
		return c.cfg.GraphStoreEndpoint
	}
	if c.IsVirtuoso() && strings.HasSuffix(c.cfg.UpdateEndpoint, "/sparql") {
		suffix := "-graph-crud"
		if c.cfg.User != "" {
			suffix += "-auth"
		}
		return c.cfg.UpdateEndpoint + suffix
	}
	if c.IsVirtuoso() && strings.HasSuffix(c.cfg.UpdateEndpoint, "/sparql-auth") {
		return strings.TrimSuffix(c.cfg.UpdateEndpoint, "-auth") + "-graph-crud-auth"
	}
	return ""
}

// PostTriples adds triples to graph g: by the Graph Store HTTP Protocol (POST of
// N-Triples, graphStoreBatch triples a request) when the server has one, else by
// INSERT DATA batches. Errors: those of Update.
func (c *Client) PostTriples(ctx context.Context, g string, triples []rdf.Triple) error {
	gs := c.graphStore()
	if gs == "" {
		return c.dataBatchesInto(ctx, "INSERT DATA", g, triples)
	}
	target := gs + "?graph=" + url.QueryEscape(g)
	if strings.Contains(gs, "?") {
		target = gs + "&graph=" + url.QueryEscape(g)
	}
	for len(triples) > 0 {
		n := min(graphStoreBatch, len(triples))
		var b strings.Builder
		for _, t := range triples[:n] {
			b.WriteString(Triple(t))
			b.WriteString(" .\n")
		}
		if _, _, err := c.do(ctx, target, MediaNTriples, "*/*", []byte(b.String())); err != nil {
			return err
		}
		triples = triples[n:]
	}
	return nil
}
