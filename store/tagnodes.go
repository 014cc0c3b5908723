package store

import (
	"bytes"
	"encoding/json"
	"sync"
)

// tagNode is what the tag rules need of a classification, tag, glossary or glossary
// term.
type tagNode struct {
	found, disabled, mutuallyExclusive bool
}

// maxTagNodes bounds tagNodes: when it holds this many, it starts over.
const maxTagNodes = 4096

// tagNodes keeps the tagNode decoded from the documents of the classifications, tags,
// glossaries and terms read lately, with the document each came from. A row read again
// with the same document is not decoded again: a table names the same few tags on
// many columns, and a catalog's tables name the same tags. The zero value is ready.
type tagNodes struct {
	mu sync.Mutex
	m  map[RowKey]decodedTagNode
}

type decodedTagNode struct {
	doc  []byte // a copy of the document node was decoded from
	node tagNode
}

// of returns the tagNode of the row key names, found, whose document is doc.
// Errors: doc is not a JSON object.
func (c *tagNodes) of(key RowKey, doc []byte) (tagNode, error) {
	c.mu.Lock()
	d, ok := c.m[key]
	c.mu.Unlock()
	if ok && bytes.Equal(d.doc, doc) {
		return d.node, nil
	}
	var fields struct {
		Disabled          bool `json:"disabled"`
		MutuallyExclusive bool `json:"mutuallyExclusive"`
	}
	if err := json.Unmarshal(doc, &fields); err != nil {
		return tagNode{}, err
	}
	n := tagNode{found: true, disabled: fields.Disabled, mutuallyExclusive: fields.MutuallyExclusive}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxTagNodes {
		c.m = make(map[RowKey]decodedTagNode)
	}
	c.m[key] = decodedTagNode{doc: bytes.Clone(doc), node: n}
	c.mu.Unlock()
	return n, nil
}
