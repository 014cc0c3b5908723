package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// agree checks quick against the library for one document of a kind: when quick
// decides, it must decide as the library does. It reports whether quick decided.
func agree(t *testing.T, v *Validator, kind string, doc meridian.Entity) bool {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	var x any // the document as decoding JSON makes it, as Validate sees it
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	sch := v.schemas[kind]
	lib := sch.Validate(x) == nil
	got, known := quick(sch, x)
	if known && got != lib {
		t.Errorf("%s %s: quick says valid=%v, the library %v", kind, b, got, lib)
	}
	return known
}

// quickOdd are values put in place of fields: every JSON type, edge lengths and
// numbers, and shapes the schemas nest.
var quickOdd = []any{
	nil, true, false, 0.0, 1.0, -1.5, 1e21, 0.1, "", "x", "a::b", strings.Repeat("é", 257), strings.Repeat("x", 3073),
	"00000000-0000-0000-0000-000000000000", "not-a-uuid", "Regular", "BIGINT", "Tier1",
	[]any{}, []any{nil}, []any{"a"}, []any{map[string]any{}}, map[string]any{},
	map[string]any{"name": "c"}, map[string]any{"id": "00000000-0000-0000-0000-000000000000", "type": "user"},
	[]any{map[string]any{"name": "c", "dataType": "INT"}}, []any{map[string]any{"tagFQN": "PII.Sensitive"}},
}

// TestQuickAgreesWithTheLibrary puts each odd value in place of every top-level
// field, and of every field of a table's column and tag label, of every kind's
// minimal document, and removes each field in turn; wherever quick decides, it decides
// as the library does.
func TestQuickAgreesWithTheLibrary(t *testing.T) {
	v := newValidator(t)
	checked, decided := 0, 0
	count := func(known bool) {
		checked++
		if known {
			decided++
		}
	}
	for _, k := range meridian.DefaultKinds() {
		base := document(t, v, k.Name, createBodies[k.Name])
		count(agree(t, v, k.Name, base))
		fields := []string{"unknownField"}
		for f := range v.schemas[k.Name].Properties {
			fields = append(fields, f)
		}
		for _, f := range fields {
			for _, x := range quickOdd {
				e := document(t, v, k.Name, createBodies[k.Name])
				e[f] = x
				count(agree(t, v, k.Name, e))
			}
			e := document(t, v, k.Name, createBodies[k.Name])
			delete(e, f)
			count(agree(t, v, k.Name, e))
		}
	}
	column := map[string]any{"name": "id", "dataType": "BIGINT",
		"tags": []any{map[string]any{"tagFQN": "PII.Sensitive", "source": "Classification", "labelType": "Manual", "state": "Confirmed"}}}
	for _, f := range []string{"name", "dataType", "dataLength", "constraint", "ordinalPosition", "children", "tags", "unknownField"} {
		for _, x := range quickOdd {
			c := meridian.CloneValue(column).(map[string]any)
			c[f] = x
			e := document(t, v, "table", createBodies["table"])
			e["columns"] = []any{c}
			count(agree(t, v, "table", e))
		}
	}
	for _, f := range []string{"tagFQN", "source", "labelType", "state", "style", "appliedAt", "unknownField"} {
		for _, x := range quickOdd {
			c := meridian.CloneValue(column).(map[string]any)
			c["tags"].([]any)[0].(map[string]any)[f] = x
			e := document(t, v, "table", createBodies["table"])
			e["columns"] = []any{c}
			count(agree(t, v, "table", e))
		}
	}
	t.Logf("quick decided %d of %d documents", decided, checked)
}

// TestQuickDecidesATable: a table with columns and tags, the bulk of any ingest, is
// decided by quick, valid or not; its schema uses no keyword quick leaves to the
// library.
func TestQuickDecidesATable(t *testing.T) {
	v := newValidator(t)
	e := document(t, v, "table", `{"name": "orders", "databaseSchema": "mysql_prod.sales.public", "description": "Orders.",
		"tableType": "View", "tags": [{"tagFQN": "Tier.Tier1", "source": "Classification", "labelType": "Manual", "state": "Confirmed"}],
		"columns": [{"name": "id", "dataType": "BIGINT", "constraint": "PRIMARY_KEY"},
			{"name": "email", "dataType": "VARCHAR", "dataLength": 320, "tags": [{"tagFQN": "PII.Sensitive"}]},
			{"name": "amount", "dataType": "DECIMAL", "precision": 18, "scale": 2, "description": "Total."}]}`)
	if !agree(t, v, "table", e) {
		t.Fatal("quick left a valid table to the library")
	}
	e["columns"].([]any)[1].(map[string]any)["dataLength"] = 1.5
	if !agree(t, v, "table", e) {
		t.Fatal("quick left an invalid table to the library")
	}
}

// FuzzQuickAgreesWithTheLibrary merges any JSON object into a kind's minimal document
// (or puts any JSON value in place of one field) and checks that quick, when it
// decides, decides as the library does.
func FuzzQuickAgreesWithTheLibrary(f *testing.F) {
	f.Add(uint8(0), `{"columns":[{"name":"id","dataType":"INT","tags":[{"tagFQN":"a"}]}]}`)
	f.Add(uint8(3), `{"tags":[{"tagFQN":"PII.Sensitive","labelType":"Bogus"}]}`)
	f.Add(uint8(7), `{"owners":[{"id":"00000000-0000-0000-0000-000000000000","type":"user"}],"version":0.1}`)
	f.Add(uint8(9), `"x"`)
	f.Add(uint8(11), `{"name":"a::b","extension":{"k":[1,2,{"x":null}]}}`)
	kinds := meridian.DefaultKinds()
	v, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		k := kinds[int(which)%len(kinds)]
		var x any
		if json.Unmarshal([]byte(body), &x) != nil {
			return
		}
		e := document(t, v, k.Name, createBodies[k.Name])
		switch y := x.(type) {
		case map[string]any:
			for name, val := range y {
				e[name] = val
			}
		default:
			e["columns"] = y
		}
		agree(t, v, k.Name, e)
	})
}
