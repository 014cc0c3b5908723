package graph

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
)

// Upstream is one lineage edge into an entity: the upstream end and the column
// mappings of the edge (column FQNs).
type Upstream struct {
	Kind, ID, FQN string
	Columns       []ColumnEdge
}

// ColumnEdge maps upstream columns to one downstream column, by FQN.
type ColumnEdge struct {
	From []string
	To   string
}

// Source is what the projection reads of the catalog.
type Source interface {
	// Entity reads an entity with the fields the projection maps, soft-deleted ones
	// included, secrets masked. ENotFound when there is none.
	Entity(ctx context.Context, kind, id string) (meridian.Entity, error)
	// Upstream lists the lineage edges into the entity.
	Upstream(ctx context.Context, kind, id string) ([]Upstream, error)
	// Resolve returns the id of the entity of kind with the FQN. ENotFound when none.
	Resolve(ctx context.Context, kind, fqn string) (string, error)
	// Each calls f with the kind and id of every entity, soft-deleted ones included.
	Each(ctx context.Context, f func(kind, id string) error) error
}

// ProjectedFields are the ?fields= the projection asks for, when the kind has them.
var ProjectedFields = []string{"owners", "domains", "dataProducts", "reviewers", "experts", "teams", "personas",
	"tags", "columns", "testSuite", "testDefinition", "testCaseResult", "relatedTerms", "relatedMetrics"}

// skipped are document fields the projection leaves out: mapped otherwise, derived
// from other entities (so stale without an event of their own), or internal.
var skipped = map[string]bool{"id": true, "name": true, "fullyQualifiedName": true, "displayName": true,
	"description": true, "deleted": true, "href": true, "version": true, "updatedAt": true, "updatedBy": true,
	"changeDescription": true, "incrementalChangeDescription": true, "tags": true, "columns": true,
	"entityLink": true, "children": true, "usageCount": true, "termCount": true, "followers": true,
	"votes": true, "usageSummary": true, "owns": true, "follows": true, "summary": true, "tests": true,
	"testCaseResult": true, "extension": true, "$sealed": true}

// maxLiteral is the longest scalar field value projected (descriptions are whole).
const maxLiteral = 2000

// mask is the text secrets are answered as; a masked value is never projected.
const mask = "*********"

// Projector maps entities to descriptions.
type Projector struct {
	reg *meridian.Registry
	src Source
}

// NewProjector returns the projector of the registry's kinds, reading src.
func NewProjector(reg *meridian.Registry, src Source) *Projector {
	return &Projector{reg: reg, src: src}
}

// Project reads the entity and its upstream edges and describes it. found is false
// when the entity no longer exists (its description should be removed). Errors: the
// source's.
func (p *Projector) Project(ctx context.Context, kind, id string) (d Description, found bool, err error) {
	k, ok := p.reg.Kind(kind)
	if !ok {
		return Description{}, false, nil
	}
	e, err := p.src.Entity(ctx, kind, id)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return Description{}, false, nil
	}
	if err != nil {
		return Description{}, false, err
	}
	d, err = p.projectEntity(ctx, k, e)
	return d, err == nil, err
}

// projectEntity reads the upstream edges of an entity read already and describes it.
func (p *Projector) projectEntity(ctx context.Context, k *meridian.Kind, e meridian.Entity) (Description, error) {
	var ups []Upstream
	if !k.NoLineage {
		var err error
		if ups, err = p.src.Upstream(ctx, k.Name, e.ID()); err != nil && meridian.ErrorCode(err) != meridian.ENotFound {
			return Description{}, err
		}
	}
	return p.Describe(ctx, k, e, ups)
}

