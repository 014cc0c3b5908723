package search

// Result is the answer to a Query: one page of hits, best first (never nil), the exact
// count of every match (or, when TotalAtLeast, the Query's CountUpTo, which the count
// reached), and, when the query asked for aggregations, one list of buckets per field
// asked (empty when nothing matched; bucket counts are always exact).
//
// A keyword search also says what it searched: Searched lists the query's words as
// searched (stop words dropped, misspelt words as corrected), and Relaxed is true when
// too few entities matched every word, so entities matching only some of them were
// answered too (those matching more words first).
type Result struct {
	Hits         []Hit
	Total        int
	TotalAtLeast bool
	Aggregations map[Field][]Bucket
	Searched     []string
	Relaxed      bool
}

// Hit is one matching entity. Score is higher for better matches; its scale depends on
// the mode. Source is the entity's JSON document as indexed, secrets masked, with its
// entityType. Passage is, in vector and hybrid modes, the passage of the entity's text
// that matched best.
type Hit struct {
	ID      string
	Kind    string
	FQN     string
	Score   float64
	Source  []byte
	Passage string
}

// Bucket counts the matches holding one value of an aggregated field. Keys are the
// values as filters compare them: kinds as registered, the other fields lower-cased.
// Passed back as a filter value, a key selects exactly Count matches.
type Bucket struct {
	Key   string
	Count int
}
