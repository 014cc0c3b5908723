package graph

import (
	"github.com/tggo/goRDFlib/term"
)

// xsdString is the datatype of a plain literal.
const xsdString = "http://www.w3.org/2001/XMLSchema#string"

// toRDF converts a Term to goRDFlib's; false for the zero Term.
func toRDF(t Term) (term.Term, bool) {
	switch t.Kind {
	case KindIRI:
		return term.NewURIRefUnsafe(t.Value), true
	case KindBlank:
		return term.NewBNode(t.Value), true
	case KindLiteral:
		switch {
		case t.Lang != "":
			return term.NewLiteral(t.Value, term.WithLang(t.Lang)), true
		case t.Datatype != "" && t.Datatype != xsdString:
			return term.NewLiteral(t.Value, term.WithDatatype(term.NewURIRefUnsafe(t.Datatype))), true
		default:
			return term.NewLiteral(t.Value), true
		}
	}
	return nil, false
}

// convertible reports whether toRDF converts t.
func convertible(t Term) bool {
	return t.Kind == KindIRI || t.Kind == KindBlank || t.Kind == KindLiteral
}

// fromRDF converts a goRDFlib term to a Term (the zero Term for nil).
func fromRDF(t term.Term) Term {
	switch v := t.(type) {
	case term.URIRef:
		return IRI(v.Value())
	case term.BNode:
		return Blank(v.Value())
	case term.Literal:
		out := Term{Kind: KindLiteral, Value: v.Lexical(), Lang: v.Language()}
		if out.Lang == "" {
			if dt := v.Datatype().Value(); dt != xsdString {
				out.Datatype = dt
			}
		}
		return out
	case nil:
		return Term{}
	}
	return Literal(t.String())
}
