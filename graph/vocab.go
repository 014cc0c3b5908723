package graph

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Namespaces of the vocabularies the projection uses.
const (
	NSRDF  = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	NSRDFS = "http://www.w3.org/2000/01/rdf-schema#"
	NSXSD  = "http://www.w3.org/2001/XMLSchema#"
	NSOWL  = "http://www.w3.org/2002/07/owl#"
	NSDCT  = "http://purl.org/dc/terms/"
	NSDCAT = "http://www.w3.org/ns/dcat#"
	NSPROV = "http://www.w3.org/ns/prov#"
	NSSKOS = "http://www.w3.org/2004/02/skos/core#"
	// NSMer is the Meridian ontology's namespace.
	NSMer = "https://meridian-catalog.github.io/ontology#"
	// NSID is the namespace of entity IRIs: NSID + kind + "/" + id.
	NSID = "https://meridian-catalog.github.io/id/"
	// OntologyIRI names the ontology itself.
	OntologyIRI = "https://meridian-catalog.github.io/ontology"
)

// Prefixes are the prefixes every answer and every query may use without declaring
// them, in the order they are written.
var Prefixes = []struct{ Prefix, NS string }{
	{"rdf", NSRDF}, {"rdfs", NSRDFS}, {"xsd", NSXSD}, {"owl", NSOWL}, {"dct", NSDCT},
	{"dcat", NSDCAT}, {"prov", NSPROV}, {"skos", NSSKOS}, {"mer", NSMer}, {"id", NSID},
}

// Terms of the mappings that are part of the contract.
const (
	rdfType          = NSRDF + "type"
	rdfsLabel        = NSRDFS + "label"
	rdfsComment      = NSRDFS + "comment"
	rdfsSubClassOf   = NSRDFS + "subClassOf"
	rdfsDomain       = NSRDFS + "domain"
	rdfsRange        = NSRDFS + "range"
	owlClass         = NSOWL + "Class"
	owlObjectProp    = NSOWL + "ObjectProperty"
	owlDatatypeProp  = NSOWL + "DatatypeProperty"
	owlOntology      = NSOWL + "Ontology"
	dctIdentifier    = NSDCT + "identifier"
	dctTitle         = NSDCT + "title"
	dctDescription   = NSDCT + "description"
	dctModified      = NSDCT + "modified"
	provDerivedFrom  = NSPROV + "wasDerivedFrom"
	skosBroader      = NSSKOS + "broader"
	skosInScheme     = NSSKOS + "inScheme"
	skosConcept      = NSSKOS + "Concept"
	merEntity        = NSMer + "Entity"
	merColumn        = NSMer + "Column"
	merColumnProp    = NSMer + "column"
	merColumnOf      = NSMer + "columnOf"
	merTag           = NSMer + "tag"
	merEntityType    = NSMer + "entityType"
	merDeleted       = NSMer + "deleted"
	merDataType      = NSMer + "dataType"
	merEntityLink    = NSMer + "entityLink"
	xsdBoolean       = NSXSD + "boolean"
	xsdInteger       = NSXSD + "integer"
	xsdDecimal       = NSXSD + "decimal"
	xsdDateTime      = NSXSD + "dateTime"
	merPropertyPlain = NSMer // + field name
)

// EntityIRI is the stable IRI of an entity: NSID + kind + "/" + id.
func EntityIRI(kind, id string) string { return NSID + kind + "/" + url.PathEscape(id) }

// ParseEntityIRI returns the kind and id an entity IRI names.
func ParseEntityIRI(iri string) (kind, id string, ok bool) {
	rest, found := strings.CutPrefix(iri, NSID)
	if !found {
		return "", "", false
	}
	kind, esc, found := strings.Cut(rest, "/")
	if !found || kind == "" || strings.Contains(esc, "/") {
		return "", "", false
	}
	id, err := url.PathUnescape(esc)
	if err != nil || id == "" {
		return "", "", false
	}
	return kind, id, true
}

// ColumnIRI is the IRI of a column of an entity, by the names on its path (a nested
// column's parents first).
func ColumnIRI(entity string, path []string) string {
	var b strings.Builder
	b.WriteString(entity)
	b.WriteString("/columns")
	for _, n := range path {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(n))
	}
	return b.String()
}

// ClassIRI is the Meridian class of a kind: mer: and the kind name with its first
// letter upper-cased (mer:Table, mer:GlossaryTerm).
func ClassIRI(kind string) string {
	r, n := utf8.DecodeRuneInString(kind)
	return NSMer + string(unicode.ToUpper(r)) + kind[n:]
}

// PropertyIRI is the Meridian property of a document field (mer:owners, mer:service).
func PropertyIRI(field string) string { return merPropertyPlain + escapeIRI(field) }

// compact writes an IRI with a known prefix when its local part is a plain name.
func compact(iri string) (string, bool) {
	for _, p := range Prefixes {
		if local, ok := strings.CutPrefix(iri, p.NS); ok && plainLocal(local) {
			return p.Prefix + ":" + local, true
		}
	}
	return "", false
}

func plainLocal(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '-' && i > 0 || unicode.IsLetter(r) || unicode.IsDigit(r) && i > 0) {
			return false
		}
	}
	return true
}

// prologue is the PREFIX declarations of Prefixes, prepended to every query that does
// not declare them itself.
func prologue() string {
	var b strings.Builder
	for _, p := range Prefixes {
		b.WriteString("PREFIX " + p.Prefix + ": <" + p.NS + ">\n")
	}
	return b.String()
}