// Describe maps one entity document and its upstream edges to its description:
//
//   - the entity node: rdf:type its Meridian class and its kind's standard classes,
//     dct:identifier its FQN, rdfs:label its name, dct:title its display name,
//     dct:description, dct:modified, mer:entityType, mer:deleted when soft-deleted;
//   - every reference field as mer:<field> to the referenced entity, except the
//     kind's Broader (skos:broader) and Scheme (skos:inScheme) fields;
//   - tag labels as mer:tag to the tag or glossary term;
//   - columns as nodes of their own (mer:Column, linked by mer:column and back by
//     mer:columnOf), with their tags and nested columns;
//   - lineage as prov:wasDerivedFrom to each upstream entity, and between columns;
//   - a test case's entity link as mer:entityLink, and other short scalar fields
//     (testCaseStatus, tableType, …) as mer:<field> literals.
func (p *Projector) Describe(ctx context.Context, k *meridian.Kind, e meridian.Entity, ups []Upstream) (Description, error) {
	iri := EntityIRI(k.Name, e.ID())
	d := Description{Entity: iri, Deleted: e.Deleted()}
	// About 16 triples for the entity and 8 for each top-level column: one allocation
	// for most descriptions instead of a slice grown column by column.
	cols, _ := e["columns"].([]any)
	d.Triples = make([]Triple, 0, 16+8*len(cols))
	s := IRI(iri)
	add := func(subj Term, pred string, o Term) { d.Triples = append(d.Triples, Triple{subj, IRI(pred), o}) }
	add(s, rdfType, IRI(ClassIRI(k.Name)))
	for _, c := range k.Graph.Classes {
		add(s, rdfType, IRI(c))
	}
	add(s, merEntityType, Literal(k.Name))
	if v := e.FQN(); v != "" {
		add(s, dctIdentifier, Literal(v))
	}
	if v := e.Name(); v != "" {
		add(s, rdfsLabel, Literal(v))
	}
	if v := e.String("displayName"); v != "" {
		add(s, dctTitle, Literal(v))
	}
	if v := e.String("description"); v != "" {
		add(s, dctDescription, Literal(v))
	}
	if ms, ok := e["updatedAt"].(float64); ok && ms > 0 {
		add(s, dctModified, TypedLiteral(time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339Nano), xsdDateTime))
	}
	if e.Deleted() {
		add(s, merDeleted, TypedLiteral("true", xsdBoolean))
	}
	fields := make([]string, 0, len(e))
	for f := range e {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		v := e[f]
		pred := PropertyIRI(f)
		switch f {
		case k.Graph.Broader:
			pred = skosBroader
		case k.Graph.Scheme:
			pred = skosInScheme
		}
		if ref, ok := refIRI(v); ok {
			add(s, pred, IRI(ref))
			continue
		}
		if skipped[f] {
			continue
		}
		switch x := v.(type) {
		case []any:
			for _, item := range x {
				if ref, ok := refIRI(item); ok {
					add(s, pred, IRI(ref))
				}
			}
		case string:
			if x != "" && x != mask && len(x) <= maxLiteral {
				add(s, pred, Literal(x))
			}
		case float64:
			add(s, pred, numberLiteral(x))
		case json.Number:
			add(s, pred, TypedLiteral(x.String(), xsdDecimal))
		case bool:
			add(s, pred, TypedLiteral(strconv.FormatBool(x), xsdBoolean))
		}
	}
	if r, ok := e["testCaseResult"].(map[string]any); ok && e["testCaseStatus"] == nil {
		if st, ok := r["testCaseStatus"].(string); ok && st != "" {
			add(s, PropertyIRI("testCaseStatus"), Literal(st))
		}
	}
	p.tags(ctx, &d, s, e["tags"])
	if link := e.String("entityLink"); link != "" {
		if target, ok := p.linkIRI(ctx, link); ok {
			add(s, merEntityLink, IRI(target))
		}
	}
	p.columns(ctx, &d, s, iri, e.FQN(), nil, cols)
	for _, up := range ups {
		upIRI := EntityIRI(up.Kind, up.ID)
		add(s, provDerivedFrom, IRI(upIRI))
		for _, ce := range up.Columns {
			to, ok := columnOf(iri, e.FQN(), ce.To)
			if !ok {
				continue
			}
			for _, from := range ce.From {
				if f, ok := columnOf(upIRI, up.FQN, from); ok {
					add(IRI(to), provDerivedFrom, IRI(f))
				}
			}
		}
	}
	return d, nil
}

