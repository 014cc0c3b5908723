package graph

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"sort"
	"strings"
)

// Format is an answer format.
type Format string

// Answer formats.
const (
	FormatJSON    Format = "json"     // application/sparql-results+json; JSON-LD for graphs
	FormatXML     Format = "xml"      // application/sparql-results+xml
	FormatCSV     Format = "csv"      // text/csv
	FormatTSV     Format = "tsv"      // text/tab-separated-values
	FormatTurtle  Format = "turtle"   // text/turtle (CONSTRUCT and DESCRIBE)
	FormatJSONLD  Format = "jsonld"   // application/ld+json (CONSTRUCT and DESCRIBE)
	FormatNTriple Format = "ntriples" // application/n-triples (CONSTRUCT and DESCRIBE)
)

// ParseFormat reads a format name (case-insensitive; "" is JSON). Errors:
// FORMAT_NOT_SUPPORTED.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "":
		return FormatJSON, nil
	case FormatJSON, FormatXML, FormatCSV, FormatTSV, FormatTurtle, FormatJSONLD, FormatNTriple:
		return f, nil
	case "ttl":
		return FormatTurtle, nil
	case "json-ld":
		return FormatJSONLD, nil
	}
	return "", Errorf(CodeFormatInvalid, "format %q is not one of json, xml, csv, tsv, turtle, jsonld, ntriples", s)
}

// ContentType is the media type of an answer in the format for the form.
func ContentType(f Format, form Form) string {
	graphForm := form == FormConstruct || form == FormDescribe
	switch f {
	case FormatXML:
		return "application/sparql-results+xml"
	case FormatCSV:
		return "text/csv; charset=utf-8"
	case FormatTSV:
		return "text/tab-separated-values; charset=utf-8"
	case FormatTurtle:
		return "text/turtle; charset=utf-8"
	case FormatNTriple:
		return "application/n-triples"
	case FormatJSONLD:
		return "application/ld+json"
	}
	if graphForm {
		return "application/ld+json"
	}
	return "application/sparql-results+json"
}

// supports reports whether the format can write the form's answer.
func supports(f Format, form Form) bool {
	graphForm := form == FormConstruct || form == FormDescribe
	switch f {
	case FormatTurtle, FormatJSONLD, FormatNTriple:
		return graphForm
	case FormatXML:
		return !graphForm
	}
	return true
}

// capped is a buffer that takes whole items only while they fit under a byte cap,
// keeping room for the closing text.
type capped struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

// add appends item unless it would leave no room for tail; it reports success.
func (c *capped) add(item []byte, tail int) bool {
	if c.truncated || c.buf.Len()+len(item)+tail > c.max {
		c.truncated = true
		return false
	}
	c.buf.Write(item)
	return true
}

// Encode writes a result in the format, in at most maxBytes bytes: rows or triples
// that do not fit are left out whole and the answer is marked TRUNCATED, so the output
// is always complete, valid text. It returns the bytes and the completeness. Errors:
// FORMAT_NOT_SUPPORTED.
func Encode(r *Result, f Format, maxBytes int) ([]byte, Completeness, error) {
	if !supports(f, r.Form) {
		return nil, "", Errorf(CodeFormatInvalid, "%s answers cannot be written as %s", r.Form, f)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultOutputBytes
	}
	c := &capped{max: maxBytes}
	switch r.Form {
	case FormAsk:
		encodeAsk(c, r, f)
	case FormConstruct, FormDescribe:
		encodeGraph(c, r.Triples, f, r.Completeness)
	default:
		encodeSelect(c, r, f)
	}
	comp := r.Completeness
	if c.truncated {
		comp = Truncated
	}
	return c.buf.Bytes(), comp, nil
}

func encodeAsk(c *capped, r *Result, f Format) {
	v := "false"
	if r.Boolean {
		v = "true"
	}
	switch f {
	case FormatXML:
		c.add([]byte(xml.Header+`<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>`+v+"</boolean></sparql>\n"), 0)
	case FormatCSV, FormatTSV:
		c.add([]byte("_askResult\n"+v+"\n"), 0)
	default:
		c.add([]byte(`{"head":{},"boolean":`+v+`,"completeness":"COMPLETE"}`), 0)
	}
}

