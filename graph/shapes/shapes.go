// Package shapes runs SHACL validation over the knowledge graph with goRDFlib's SHACL
// engine: shapes given inline (Turtle) or stored as shaclShape entities, checked against
// the neighbourhood of one focus entity or of the instances of one class (validating
// the whole 1 M-triple graph at once takes tens of seconds and gigabytes, so it runs as
// a durable job that pages through the shapes' target classes).
package shapes

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tggo/goRDFlib/shacl"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/store"
)

// Bounds.
const (
	// DefaultDepth is the neighbourhood depth validated around a focus entity.
	DefaultDepth = 2
	// DefaultClassLimit and MaxClassLimit bound the instances of a focus class.
	DefaultClassLimit = 50
	MaxClassLimit     = 200
	// MaxResults bounds the results answered (and kept by a job).
	MaxResults = 1000
	// neighbourTriples bounds the triples around one focus entity.
	neighbourTriples = graph.MaxNeighbors
	// pageSize is how many instances one step of a whole-graph job validates.
	pageSize = 100
)

// JobTypeValidate is the type of the durable whole-graph validation job.
const JobTypeValidate = "graph.shacl"

// JobStarter starts durable jobs (store/jobs.Service).
type JobStarter interface {
	Start(ctx context.Context, p *meridian.Principal, typ string, params any, run store.JobFunc) (string, error)
}

// Validator validates the knowledge graph against SHACL shapes. It is safe for
// concurrent use.
type Validator struct {
	Graph    *graph.Service
	Entities *store.Entities
	Jobs     JobStarter
}

// Request is one validation.
type Request struct {
	// Shapes is a shapes graph in Turtle; ShapeName names a stored shaclShape instead.
	Shapes    string
	ShapeName string
	// The focus: an entity by EntityType and FQN, or by IRI; or every instance of
	// Class (an IRI, or a prefixed name such as mer:Table), at most Limit of them.
	EntityType, FQN, IRI string
	Class                string
	Limit                int
	// Depth is the neighbourhood validated around each focus entity (1 to 3).
	Depth int
}

// Finding is one SHACL validation result.
type Finding struct {
	FocusNode  string `json:"focusNode"`
	Path       string `json:"path,omitempty"`
	Severity   string `json:"severity"`
	Message    string `json:"message"`
	Value      string `json:"value,omitempty"`
	Shape      string `json:"sourceShape,omitempty"`
	Constraint string `json:"sourceConstraintComponent,omitempty"`
}

// Report is the answer of a validation.
type Report struct {
	Conforms bool      `json:"conforms"`
	Focus    []string  `json:"focusNodes"`
	Results  []Finding `json:"results"`
	// Completeness is TRUNCATED when a neighbourhood, the class's instances or the
	// results were cut at their bound.
	Completeness string `json:"completeness"`
	// Checked is how many focus entities were validated.
	Checked int `json:"checked"`
}

// shapesOf resolves the request's shapes: inline Turtle or a stored shaclShape.
// Errors: EInvalid, ENotFound.
func (v *Validator) shapesOf(ctx context.Context, p *meridian.Principal, req Request) (*shacl.Graph, []string, string, error) {
	text := req.Shapes
	switch {
	case text != "" && req.ShapeName != "":
		return nil, nil, "", meridian.Errorf(meridian.EInvalid, "give shapes or shapeName, not both")
	case req.ShapeName != "":
		e, err := v.Entities.Get(ctx, p, meridian.KindShaclShape, store.ByFQN(req.ShapeName), store.GetOptions{})
		if err != nil {
			return nil, nil, "", err
		}
		text = e.String("shapes")
	case text == "":
		return nil, nil, "", meridian.Errorf(meridian.EInvalid, "give shapes (Turtle) or shapeName (a stored shaclShape)")
	}
	g, targets, err := meridian.ParseShaclShapes(text)
	if err != nil {
		return nil, nil, "", err
	}
	return g, targets, text, nil
}

// Validate validates the neighbourhood of the focus entity, or of up to Limit instances
// of the focus class, against the shapes, and answers the results whose focus node is a
// focus entity or one of its own nodes (its columns). Errors: EInvalid (no or bad
// shapes, no or two focuses, bounds), ENotFound (shape or entity), and those of the
// graph service.
func (v *Validator) Validate(ctx context.Context, p *meridian.Principal, req Request) (*Report, error) {
	shapes, _, _, err := v.shapesOf(ctx, p, req)
	if err != nil {
		return nil, err
	}
	if req.Depth == 0 {
		req.Depth = DefaultDepth
	}
	if req.Depth < 1 || req.Depth > graph.MaxDepth {
		return nil, meridian.Errorf(meridian.EInvalid, "depth must be between 1 and %d", graph.MaxDepth)
	}
	entity := req.IRI != "" || req.FQN != "" || req.EntityType != ""
	if entity == (req.Class != "") {
		return nil, meridian.Errorf(meridian.EInvalid, "give one focus: entityType and fqn (or iri), or class")
	}
	rep := &Report{Completeness: string(graph.Complete)}
	var focus []string
	if entity {
		iri, err := v.Graph.Locate(ctx, p, req.EntityType, req.FQN, req.IRI, false)
		if err != nil {
			return nil, err
		}
		focus = []string{iri}
	} else {
		if req.Limit == 0 {
			req.Limit = DefaultClassLimit
		}
		if req.Limit < 1 || req.Limit > MaxClassLimit {
			return nil, meridian.Errorf(meridian.EInvalid, "limit must be between 1 and %d", MaxClassLimit)
		}
		var more bool
		focus, more, err = v.instances(ctx, p, req.Class, req.Limit, 0)
		if err != nil {
			return nil, err
		}
		if more {
			rep.Completeness = string(graph.Truncated)
		}
	}
	data := v.dataGraph()
	for _, iri := range focus {
		n, err := v.Graph.Neighborhood(ctx, p, iri, req.Depth, neighbourTriples/max(1, len(focus)/4+1), false)
		if err != nil {
			return nil, err
		}
		if n.Completeness == graph.Truncated {
			rep.Completeness = string(graph.Truncated)
		}
		addTriples(data, n.Triples)
	}
	rep.Focus, rep.Checked = focus, len(focus)
	v.run(data, shapes, focus, rep)
	return rep, nil
}

