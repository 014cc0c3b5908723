package store

import (
	"fmt"
	"testing"
)

func TestTagNodesFollowTheDocument(t *testing.T) {
	var c tagNodes
	key := RowKey{Kind: "tag", FQN: "PII.Sensitive"}
	steps := []struct {
		name string
		doc  string
		want tagNode
	}{
		{"decoded", `{"name":"Sensitive","disabled":false}`, tagNode{found: true}},
		{"the same document again", `{"name":"Sensitive","disabled":false}`, tagNode{found: true}},
		{"disabled since", `{"name":"Sensitive","disabled":true}`, tagNode{found: true, disabled: true}},
		{"mutually exclusive since", `{"name":"Sensitive","mutuallyExclusive":true}`, tagNode{found: true, mutuallyExclusive: true}},
	}
	for _, st := range steps {
		got, err := c.of(key, []byte(st.doc))
		if err != nil || got != st.want {
			t.Fatalf("%s: %+v, %v; want %+v", st.name, got, err, st.want)
		}
	}
	if _, err := c.of(key, []byte(`not json`)); err == nil {
		t.Fatal("a document that is not JSON was decoded")
	}
}

func TestTagNodesAreBounded(t *testing.T) {
	var c tagNodes
	for i := range maxTagNodes + 10 {
		if _, err := c.of(RowKey{Kind: "tag", FQN: fmt.Sprintf("C.t%d", i)}, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > maxTagNodes {
		t.Fatalf("%d tag nodes kept, want at most %d", n, maxTagNodes)
	}
}
