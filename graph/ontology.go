package graph

import (
	"crypto/sha256"
	"fmt"
	"sort"

	"github.com/meridian-catalog/meridian"
)

// Property is one property of the ontology.
type Property struct {
	IRI, Label, Comment string
	// Object is true for a property whose values are nodes (not literals).
	Object bool
}

// Class is one class of the ontology.
type Class struct {
	IRI, Label, Comment string
	SubClassOf          []string
}

// Ontology is the published vocabulary: the classes and the properties the projection
// uses, derived from the kind registry.
type Ontology struct {
	Classes    []Class
	Properties []Property
}

// contractProperties are the properties whose meaning is part of the contract.
var contractProperties = []Property{
	{dctIdentifier, "identifier", "The entity's fully qualified name (a column's too).", false},
	{rdfsLabel, "label", "The entity's name.", false},
	{dctTitle, "title", "The entity's display name, when set.", false},
	{dctDescription, "description", "The entity's description (Markdown).", false},
	{dctModified, "modified", "When the entity was last changed.", false},
	{provDerivedFrom, "was derived from", "Lineage: from the downstream entity (or column) to the upstream one.", true},
	{skosBroader, "broader", "From a tag or glossary term to its parent.", true},
	{skosInScheme, "in scheme", "From a tag to its classification, from a glossary term to its glossary.", true},
	{merColumnProp, "column", "From an entity to its top-level columns, and from a column to its nested columns.", true},
	{merColumnOf, "column of", "From a column to the entity that has it.", true},
	{merTag, "tag", "From an entity or a column to a tag or glossary term applied to it.", true},
	{merEntityType, "entity type", "The entity's type, as the REST API names it (table, glossaryTerm).", false},
	{merDeleted, "deleted", "True on a soft-deleted entity (visible to admins who ask for deleted entities).", false},
	{merDataType, "data type", "A column's data type.", false},
	{merEntityLink, "entity link", "From a test case to the entity or column it tests.", true},
}

// NewOntology derives the ontology from the registry: a class per kind (with the
// standard classes of its GraphFacts as superclasses), the column class, the contract
// properties and a property per reference field (mer:<field>).
func NewOntology(reg *meridian.Registry) *Ontology {
	o := &Ontology{}
	o.Classes = append(o.Classes, Class{IRI: merEntity, Label: "Entity", Comment: "Anything the catalog holds."},
		Class{IRI: merColumn, Label: "Column", Comment: "A column of a table (or of another entity with columns)."})
	refs := map[string]bool{}
	for f := range meridian.RelationFields {
		refs[f] = true
	}
	for _, k := range reg.Kinds() {
		c := Class{IRI: ClassIRI(k.Name), Label: k.Name, Comment: "A " + k.Name + " entity of the catalog.",
			SubClassOf: append([]string{merEntity}, k.Graph.Classes...)}
		o.Classes = append(o.Classes, c)
		for f := range k.Refs {
			refs[f] = true
		}
		for _, p := range k.Parents {
			refs[p.Field] = true
		}
		for _, f := range k.Inherit {
			refs[f] = true
		}
		for f := range k.Inverse {
			refs[f] = true
		}
	}
	o.Properties = append(o.Properties, contractProperties...)
	names := make([]string, 0, len(refs))
	for f := range refs {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		o.Properties = append(o.Properties, Property{IRI: PropertyIRI(f), Label: f, Object: true,
			Comment: "The entity's " + f + " reference field (its owners, domains, data products, parent, service, contract subject, …)."})
	}
	return o
}

// Description is the ontology as a description of the projection.
func (o *Ontology) Description() Description {
	d := Description{Entity: OntologyIRI}
	add := func(s, p string, obj Term) { d.Triples = append(d.Triples, Triple{IRI(s), IRI(p), obj}) }
	add(OntologyIRI, rdfType, IRI(owlOntology))
	add(OntologyIRI, rdfsLabel, Literal("Meridian ontology"))
	add(OntologyIRI, rdfsComment, Literal("The RDF projection of the Meridian metadata catalog, aligned with DCAT, PROV-O, SKOS and Dublin Core."))
	for _, c := range o.Classes {
		add(c.IRI, rdfType, IRI(owlClass))
		add(c.IRI, rdfsLabel, Literal(c.Label))
		add(c.IRI, rdfsComment, Literal(c.Comment))
		for _, sup := range c.SubClassOf {
			add(c.IRI, rdfsSubClassOf, IRI(sup))
		}
	}
	for _, p := range o.Properties {
		typ := owlDatatypeProp
		if p.Object {
			typ = owlObjectProp
		}
		add(p.IRI, rdfType, IRI(typ))
		add(p.IRI, rdfsLabel, Literal(p.Label))
		add(p.IRI, rdfsComment, Literal(p.Comment))
	}
	return d
}

// Fingerprint is the SHA-256 of the ontology's triples in a canonical order: a snapshot
// written under another ontology (a kind or field added) is not loaded.
func (o *Ontology) Fingerprint() [32]byte {
	d := o.Description()
	lines := make([]string, len(d.Triples))
	for i, t := range d.Triples {
		lines[i] = fmt.Sprintf("%q %q %q %q %q\n", t.S.Value, t.P.Value, t.O.Value, t.O.Datatype, t.O.Lang)
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
