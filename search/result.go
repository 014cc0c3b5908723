package search

// Result is the answer to a Query: one page of hits, best first (never nil), the exact
// count of every match, and, when the query asked for aggregations, one list of
// buckets per field asked (empty when nothing matched).
type Result struct {
	Hits         []Hit
	Total        int
	Aggregations map[Field][]Bucket
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
