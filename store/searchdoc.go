package store

import (
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// maxIndexedText bounds the text of one field the keyword index reads: a longer
// description is stored whole, but only its first 64 KiB are searchable, so that a very
// large document costs the single writer little more than an ordinary one.
const maxIndexedText = 64 << 10

// words joins the search words of text (its first maxIndexedText bytes) with spaces, as
// the index stores them.
func words(text string) string {
	if len(text) > maxIndexedText {
		cut := maxIndexedText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return strings.Join(search.Words(text), " ")
}

// SearchDocOf projects a full entity document for the keyword index. e must have its
// secrets masked (the engine passes the form its change events hold), so that secrets
// never reach the index.
func SearchDocOf(k *meridian.Kind, e meridian.Entity) search.Doc {
	return searchDoc(k, e, encode(e), false)
}

// SearchFieldsOf is SearchDocOf without the document's Source, for a caller that
// needs only its fields (the semantic index), so the entity is not encoded.
func SearchFieldsOf(k *meridian.Kind, e meridian.Entity) search.Doc {
	return searchDoc(k, e, nil, false)
}

// searchDoc is SearchDocOf of e, whose encoding is enc; with enc nil the document has
// no Source. snapshot says enc is the snapshot of the version the write stores: when
// the source would be that snapshot spliced, the document says so (search.Doc.Snapshot)
// instead of carrying a copy.
func searchDoc(k *meridian.Kind, e meridian.Entity, enc []byte, snapshot bool) search.Doc {
	d := search.Doc{ID: e.ID(), Kind: k.Name, FQN: e.FQN(), Name: words(e.Name()),
		DisplayName: words(e.String("displayName")), Description: words(k.SearchText(e)),
		Deleted: e.Deleted()}
	var low []string
	if parent, err := meridian.ParentFQN(e.FQN()); err == nil && parent != "" {
		low = append(low, words(parent))
	}
	var tags []string
	addTags := func(v any) {
		for _, t := range asList(v) {
			m, _ := t.(map[string]any)
			if f, ok := m["tagFQN"].(string); ok {
				tags = append(tags, f)
			}
		}
	}
	addTags(e["tags"])
	var walk func(cols []any)
	walk = func(cols []any) {
		for _, c := range cols {
			col, _ := c.(map[string]any)
			if name, ok := col["name"].(string); ok {
				low = append(low, words(name))
			}
			addTags(col["tags"])
			walk(asList(col["children"]))
		}
	}
	walk(asList(e["columns"]))
	d.Columns = strings.Join(low, " ")
	d.Tags = unique(tags)
	if svc, ok := e["service"].(map[string]any); ok {
		d.Service, _ = svc["name"].(string)
	} else if k.Service {
		d.Service = e.Name()
	}
	for _, ref := range asList(e["owners"]) {
		if m, ok := ref.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				d.Owners = append(d.Owners, n)
			}
		}
	}
	for _, ref := range asList(e["domains"]) {
		if m, ok := ref.(map[string]any); ok {
			if f, ok := m["fullyQualifiedName"].(string); ok {
				d.Domains = append(d.Domains, f)
			}
		}
	}
	switch {
	case enc == nil:
	case snapshot && spliced(e, enc):
		d.Snapshot = true // the source is the snapshot's: it is not copied
	default:
		d.Source = withEntityType(k.Name, e, enc)
	}
	return d
}

// withEntityType returns enc, the encoding of e, with the entityType field set to
// kind: search.SourceOf(kind, enc) when spliced, or else e encoded again with it set.
func withEntityType(kind string, e meridian.Entity, enc []byte) []byte {
	if spliced(e, enc) {
		return search.SourceOf(kind, enc)
	}
	src := maps.Clone(e) // shallow: only a key is replaced
	src["entityType"] = kind
	return encode(src)
}

// spliced reports whether the source of e, encoded as enc, is search.SourceOf(kind,
// enc): e has no entityType field of its own and enc is an object with members.
func spliced(e meridian.Entity, enc []byte) bool {
	_, own := e["entityType"]
	return !own && len(enc) > 2 && enc[0] == '{'
}

func unique(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