// run validates data against shapes and adds the findings about the focus nodes to rep.
func (v *Validator) run(data, shapes *shacl.Graph, focus []string, rep *Report) {
	res := shacl.Validate(data, shapes)
	for _, r := range res.Results {
		node := r.FocusNode.Value()
		if !ownedByAny(node, focus) || severityIgnored(r.ResultSeverity) {
			continue
		}
		if len(rep.Results) >= MaxResults {
			rep.Completeness = string(graph.Truncated)
			break
		}
		rep.Results = append(rep.Results, finding(r))
	}
	sort.SliceStable(rep.Results, func(i, j int) bool { return rep.Results[i].FocusNode < rep.Results[j].FocusNode })
	rep.Conforms = len(rep.Results) == 0
}

// severityIgnored reports the SHACL 1.2 severities that do not break conformance.
func severityIgnored(t shacl.Term) bool {
	s := t.Value()
	return s == shacl.SH+"Debug" || s == shacl.SH+"Trace"
}

// finding converts a goRDFlib result.
func finding(r shacl.ValidationResult) Finding {
	f := Finding{FocusNode: r.FocusNode.Value(), Severity: strings.TrimPrefix(r.ResultSeverity.Value(), shacl.SH),
		Shape: r.SourceShape.Value(), Constraint: strings.TrimPrefix(r.SourceConstraintComponent.Value(), shacl.SH)}
	if !r.ResultPath.IsNone() {
		f.Path = r.ResultPath.Value()
	}
	if !r.Value.IsNone() {
		f.Value = r.Value.Value()
	}
	var msgs []string
	for _, m := range r.ResultMessages {
		msgs = append(msgs, m.Value())
	}
	f.Message = strings.Join(msgs, "; ")
	if f.Message == "" {
		f.Message = fmt.Sprintf("%s violated", f.Constraint)
		if f.Path != "" {
			f.Message += " on " + f.Path
		}
	}
	return f
}

// ownedByAny reports whether node is one of the focus entities or one of their own
// nodes (an entity's columns have IRIs under the entity's).
func ownedByAny(node string, focus []string) bool {
	for _, f := range focus {
		if node == f || strings.HasPrefix(node, f+"/") {
			return true
		}
	}
	return false
}

// instances lists up to limit instances of class from offset, and whether there are
// more.
func (v *Validator) instances(ctx context.Context, p *meridian.Principal, class string, limit, offset int) ([]string, bool, error) {
	iri := expand(class)
	if iri == "" || strings.ContainsAny(iri, "<>\"{}|^`\\ \t\r\n") {
		return nil, false, meridian.Errorf(meridian.EInvalid, "class %q is not an IRI or a known prefixed name", class)
	}
	q := fmt.Sprintf("SELECT ?e WHERE { ?e a <%s> } ORDER BY ?e LIMIT %d OFFSET %d", iri, limit+1, offset)
	r, err := v.Graph.Run(ctx, p, graph.Request{Query: q, Limit: limit + 1})
	if err != nil {
		return nil, false, err
	}
	var out []string
	for _, row := range r.Rows {
		if len(row) == 1 && row[0].Kind == graph.KindIRI {
			out = append(out, row[0].Value)
		}
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// expand turns a prefixed name of the predeclared prefixes into an IRI; an IRI (with or
// without <>) is kept.
func expand(name string) string {
	name = strings.TrimSpace(name)
	if strings.HasPrefix(name, "<") && strings.HasSuffix(name, ">") {
		return name[1 : len(name)-1]
	}
	if pfx, local, ok := strings.Cut(name, ":"); ok && !strings.HasPrefix(local, "//") {
		for _, p := range graph.Prefixes {
			if p.Prefix == pfx {
				return p.NS + local
			}
		}
	}
	if strings.Contains(name, "://") || strings.HasPrefix(name, "urn:") {
		return name
	}
	return ""
}

// dataGraph is a new data graph holding the ontology, so that sh:targetClass sees
// rdfs:subClassOf.
func (v *Validator) dataGraph() *shacl.Graph {
	g, err := shacl.LoadTurtleString(v.Graph.OntologyTurtle(), graph.OntologyIRI)
	if err != nil {
		return shacl.NewGraph()
	}
	return g
}

// addTriples adds graph triples to a SHACL data graph.
func addTriples(g *shacl.Graph, ts []graph.Triple) {
	for _, t := range ts {
		s, ok1 := toShacl(t.S)
		p, ok2 := toShacl(t.P)
		o, ok3 := toShacl(t.O)
		if ok1 && ok2 && ok3 {
			g.Add(s, p, o)
		}
	}
}

// toShacl converts a graph term.
func toShacl(t graph.Term) (shacl.Term, bool) {
	switch t.Kind {
	case graph.KindIRI:
		return shacl.IRI(t.Value), true
	case graph.KindBlank:
		return shacl.BlankNode(t.Value), true
	case graph.KindLiteral:
		return shacl.Literal(t.Value, t.Datatype, t.Lang), true
	}
	return shacl.Term{}, false
}
