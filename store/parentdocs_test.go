package store

import (
	"fmt"
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestParentDocsAnswerCopiesOfTheSameBytesOnly(t *testing.T) {
	var c parentDocs
	doc := []byte(`{"name":"staging","service":{"name":"warehouse"}}`)
	c.put(doc, meridian.Entity{"name": "staging", "service": map[string]any{"name": "warehouse"}})

	got, ok := c.get(doc)
	if !ok || got.Name() != "staging" {
		t.Fatalf("get = %v, %v", got, ok)
	}
	got["name"] = "changed"
	got["service"].(map[string]any)["name"] = "changed"
	again, _ := c.get(doc)
	if again.Name() != "staging" || again["service"].(map[string]any)["name"] != "warehouse" {
		t.Errorf("a change to an answer reached the kept document: %v", again)
	}

	same := append([]byte(nil), doc...) // the same bytes read again: another array
	if e, ok := c.get(same); ok {
		t.Errorf("bytes of another read answered %v", e)
	}
	if _, ok := c.get(nil); ok {
		t.Error("an empty document was answered")
	}
}

func TestParentDocsAreBounded(t *testing.T) {
	var c parentDocs
	docs := make([][]byte, parentDocsMax+1)
	for i := range docs {
		docs[i] = []byte(fmt.Sprintf(`{"name":"s%d"}`, i))
		c.put(docs[i], meridian.Entity{"name": fmt.Sprintf("s%d", i)})
		if len(c.docs) > parentDocsMax {
			t.Fatalf("%d documents kept, want at most %d", len(c.docs), parentDocsMax)
		}
	}
	if e, ok := c.get(docs[parentDocsMax]); !ok || e.Name() != fmt.Sprintf("s%d", parentDocsMax) {
		t.Errorf("the last document put = %v, %v", e, ok)
	}
}
