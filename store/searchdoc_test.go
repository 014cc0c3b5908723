package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

func TestSearchDocOfProjectsWordsAndFilters(t *testing.T) {
	reg := meridian.DefaultRegistry()
	kind := func(name string) *meridian.Kind {
		k, ok := reg.Kind(name)
		if !ok {
			t.Fatalf("no kind %s", name)
		}
		return k
	}
	table := meridian.Entity{"id": "t1", "name": "customerOrders", "fullyQualifiedName": "svc.db.sch.customerOrders",
		"displayName": "Customer Orders", "description": "All the orders_2024",
		"service": map[string]any{"name": "svc"}, "tags": []any{map[string]any{"tagFQN": "PII.Sensitive"}},
		"owners": []any{map[string]any{"name": "alice"}}, "domains": []any{map[string]any{"fullyQualifiedName": "Sales"}},
		"columns": []any{map[string]any{"name": "address", "tags": []any{map[string]any{"tagFQN": "PII.Sensitive"}},
			"children": []any{map[string]any{"name": "zipCode", "tags": []any{map[string]any{"tagFQN": "Tier.Gold"}}}}}},
	}
	got := SearchDocOf(kind("table"), table)
	got.Source = nil
	want := search.Doc{ID: "t1", Kind: "table", FQN: "svc.db.sch.customerOrders", Name: "customer orders",
		DisplayName: "customer orders", Description: "all the orders 2024", Columns: "svc db sch address zip code",
		Service: "svc", Tags: []string{"PII.Sensitive", "Tier.Gold"}, Owners: []string{"alice"}, Domains: []string{"Sales"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}

	if svc := SearchDocOf(kind("databaseService"), meridian.Entity{"id": "s", "name": "mysql_prod", "fullyQualifiedName": "mysql_prod"}); svc.Service != "mysql_prod" {
		t.Errorf("a service is its own service: %q", svc.Service)
	}
}

// TestSearchDocOfIndexesABoundedPrefixOfLongText: only the first 64 KiB of a field are
// indexed, so an 8 MiB description costs the writer no more than a long one.
func TestSearchDocOfIndexesABoundedPrefixOfLongText(t *testing.T) {
	k, _ := meridian.DefaultRegistry().Kind("glossary")
	long := strings.Repeat("orders ", 1<<20) + "needle"
	d := SearchDocOf(k, meridian.Entity{"id": "g", "name": "g", "fullyQualifiedName": "g", "description": long})
	if len(d.Description) > maxIndexedText {
		t.Fatalf("indexed %d bytes of description, want at most %d", len(d.Description), maxIndexedText)
	}
	if strings.Contains(d.Description, "needle") {
		t.Fatal("a word past the indexed prefix was indexed")
	}
	if !strings.HasPrefix(d.Description, "orders orders") {
		t.Fatalf("the prefix was not indexed: %.40q", d.Description)
	}
}

// TestSearchDocOfReadsTheKindsTextFields: a knowledge article's content and a context
// memory's question and answer are searched with the description.
func TestSearchDocOfReadsTheKindsTextFields(t *testing.T) {
	reg := meridian.DefaultRegistry()
	for _, tc := range []struct {
		kind string
		e    meridian.Entity
		want []string
	}{
		{"page", meridian.Entity{"content": "Refunds are booked on the order date"}, []string{"refund", "book"}},
		{"contextMemory", meridian.Entity{"question": "What is GMV?", "answer": "Gross merchandise value"}, []string{"gmv", "merchandis"}},
	} {
		k, _ := reg.Kind(tc.kind)
		tc.e["id"], tc.e["name"], tc.e["fullyQualifiedName"] = "x", "x", "x"
		d := SearchDocOf(k, tc.e)
		for _, w := range tc.want {
			if !strings.Contains(d.Description, w) {
				t.Errorf("%s: %q not in the indexed text %q", tc.kind, w, d.Description)
			}
		}
	}
}

func TestSearchSourceIsTheDocumentWithItsKind(t *testing.T) {
	for _, c := range []struct {
		name    string
		e       meridian.Entity
		spliced bool // the source is search.SourceOf the document's encoding
	}{
		{"a document", meridian.Entity{"name": "orders", "columns": []any{map[string]any{"name": "id"}}}, true},
		{"a document naming another kind", meridian.Entity{"name": "orders", "entityType": "view"}, false},
		{"an empty document", meridian.Entity{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc, err := json.Marshal(c.e)
			if err != nil {
				t.Fatal(err)
			}
			if got := spliced(c.e, enc); got != c.spliced {
				t.Errorf("spliced = %v, want %v", got, c.spliced)
			}
			src := withEntityType("table", c.e, enc)
			var got map[string]any
			if err := json.Unmarshal(src, &got); err != nil {
				t.Fatalf("source %s: %v", src, err)
			}
			want := map[string]any{"entityType": "table"}
			for k, v := range c.e {
				if k != "entityType" {
					want[k] = v
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("source = %v, want %v", got, want)
			}
		})
	}
}

func TestASnapshotsSearchDocumentRefersToItUnlessItHasAnEntityTypeOfItsOwn(t *testing.T) {
	k, _ := meridian.DefaultRegistry().Kind("table")
	for _, c := range []struct {
		name     string
		e        meridian.Entity
		snapshot bool
		refers   bool
	}{
		{"the write's snapshot", meridian.Entity{"id": "t1", "name": "orders"}, true, true},
		{"a snapshot with a field named entityType", meridian.Entity{"id": "t1", "name": "orders", "entityType": "view"}, true, false},
		{"a document reindexed, not written", meridian.Entity{"id": "t1", "name": "orders"}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc, err := json.Marshal(c.e)
			if err != nil {
				t.Fatal(err)
			}
			d := searchDoc(k, c.e, enc, c.snapshot)
			if d.Snapshot != c.refers || (d.Source == nil) != c.refers {
				t.Errorf("Snapshot = %v with a source of %d bytes, want a reference: %v", d.Snapshot, len(d.Source), c.refers)
			}
		})
	}
}