func encodeSelect(c *capped, r *Result, f Format) {
	switch f {
	case FormatCSV, FormatTSV:
		sep := ","
		if f == FormatTSV {
			sep = "\t"
		}
		head := make([]string, len(r.Vars))
		for i, v := range r.Vars {
			if f == FormatTSV {
				head[i] = "?" + v
			} else {
				head[i] = v
			}
		}
		c.add([]byte(strings.Join(head, sep)+"\r\n"), 0)
		for _, row := range r.Rows {
			cells := make([]string, len(row))
			for i, t := range row {
				if f == FormatTSV {
					cells[i] = tsvCell(t)
				} else {
					cells[i] = csvCell(t)
				}
			}
			if !c.add([]byte(strings.Join(cells, sep)+"\r\n"), 0) {
				return
			}
		}
	case FormatXML:
		var h strings.Builder
		h.WriteString(xml.Header + `<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>`)
		for _, v := range r.Vars {
			h.WriteString(`<variable name="` + xmlEscape(v) + `"/>`)
		}
		h.WriteString("</head><results>\n")
		const tail = "</results></sparql>\n"
		c.add([]byte(h.String()), len(tail))
		for _, row := range r.Rows {
			var b strings.Builder
			b.WriteString("<result>")
			for i, t := range row {
				if t.Kind == KindNone {
					continue
				}
				b.WriteString(`<binding name="` + xmlEscape(r.Vars[i]) + `">` + xmlTerm(t) + "</binding>")
			}
			b.WriteString("</result>\n")
			if !c.add([]byte(b.String()), len(tail)) {
				break
			}
		}
		c.truncated = c.truncated || false
		c.buf.WriteString(tail)
	default:
		vars, _ := json.Marshal(nonNil(r.Vars))
		head := `{"head":{"vars":` + string(vars) + `},"results":{"bindings":[`
		const tailMax = `]},"completeness":"TRUNCATED"}`
		c.add([]byte(head), len(tailMax))
		first := true
		for _, row := range r.Rows {
			obj := map[string]any{}
			for i, t := range row {
				if t.Kind != KindNone {
					obj[r.Vars[i]] = jsonTerm(t)
				}
			}
			b, _ := json.Marshal(obj)
			if !first {
				b = append([]byte{','}, b...)
			}
			if !c.add(b, len(tailMax)) {
				break
			}
			first = false
		}
		comp := r.Completeness
		if c.truncated {
			comp = Truncated
		}
		c.buf.WriteString(`]},"completeness":"` + string(comp) + `"}`)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func encodeGraph(c *capped, ts []Triple, f Format, comp Completeness) {
	switch f {
	case FormatCSV, FormatTSV:
		encodeSelect(c, &Result{Form: FormSelect, Vars: []string{"s", "p", "o"}, Rows: triplesAsRows(ts), Completeness: comp}, f)
	case FormatNTriple:
		for _, t := range ts {
			if !c.add([]byte(ntTerm(t.S)+" "+ntTerm(t.P)+" "+ntTerm(t.O)+" .\n"), 0) {
				return
			}
		}
	case FormatTurtle:
		c.add([]byte(turtlePrologue()), 0)
		for _, group := range bySubject(ts) {
			if !c.add([]byte(turtleGroup(group)), 0) {
				return
			}
		}
	default:
		encodeJSONLD(c, ts)
	}
}

func triplesAsRows(ts []Triple) [][]Term {
	rows := make([][]Term, len(ts))
	for i, t := range ts {
		rows[i] = []Term{t.S, t.P, t.O}
	}
	return rows
}

// bySubject groups triples by subject, in order of first appearance.
func bySubject(ts []Triple) [][]Triple {
	idx := map[Term]int{}
	var out [][]Triple
	for _, t := range ts {
		i, ok := idx[t.S]
		if !ok {
			i = len(out)
			idx[t.S] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], t)
	}
	return out
}

func turtlePrologue() string {
	var b strings.Builder
	for _, p := range Prefixes {
		b.WriteString("@prefix " + p.Prefix + ": <" + p.NS + "> .\n")
	}
	b.WriteString("\n")
	return b.String()
}

// turtleGroup writes one subject's triples as a Turtle statement.
func turtleGroup(ts []Triple) string {
	var b strings.Builder
	b.WriteString(ttlTerm(ts[0].S))
	for i, t := range ts {
		if i > 0 {
			b.WriteString(" ;\n   ")
		}
		p := ttlTerm(t.P)
		if t.P.Value == rdfType {
			p = "a"
		}
		b.WriteString(" " + p + " " + ttlTerm(t.O))
	}
	b.WriteString(" .\n")
	return b.String()
}

// Turtle writes triples as a Turtle document.
func Turtle(ts []Triple) string {
	var b strings.Builder
	b.WriteString(turtlePrologue())
	for _, g := range bySubject(ts) {
		b.WriteString(turtleGroup(g))
	}
	return b.String()
}

func encodeJSONLD(c *capped, ts []Triple) {
	ctx := map[string]string{}
	for _, p := range Prefixes {
		ctx[p.Prefix] = p.NS
	}
	cb, _ := json.Marshal(ctx)
	const tail = "]}"
	c.add([]byte(`{"@context":`+string(cb)+`,"@graph":[`), len(tail))
	for i, group := range bySubject(ts) {
		node := map[string]any{"@id": nodeID(group[0].S)}
		keys := map[string][]any{}
		var order []string
		for _, t := range group {
			k := t.P.Value
			if t.P.Value == rdfType {
				k = "@type"
			} else if s, ok := compact(k); ok {
				k = s
			}
			if _, seen := keys[k]; !seen {
				order = append(order, k)
			}
			if k == "@type" {
				keys[k] = append(keys[k], nodeID(t.O))
			} else {
				keys[k] = append(keys[k], jsonldValue(t.O))
			}
		}
		sort.Strings(order)
		for _, k := range order {
			node[k] = keys[k]
		}
		b, _ := json.Marshal(node)
		if i > 0 {
			b = append([]byte{','}, b...)
		}
		if !c.add(b, len(tail)) {
			break
		}
	}
	c.buf.WriteString(tail)
}

func nodeID(t Term) string {
	if t.Kind == KindBlank {
		return "_:" + t.Value
	}
	return t.Value
}

func jsonldValue(t Term) map[string]any {
	switch t.Kind {
	case KindIRI, KindBlank:
		return map[string]any{"@id": nodeID(t)}
	}
	v := map[string]any{"@value": t.Value}
	if t.Lang != "" {
		v["@language"] = t.Lang
	} else if t.Datatype != "" {
		v["@type"] = t.Datatype
	}
	return v
}

// jsonTerm is a term in the SPARQL 1.1 JSON results format.
func jsonTerm(t Term) map[string]string {
	switch t.Kind {
	case KindIRI:
		return map[string]string{"type": "uri", "value": t.Value}
	case KindBlank:
		return map[string]string{"type": "bnode", "value": t.Value}
	}
	m := map[string]string{"type": "literal", "value": t.Value}
	if t.Lang != "" {
		m["xml:lang"] = t.Lang
	} else if t.Datatype != "" {
		m["datatype"] = t.Datatype
	}
	return m
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func xmlTerm(t Term) string {
	switch t.Kind {
	case KindIRI:
		return "<uri>" + xmlEscape(t.Value) + "</uri>"
	case KindBlank:
		return "<bnode>" + xmlEscape(t.Value) + "</bnode>"
	}
	attr := ""
	if t.Lang != "" {
		attr = ` xml:lang="` + xmlEscape(t.Lang) + `"`
	} else if t.Datatype != "" {
		attr = ` datatype="` + xmlEscape(t.Datatype) + `"`
	}
	return "<literal" + attr + ">" + xmlEscape(t.Value) + "</literal>"
}

// csvCell is a term in the SPARQL 1.1 CSV format: the plain value, quoted when needed.
func csvCell(t Term) string {
	v := t.Value
	if t.Kind == KindBlank {
		v = "_:" + v
	}
	if strings.ContainsAny(v, ",\"\r\n") {
		return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
	}
	return v
}

// tsvCell is a term in the SPARQL 1.1 TSV format: its N-Triples form.
func tsvCell(t Term) string {
	if t.Kind == KindNone {
		return ""
	}
	return ntTerm(t)
}

// ntTerm is a term in N-Triples syntax.
func ntTerm(t Term) string {
	switch t.Kind {
	case KindIRI:
		return "<" + escapeIRI(t.Value) + ">"
	case KindBlank:
		return "_:" + blankLabel(t.Value)
	case KindLiteral:
		s := `"` + escapeLiteral(t.Value) + `"`
		if t.Lang != "" {
			return s + "@" + t.Lang
		}
		if t.Datatype != "" && t.Datatype != xsdString {
			return s + "^^<" + escapeIRI(t.Datatype) + ">"
		}
		return s
	}
	return ""
}

// ttlTerm is a term in Turtle syntax, with prefixes where they fit.
func ttlTerm(t Term) string {
	switch t.Kind {
	case KindIRI:
		if s, ok := compact(t.Value); ok {
			return s
		}
	case KindLiteral:
		if t.Lang == "" && t.Datatype != "" && t.Datatype != xsdString {
			dt := "<" + escapeIRI(t.Datatype) + ">"
			if s, ok := compact(t.Datatype); ok {
				dt = s
			}
			return `"` + escapeLiteral(t.Value) + `"^^` + dt
		}
	}
	return ntTerm(t)
}

func escapeLiteral(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789ABCDEF"[r>>4])
				b.WriteByte("0123456789ABCDEF"[r&15])
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// escapeIRI percent-encodes the characters an IRI may not hold (spaces, controls,
// <>"{}|^`\), so the output always parses.
func escapeIRI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c == 0x7f || strings.IndexByte("<>\"{}|^`\\", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func blankLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		} else {
			b.WriteString("x")
		}
	}
	if b.Len() == 0 {
		return "b"
	}
	return b.String()
}
