package vectors

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// chunkChars is the length a chunk of description or columns stays under.
const chunkChars = 600

// Document is the text the indexer embeds for one entity, as chunks: first a card (the
// name split into words, the display name, the kind, the start of the description,
// the column names, tags and glossary terms, owners, domains and service), then the
// rest of a long description and the columns with their descriptions, each cut under
// chunkChars, MaxChunks in all. Entry holds the filter columns and the hash of them and of
// the chunks.
type Document struct {
	Chunks []string
	Entry  Entry // without model, dimension and vectors
}

// DocumentOf builds the document of e, an entity of kind k as the engine's change
// events carry it.
func DocumentOf(k *meridian.Kind, e meridian.Entity) Document {
	sd := store.SearchFieldsOf(k, e) // the keyword index's projection: service, tags, owners, domains
	var card []string
	add := func(label, text string) {
		if text = strings.TrimSpace(text); text != "" {
			if label != "" {
				text = label + ": " + text
			}
			card = append(card, text)
		}
	}
	add("", sd.Name)
	if dn := e.String("displayName"); dn != "" && !strings.EqualFold(dn, e.Name()) {
		add("", dn)
	}
	add("", kindWords(k.Name))
	desc := strings.TrimSpace(k.SearchText(e))
	head, rest := cut(desc, chunkChars/2)
	add("", head)
	var colNames, colChunks []string
	var walk func(cols []any, prefix string)
	walk = func(cols []any, prefix string) {
		for _, c := range cols {
			col, _ := c.(map[string]any)
			name, _ := col["name"].(string)
			if name == "" {
				continue
			}
			colNames = append(colNames, prefix+name)
			line := prefix + name
			if d, _ := col["description"].(string); strings.TrimSpace(d) != "" {
				line += " (" + strings.TrimSpace(d) + ")"
			}
			colChunks = append(colChunks, line)
			children, _ := col["children"].([]any)
			walk(children, prefix+name+".")
		}
	}
	cols, _ := e["columns"].([]any)
	walk(cols, "")
	if len(colNames) > 0 {
		names, _ := cut(strings.Join(colNames, ", "), chunkChars/2)
		add("columns", names)
	}
	add("tags", strings.Join(sd.Tags, ", "))
	add("owners", strings.Join(sd.Owners, ", "))
	add("domain", strings.Join(sd.Domains, ", "))
	add("service", sd.Service)
	chunks := []string{strings.Join(card, ". ")}
	for rest != "" && len(chunks) < MaxChunks {
		var part string
		part, rest = cut(rest, chunkChars)
		chunks = append(chunks, sd.Name+": "+part)
	}
	if hasColumnDescriptions(colChunks, colNames) {
		var b strings.Builder
		for _, line := range colChunks {
			if b.Len() > 0 && b.Len()+len(line) > chunkChars {
				chunks = append(chunks, sd.Name+" columns: "+b.String())
				b.Reset()
			}
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(line)
		}
		chunks = append(chunks, sd.Name+" columns: "+b.String())
	}
	chunks = chunks[:min(len(chunks), MaxChunks)]
	entry := Entry{EntityID: e.ID(), Kind: k.Name, FQN: e.FQN(), Service: sd.Service, Tags: sd.Tags, Deleted: e.Deleted()}
	h := sha256.New()
	for _, s := range append(append([]string{entry.Kind, entry.FQN, entry.Service}, entry.Tags...), chunks...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	entry.Hash = hex.EncodeToString(h.Sum(nil))
	return Document{Chunks: chunks, Entry: entry}
}

// hasColumnDescriptions reports whether the column lines say more than the names the
// card already lists.
func hasColumnDescriptions(lines, names []string) bool {
	for i := range lines {
		if lines[i] != names[i] {
			return true
		}
	}
	return false
}

// kindWords spells a kind name as words: "dashboardDataModel" → "dashboard data model".
func kindWords(kind string) string {
	var b strings.Builder
	for i, r := range kind {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

// cut splits text after at most n bytes, at a sentence or word boundary when there is
// one in the second half, never inside a UTF-8 sequence.
func cut(text string, n int) (head, rest string) {
	if len(text) <= n {
		return text, ""
	}
	i := n
	for i > 0 && !utf8Start(text[i]) {
		i--
	}
	if j := strings.LastIndexAny(text[:i], ".\n"); j > n/2 {
		i = j + 1
	} else if j := strings.LastIndexByte(text[:i], ' '); j > n/2 {
		i = j + 1
	}
	return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i:])
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
