package graph

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
)

// syntheticCatalog describes n tables of 6 columns each (about 43 triples a table),
// with lineage to an earlier table, a tag and an owner.
func syntheticCatalog(n int) []Description {
	return syntheticRange(0, n)
}

func syntheticRange(from, n int) []Description {
	descs := make([]Description, 0, n)
	for i := from; i < from+n; i++ {
		iri := EntityIRI("table", fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
		s := IRI(iri)
		d := Description{Entity: iri, Triples: []Triple{
			{s, IRI(rdfType), IRI(ClassIRI("table"))},
			{s, IRI(rdfType), IRI(NSDCAT + "Dataset")},
			{s, IRI(merEntityType), Literal("table")},
			{s, IRI(dctIdentifier), Literal(fmt.Sprintf("svc.db.schema_%d.table_%d", i%100, i))},
			{s, IRI(rdfsLabel), Literal(fmt.Sprintf("table_%d", i))},
			{s, IRI(dctDescription), Literal(fmt.Sprintf("Table number %d of the synthetic catalog.", i))},
			{s, IRI(merTag), IRI(EntityIRI("tag", fmt.Sprintf("tag-%d", i%300)))},
			{s, IRI(PropertyIRI("owners")), IRI(EntityIRI("user", fmt.Sprintf("user-%d", i%2000)))},
		}}
		if i > 0 {
			d.Triples = append(d.Triples, Triple{s, IRI(provDerivedFrom), IRI(EntityIRI("table", fmt.Sprintf("00000000-0000-0000-0000-%012d", (i*7919)%i)))})
		}
		for c := 0; c < 6; c++ {
			col := IRI(ColumnIRI(iri, []string{fmt.Sprintf("col_%d", c)}))
			d.Triples = append(d.Triples, Triple{s, IRI(merColumnProp), col},
				Triple{col, IRI(rdfType), IRI(merColumn)},
				Triple{col, IRI(merColumnOf), s},
				Triple{col, IRI(rdfsLabel), Literal(fmt.Sprintf("col_%d", c))},
				Triple{col, IRI(dctIdentifier), Literal(fmt.Sprintf("svc.db.schema_%d.table_%d.col_%d", i%100, i, c))},
				Triple{col, IRI(merDataType), Literal("VARCHAR")})
		}
		descs = append(descs, d)
	}
	return descs
}

// syntheticTags describes n tags, tag-i broader than tag-(i*10+k).
func syntheticTags(n int) []Description {
	var out []Description
	for i := 0; i < n; i++ {
		iri := EntityIRI("tag", fmt.Sprintf("tag-%d", i))
		d := Description{Entity: iri, Triples: []Triple{
			{IRI(iri), IRI(rdfType), IRI(skosConcept)},
			{IRI(iri), IRI(dctIdentifier), Literal(fmt.Sprintf("T.tag-%d", i))},
			{IRI(iri), IRI(rdfsLabel), Literal(fmt.Sprintf("tag-%d", i))},
		}}
		if i > 0 {
			d.Triples = append(d.Triples, Triple{IRI(iri), IRI(skosBroader), IRI(EntityIRI("tag", fmt.Sprintf("tag-%d", (i-1)/10)))})
		}
		out = append(out, d)
	}
	return out
}

// BenchmarkMillionTriples loads about 1 M triples and reports the heap the store
// holds, the load time and a few query times. Run it with
// go test -run '^$' -bench MillionTriples -benchtime 1x ./graph.
func BenchmarkMillionTriples(b *testing.B) {
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		e := NewEmbedded()
		all := append(syntheticCatalog(24000), syntheticTags(300)...)
		start := time.Now()
		for i := 0; i < len(all); i += 500 {
			_ = e.Load(context.Background(), all[i:min(i+500, len(all))])
		}
		load := time.Since(start)
		all = nil
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		b.ReportMetric(float64(e.Store().Len()), "triples")
		b.ReportMetric(heap/(1<<20), "heap-MB")
		b.ReportMetric(load.Seconds(), "load-s")
		for _, q := range []struct{ name, text string }{
			{"limit10", "SELECT * WHERE { ?s ?p ?o } LIMIT 10"},
			{"tagjoin", "SELECT ?c WHERE { ?t <" + merTag + "> <" + EntityIRI("tag", "tag-7") + "> ; <" + merColumnProp + "> ?c }"},
			{"closure", "SELECT ?u WHERE { <" + EntityIRI("table", "00000000-0000-0000-0000-000000023999") + "> <" + provDerivedFrom + ">+ ?u }"},
		} {
			start := time.Now()
			r, err := e.Query(context.Background(), prologue()+q.text, Limits{Rows: MaxRows})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000, q.name+"-ms")
			_ = r
		}
		sync := NewSync(meridian.DefaultRegistry(), nil, e, nil)
		sync.MarkReady()
		svc := NewService(Config{Backend: e, Sync: sync})
		var lat []time.Duration
		for i := 0; i < 200; i++ {
			start := time.Now()
			iri := EntityIRI("table", fmt.Sprintf("00000000-0000-0000-0000-%012d", (i*97)%24000))
			if _, err := svc.Neighborhood(context.Background(), reader, iri, 2, 200, false); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[100].Microseconds())/1000, "neighbourhood-p50-ms")
		b.ReportMetric(float64(lat[197].Microseconds())/1000, "neighbourhood-p99-ms")
		lat = lat[:0]
		for i := 0; i < 50; i++ {
			start := time.Now()
			page, err := svc.FindByTag(context.Background(), reader, fmt.Sprintf("T.tag-%d", i%30), []string{"table"}, 50, "")
			if err != nil || len(page.Entities) == 0 {
				b.Fatal(err, page)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[25].Microseconds())/1000, "findbytag-p50-ms")
		b.ReportMetric(float64(lat[49].Microseconds())/1000, "findbytag-max-ms")
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start = time.Now()
		_, err := e.Query(context.Background(), "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }", Limits{})
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "cartesian-ms")
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20), "cartesian-alloc-MB")
		if GraphCode(err) != CodeWorkExceeded {
			b.Fatalf("cartesian product: %v", err)
		}
		start = time.Now()
		for i := 0; i < 1000; i++ {
			d := syntheticCatalog(1)[0]
			d.Entity = EntityIRI("table", fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
			_ = e.Apply(context.Background(), Delta{Put: []Description{d}})
		}
		b.ReportMetric(1000/time.Since(start).Seconds(), "updates/s")
	}
}
