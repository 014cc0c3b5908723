package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/meridian-catalog/meridian/graph"
)

// catalog is a synthetic catalog's projection.
type catalog struct {
	descs   []graph.Description
	tables  []int    // indexes of the tables' descriptions
	tagFQNs []string // tags with descendants
	users   []string // user IRIs
	triples int
}

const (
	rdfType     = graph.NSRDF + "type"
	rdfsLabel   = graph.NSRDFS + "label"
	dctID       = graph.NSDCT + "identifier"
	dctDesc     = graph.NSDCT + "description"
	skosConcept = graph.NSSKOS + "Concept"
	skosBroader = graph.NSSKOS + "broader"
	derivedFrom = graph.NSPROV + "wasDerivedFrom"
)

// generate builds n entities in the projection's vocabulary: 1 % users, 2 % tags in
// classification trees, 25 % tables with two columns each and a dense lineage (each
// table derives from two of the 50 tables before it), and the rest dashboards,
// pipelines and topics with an owner and, often, an upstream table.
func generate(n int, seed uint64) *catalog {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := &catalog{}
	iri := graph.IRI
	lit := graph.Literal
	entity := func(kind, id, fqn, name string) (graph.Description, graph.Term) {
		s := iri(graph.EntityIRI(kind, id))
		return graph.Description{Entity: s.Value, Triples: []graph.Triple{
			{S: s, P: iri(rdfType), O: iri(graph.ClassIRI(kind))},
			{S: s, P: iri(graph.NSMer + "entityType"), O: lit(kind)},
			{S: s, P: iri(dctID), O: lit(fqn)},
			{S: s, P: iri(rdfsLabel), O: lit(name)},
		}}, s
	}
	users := max(1, n/100)
	for i := 0; i < users; i++ {
		d, s := entity("user", fmt.Sprintf("u%06d", i), fmt.Sprintf("user%06d", i), fmt.Sprintf("user%06d", i))
		c.users = append(c.users, s.Value)
		c.add(d)
	}
	tags := max(7, n/50)
	var tagIRIs []graph.Term
	for i := 0; i < tags; i++ {
		cls := i % 10
		fqn := fmt.Sprintf("Class%d.t%05d", cls, i)
		d, s := entity("tag", fmt.Sprintf("g%06d", i), fqn, fmt.Sprintf("t%05d", i))
		d.Triples = append(d.Triples, graph.Triple{S: s, P: iri(rdfType), O: iri(skosConcept)})
		if parent := (i - 10) / 3; i >= 10 {
			// A tree per classification: tag i under tag parent (same classification).
			p := parent - parent%10 + cls
			if p >= 0 && p < i {
				d.Triples = append(d.Triples, graph.Triple{S: s, P: iri(skosBroader), O: tagIRIs[p]})
			}
		}
		if i < 200 {
			c.tagFQNs = append(c.tagFQNs, fqn)
		}
		tagIRIs = append(tagIRIs, s)
		c.add(d)
	}
	nTables := n / 4
	var tableIRIs []graph.Term
	for i := 0; i < nTables; i++ {
		fqn := fmt.Sprintf("svc.db.s%02d.t%06d", i%40, i)
		d, s := entity("table", fmt.Sprintf("t%06d", i), fqn, fmt.Sprintf("t%06d", i))
		d.Triples = append(d.Triples,
			graph.Triple{S: s, P: iri(rdfType), O: iri(graph.NSDCAT + "Dataset")},
			graph.Triple{S: s, P: iri(dctDesc), O: lit(fmt.Sprintf("Table %d of the synthetic catalog", i))},
			graph.Triple{S: s, P: iri(graph.NSMer + "owners"), O: iri(c.users[rng.IntN(len(c.users))])})
		for k := 0; k < 2; k++ {
			name := []string{"id", "customer_email"}[k]
			col := iri(graph.ColumnIRI(s.Value, []string{name}))
			d.Triples = append(d.Triples,
				graph.Triple{S: s, P: iri(graph.NSMer + "column"), O: col},
				graph.Triple{S: col, P: iri(rdfType), O: iri(graph.NSMer + "Column")},
				graph.Triple{S: col, P: iri(graph.NSMer + "columnOf"), O: s},
				graph.Triple{S: col, P: iri(rdfsLabel), O: lit(name)})
			if k == 1 && rng.IntN(3) == 0 {
				d.Triples = append(d.Triples, graph.Triple{S: col, P: iri(graph.NSMer + "tag"), O: tagIRIs[rng.IntN(len(tagIRIs))]})
			}
		}
		if rng.IntN(4) == 0 {
			d.Triples = append(d.Triples, graph.Triple{S: s, P: iri(graph.NSMer + "tag"), O: tagIRIs[rng.IntN(len(tagIRIs))]})
		}
		for k := 0; k < 2 && i > 0; k++ {
			up := i - 1 - rng.IntN(min(i, 50))
			d.Triples = append(d.Triples, graph.Triple{S: s, P: iri(derivedFrom), O: tableIRIs[up]})
		}
		tableIRIs = append(tableIRIs, s)
		c.tables = append(c.tables, len(c.descs))
		c.add(d)
	}
	kinds := []string{"dashboard", "pipeline", "topic"}
	for i := 0; len(c.descs) < n; i++ {
		kind := kinds[i%len(kinds)]
		d, s := entity(kind, fmt.Sprintf("a%06d", i), fmt.Sprintf("svc.%s%06d", kind, i), fmt.Sprintf("%s%06d", kind, i))
		d.Triples = append(d.Triples, graph.Triple{S: s, P: iri(graph.NSMer + "owners"), O: iri(c.users[rng.IntN(len(c.users))])})
		if len(tableIRIs) > 0 && rng.IntN(3) > 0 {
			d.Triples = append(d.Triples, graph.Triple{S: s, P: iri(derivedFrom), O: tableIRIs[rng.IntN(len(tableIRIs))]})
		}
		if rng.IntN(5) == 0 {
			d.Triples = append(d.Triples, graph.Triple{S: s, P: iri(graph.NSMer + "tag"), O: tagIRIs[rng.IntN(len(tagIRIs))]})
		}
		c.add(d)
	}
	return c
}

func (c *catalog) add(d graph.Description) {
	c.descs = append(c.descs, d)
	c.triples += len(d.Triples)
}
