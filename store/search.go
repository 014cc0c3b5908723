package store

import (
	"context"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// Entities is the keyword search service.
var _ search.Service = (*Entities)(nil)

// Search runs a typed keyword search over the store's full-text index, in one read
// transaction; the driver computes the hits, the total and the aggregations. Any
// authenticated principal may search (OpView on every kind searched; no kinds means
// every kind). Errors: EInvalid (the query fails search.Query.Validate, or names an
// unknown kind), EUnauthorized (no principal), EForbidden.
func (s *Entities) Search(ctx context.Context, p *meridian.Principal, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	kinds := s.reg.Kinds()
	if len(q.Kinds) > 0 {
		kinds = make([]*meridian.Kind, 0, len(q.Kinds))
		for _, name := range q.Kinds {
			k, ok := s.reg.Kind(name)
			if !ok {
				return search.Result{}, meridian.Errorf(meridian.EInvalid, "Unknown entity type %s", name)
			}
			kinds = append(kinds, k)
		}
	}
	if p == nil && s.policy != nil {
		return search.Result{}, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	for _, k := range kinds {
		if err := s.authorize(p, OpView, k, nil, nil); err != nil {
			return search.Result{}, err
		}
	}
	var res search.Result
	err := s.inReadTx(ctx, func(tx Tx) error {
		var err error
		res, err = tx.Search(ctx, q)
		return err
	})
	return res, err
}
