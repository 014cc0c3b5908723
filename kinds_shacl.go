package meridian

import (
	"context"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tggo/goRDFlib/shacl"
)

// KindShaclShape is the kind of stored SHACL shapes, which shacl_validate runs by name.
const KindShaclShape = "shaclShape"

// MaxShaclShapes bounds a stored or inline shapes graph, in bytes of Turtle.
const MaxShaclShapes = 256 << 10

// shaclShapeKind describes stored SHACL shapes: a Turtle shapes graph checked on every
// write.
func shaclShapeKind() *Kind {
	return &Kind{Name: KindShaclShape, Collection: "shaclShapes", Fields: []string{"owners", "followers", "domains"},
		SoftDelete: true, NoLineage: true, Prepare: prepareShaclShape, Validate: validateShaclShape}
}

// shaclBase is the base IRI relative IRIs of a shapes graph resolve against.
const shaclBase = "urn:meridian:shapes:"

// ParseShaclShapes parses a SHACL shapes graph in Turtle and returns it with the
// classes its shapes target (sh:targetClass). Errors: EInvalid when the text is empty,
// too long, not Turtle, or declares no shape.
func ParseShaclShapes(turtle string) (g *shacl.Graph, targets []string, err error) {
	if strings.TrimSpace(turtle) == "" {
		return nil, nil, Errorf(EInvalid, "shapes must be a SHACL shapes graph in Turtle")
	}
	if len(turtle) > MaxShaclShapes {
		return nil, nil, Errorf(EInvalid, "shapes is %d bytes long; at most %d are accepted", len(turtle), MaxShaclShapes)
	}
	if !utf8.ValidString(turtle) {
		return nil, nil, Errorf(EInvalid, "shapes is not valid UTF-8 text")
	}
	defer func() {
		if r := recover(); r != nil {
			g, targets, err = nil, nil, Errorf(EInvalid, "shapes could not be parsed as Turtle")
		}
	}()
	g, perr := shacl.LoadTurtleString(turtle, shaclBase)
	if perr != nil {
		msg := perr.Error()
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return nil, nil, Errorf(EInvalid, "shapes is not valid Turtle: %s", msg)
	}
	typ := shacl.IRI(shacl.RDF + "type")
	shapes := 0
	for _, c := range []string{"NodeShape", "PropertyShape"} {
		o := shacl.IRI(shacl.SH + c)
		shapes += len(g.All(nil, &typ, &o))
	}
	for _, p := range []string{"property", "path", "targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf"} {
		pt := shacl.IRI(shacl.SH + p)
		shapes += len(g.All(nil, &pt, nil))
	}
	if shapes == 0 {
		return nil, nil, Errorf(EInvalid, "shapes declares no SHACL shape (sh:NodeShape, sh:PropertyShape, sh:property or a target)")
	}
	tc := shacl.IRI(shacl.SH + "targetClass")
	seen := map[string]bool{}
	for _, t := range g.All(nil, &tc, nil) {
		if v := t.Object.Value(); t.Object.IsIRI() && !seen[v] {
			seen[v] = true
			targets = append(targets, v)
		}
	}
	sort.Strings(targets)
	return g, targets, nil
}

// prepareShaclShape records the classes the shapes target; a body whose shapes do not
// parse is left for validateShaclShape to refuse.
func prepareShaclShape(_ context.Context, _ Catalog, w *Write) error {
	text, ok := w.New["shapes"].(string)
	if !ok {
		return nil
	}
	if _, targets, err := ParseShaclShapes(text); err == nil {
		list := make([]any, len(targets))
		for i, t := range targets {
			list[i] = t
		}
		w.New["targetClasses"] = list
	} else {
		delete(w.New, "targetClasses")
	}
	return nil
}

// validateShaclShape refuses shapes that are not a SHACL shapes graph in Turtle.
func validateShaclShape(_ context.Context, _ Catalog, w *Write) error {
	text, _ := w.New["shapes"].(string)
	if _, _, err := ParseShaclShapes(text); err != nil {
		return err
	}
	return nil
}
