package search

// Doc is the searchable projection of one entity, as the engine indexes it in the
// transaction of every entity write. The text fields hold words already split by
// Words, so every driver indexes the same tokens. Source is the JSON document answered
// as a hit's source.
type Doc struct {
	ID          string
	Kind        string
	FQN         string
	Name        string // words of the name (highest weight)
	DisplayName string // words of the display name (high weight)
	Description string // words of the description (medium weight)
	Columns     string // words of the column names and the parent FQN (low weight)
	Service     string // service name, "" when none
	Tags        []string
	Owners      []string // owner names
	Domains     []string // domain FQNs
	Deleted     bool
	Source      []byte
	// Created says the entity was just created, with an id of its own: no document of
	// its ID was indexed before, so a driver need not look one up to replace it.
	Created bool

	terms *Terms // computed ahead by WithTerms
}
