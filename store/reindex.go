package store

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

// SearchIndexVersion names the format of the search documents (search.Words and
// SearchDocOf). Raise it when either changes: the next start rebuilds the index. 2:
// secrets are masked by the kind schemas' rules (URL passwords, pwd, bearer, …). 3: the
// index holds stems (search.Stem) and the vocabulary typo correction reads. 4: a
// kind's Text fields (an article's content, a memory's question and answer) are searched
// with the description.
const SearchIndexVersion = "4"

const searchIndexSetting = "search.index.version"

// EnsureSearchIndex rebuilds the keyword index when it was built by another format
// (or never, as in a database from before search existed), and records the format.
// It returns how many entities were indexed (0 when the index was current).
func (s *Entities) EnsureSearchIndex(ctx context.Context) (int, error) {
	var current string
	err := s.inReadTx(ctx, func(tx Tx) error {
		v, err := tx.Setting(ctx, searchIndexSetting)
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return nil
		}
		current = v
		return err
	})
	if err != nil || current == SearchIndexVersion {
		return 0, err
	}
	n := 0
	for _, k := range s.reg.Kinds() {
		var after *Cursor
		for {
			var rows []Row
			err := s.inTx(ctx, func(tx Tx) error {
				var err error
				rows, _, err = tx.List(ctx, ListQuery{Kind: k.Name, Include: IncludeAll, After: after, Limit: 500})
				if err != nil {
					return err
				}
				for _, r := range rows {
					e, err := s.full(ctx, tx, k, r, nil)
					if err != nil {
						return err
					}
					if err := tx.Index(ctx, SearchDocOf(k, s.masked(k, e))); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return n, err
			}
			n += len(rows)
			if len(rows) < 500 {
				break
			}
			last := rows[len(rows)-1]
			after = &Cursor{Name: last.Name, ID: last.ID}
		}
	}
	return n, s.inTx(ctx, func(tx Tx) error { return tx.PutSetting(ctx, searchIndexSetting, SearchIndexVersion) })
}
