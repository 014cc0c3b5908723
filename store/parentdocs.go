package store

import (
	"sync"

	"github.com/meridian-catalog/meridian"
)

// parentDocsMax bounds the documents parentDocs keeps.
const parentDocsMax = 256

// parentDocs are parents' documents as locate decoded them lately, for the creates of a
// load that all name the same schema (or database, or glossary): decoding a schema's
// document from JSON for each table cost about a twentieth of a bulk load's CPU. A
// document is kept under its row's bytes, which rows of recentRows share between the
// creates that found them (rowscan reads give each read bytes of its own, which are
// then simply not found): the same array holds the same document, and the key keeps
// the array from being freed and reused while it is kept. Only documents whose reading
// depends on nothing but those bytes are kept (no relationship field, no secret); each
// is handed out as a deep copy. Safe for concurrent use; the zero value is empty.
type parentDocs struct {
	mu   sync.Mutex
	docs map[*byte]meridian.Entity
}

// get returns a copy of the document kept for doc, if any.
func (c *parentDocs) get(doc []byte) (meridian.Entity, bool) {
	if len(doc) == 0 {
		return nil, false
	}
	c.mu.Lock()
	e, ok := c.docs[&doc[0]]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return e.Clone(), true
}

// put keeps a copy of e, the document decoded from doc. When full, it forgets every
// document it kept.
func (c *parentDocs) put(doc []byte, e meridian.Entity) {
	if len(doc) == 0 {
		return
	}
	e = e.Clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.docs == nil || len(c.docs) >= parentDocsMax {
		c.docs = map[*byte]meridian.Entity{}
	}
	c.docs[&doc[0]] = e
}
