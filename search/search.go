// Package search is the catalog's search service: a typed Query (terms, kinds, term
// filters, the deleted switch, paging and the aggregations wanted) answered by a typed
// Result (hits with id, kind, FQN, score and source document; the exact total; the
// aggregations as buckets). Keyword search runs on the store's own full-text index
// (SQLite FTS5, PostgreSQL tsvector), which the entity engine keeps in the same
// transaction as every entity write. Engine answers the vector and hybrid modes behind
// the same types; a vector service that is Lazy lets hybrid read the documents of its
// page only.
//
// The Elasticsearch dialect (q strings, query_filter, the hits.hits[]._source answer)
// is not spoken here: the REST edge translates it (rest/elastic).
package search

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

// Service answers typed searches. store.Entities implements it over the keyword index.
type Service interface {
	// Search returns one page of hits, best first, the count of every match and the
	// aggregations asked for. Any authenticated principal may search the kinds it may
	// view. Errors: EInvalid (the query fails Validate, or names an unknown kind),
	// EUnauthorized (no principal), EForbidden (a kind the principal may not view).
	Search(ctx context.Context, p *meridian.Principal, q Query) (Result, error)
}
