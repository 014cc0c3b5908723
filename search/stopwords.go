package search

// stopWords are words too common in questions and catalog text to tell assets apart:
// English function words, the verbs of a request ("find", "show me") and the nouns
// every asset shares ("table", "data"). Keyword queries drop them (Keywords), and the
// hashing embedder and the passage scorer leave them out.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"a", "an", "the", "and", "or", "of", "in", "on", "for", "to", "from", "by", "with",
		"at", "as", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "which",
		"what", "where", "who", "whom", "how", "when", "why", "do", "does", "did", "has", "have", "had", "there",
		"i", "we", "you", "they", "our", "my", "your", "their", "me", "us", "can", "could", "should", "would",
		"find", "show", "list", "get", "give", "tell", "about", "any", "all", "each", "every", "some", "per",
		"table", "tables", "data", "dataset", "information", "info", "contains", "containing", "hold", "holds",
		"keep", "keeps", "store", "stores", "stored", "need", "want", "looking"} {
		m[w] = true
	}
	return m
}()

// IsStopWord reports whether w, a lower-case word as Words makes them, is a stop word.
func IsStopWord(w string) bool { return stopWords[w] }

// Keywords returns the words of a query that say what is searched: terms without stop
// words and repeats, in their order. When every term is a stop word the terms are
// kept (without repeats), so a query such as "data" still searches something.
func Keywords(terms []string) []string {
	var out, all []string
	seen := map[string]bool{}
	for _, t := range terms {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		all = append(all, t)
		if !stopWords[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}
