package search

import "encoding/json"

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
	// Snapshot says the document's source is SourceOf(Kind, the snapshot of the entity's
	// version that the same transaction stores), and Source is nil: a driver keeps a
	// reference to that snapshot, and answers SourceOf of the entity's current snapshot.
	Snapshot bool
	// Created says the entity was just created, with an id of its own: no document of
	// its ID was indexed before, so a driver need not look one up to replace it.
	Created bool

	terms *Terms // computed ahead by WithTerms
}

// SourceOf returns a hit's source for the encoded document of an entity of kind that has
// no entityType field of its own: the document with "entityType": kind added at its
// front. doc must be a JSON object with at least one member.
func SourceOf(kind string, doc []byte) []byte {
	name, _ := json.Marshal(kind)
	out := make([]byte, 0, len(doc)+len(name)+16)
	out = append(append(out, `{"entityType":`...), name...)
	return append(append(out, ','), doc[1:]...)
}