// columns describes a list of columns (nested ones below parent).
func (p *Projector) columns(ctx context.Context, d *Description, owner Term, entity, fqn string, parent []string, cols []any) {
	for _, c := range cols {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if name == "" {
			continue
		}
		path := append(append([]string{}, parent...), name)
		col := IRI(ColumnIRI(entity, path))
		colFQN := fqn + "." + meridian.QuoteName(name)
		add := func(pred string, o Term) { d.Triples = append(d.Triples, Triple{col, IRI(pred), o}) }
		d.Triples = append(d.Triples, Triple{owner, IRI(merColumnProp), col})
		add(rdfType, IRI(merColumn))
		add(merColumnOf, IRI(entity))
		add(rdfsLabel, Literal(name))
		add(dctIdentifier, Literal(colFQN))
		if v, _ := m["displayName"].(string); v != "" {
			add(dctTitle, Literal(v))
		}
		if v, _ := m["description"].(string); v != "" {
			add(dctDescription, Literal(v))
		}
		if v, _ := m["dataType"].(string); v != "" {
			add(merDataType, Literal(v))
		}
		p.tags(ctx, d, col, m["tags"])
		if kids, ok := m["children"].([]any); ok && len(path) < 16 {
			p.columns(ctx, d, col, entity, colFQN, path, kids)
		}
	}
}

// tags adds mer:tag for each tag label that names an existing tag or glossary term.
func (p *Projector) tags(ctx context.Context, d *Description, subj Term, v any) {
	labels, _ := v.([]any)
	for _, l := range labels {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		fqn, _ := m["tagFQN"].(string)
		if fqn == "" {
			continue
		}
		kind := meridian.KindTag
		if src, _ := m["source"].(string); src == "Glossary" {
			kind = meridian.KindGlossaryTerm
		}
		id, err := p.src.Resolve(ctx, kind, fqn)
		if err != nil {
			continue
		}
		d.Triples = append(d.Triples, Triple{subj, IRI(merTag), IRI(EntityIRI(kind, id))})
	}
}

// linkIRI resolves an entity link to the entity's (or its column's) IRI.
func (p *Projector) linkIRI(ctx context.Context, link string) (string, bool) {
	l, err := meridian.ParseEntityLink(link)
	if err != nil {
		return "", false
	}
	id, err := p.src.Resolve(ctx, l.EntityType, l.FQN)
	if err != nil {
		return "", false
	}
	iri := EntityIRI(l.EntityType, id)
	if l.Field == "columns" && l.ArrayField != "" {
		if parts, err := meridian.SplitFQN(l.ArrayField); err == nil {
			return ColumnIRI(iri, parts), true
		}
	}
	return iri, true
}

// columnOf returns the IRI of the column with colFQN of the entity with fqn.
func columnOf(entity, fqn, colFQN string) (string, bool) {
	rest, ok := strings.CutPrefix(colFQN, fqn+".")
	if !ok {
		return "", false
	}
	parts, err := meridian.SplitFQN(rest)
	if err != nil {
		return "", false
	}
	return ColumnIRI(entity, parts), true
}

// refIRI returns the IRI of an entity reference ({id, type, …}).
func refIRI(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	id, _ := m["id"].(string)
	typ, _ := m["type"].(string)
	if id == "" || typ == "" {
		return "", false
	}
	return EntityIRI(typ, id), true
}

func numberLiteral(x float64) Term {
	if x == float64(int64(x)) {
		return TypedLiteral(strconv.FormatInt(int64(x), 10), xsdInteger)
	}
	return TypedLiteral(strconv.FormatFloat(x, 'g', -1, 64), xsdDecimal)
}
