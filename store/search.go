package store

import (
	"context"
	"slices"
	"strings"

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

// KeywordIndex is a driver's full-text index as KeywordSearch drives it. Both drivers
// implement it with the same semantics, so a query answers alike on both.
type KeywordIndex interface {
	// HasWord reports whether some indexed document holds a word starting with stem.
	HasWord(ctx context.Context, stem string) (bool, error)
	// Vocabulary lists the indexed words (as written, not stemmed) that start with the
	// first letter of w and whose length differs from w's by at most
	// search.MaxEdits(w), with the number of documents holding each: at most
	// MaxVocabularyScan of them, in word order.
	Vocabulary(ctx context.Context, w string) ([]search.WordCount, error)
	// Match answers q (already validated) for planned words: groups of alternative
	// stems, a group matching when a document holds a word starting with one of them.
	// With all, every group must match; otherwise any group must, and documents
	// matching more groups rank first (see the drivers' ranking). No groups match
	// every document.
	Match(ctx context.Context, q search.Query, groups [][]string, all bool) (search.Result, error)
}

// MaxVocabularyScan bounds the vocabulary words read to correct one misspelt word.
const MaxVocabularyScan = 20000

// KeywordSearch answers a keyword query on idx so that a natural question does not
// come back empty:
//
//   - stop words are dropped (search.Keywords), and the words are stemmed, as the
//     index is (search.Stem);
//   - a word of search.MinTypoLength letters or more that starts no indexed word is
//     replaced by the closest indexed words (search.Corrections);
//   - when fewer documents match every word than the page needs (From+Size, at least
//     one), documents matching any word are answered, those matching more words
//     first, and the result is marked Relaxed. Documents matching every word rank
//     first either way, in the same order, so pages agree.
//
// A Strict query skips all three: every term as given must match. Result.Searched
// lists the words searched (corrected words as corrected).
func KeywordSearch(ctx context.Context, idx KeywordIndex, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	var terms []string
	for _, t := range q.Terms {
		if t != "" {
			terms = append(terms, t)
		}
	}
	if !q.Strict {
		terms = search.Keywords(terms)
	}
	groups := make([][]string, len(terms))
	searched := make([]string, len(terms))
	var known [][]string // the groups of words some document holds
	for i, w := range terms {
		stem := search.Stem(w)
		groups[i], searched[i] = []string{stem}, w
		if q.Strict || search.MaxEdits(w) == 0 {
			known = append(known, groups[i])
			continue
		}
		found, err := idx.HasWord(ctx, stem)
		if err != nil || found {
			if err != nil {
				return search.Result{}, err
			}
			known = append(known, groups[i])
			continue
		}
		vocab, err := idx.Vocabulary(ctx, w)
		if err != nil {
			return search.Result{}, err
		}
		if fixed := search.Corrections(w, vocab); len(fixed) > 0 {
			groups[i], searched[i] = nil, fixed[0]
			for _, f := range fixed {
				if s := search.Stem(f); !slices.Contains(groups[i], s) {
					groups[i] = append(groups[i], s)
				}
			}
			known = append(known, groups[i])
		}
	}
	res, err := idx.Match(ctx, q, groups, true)
	if err != nil {
		return search.Result{}, err
	}
	enough := func(r search.Result) bool { return r.Total >= max(q.From+q.Size, 1) }
	if !q.Strict && len(groups) > 1 && !enough(res) {
		// A word no document holds cannot help: every other word first, which is
		// cheap, and only then any word, which ranks most of a large catalog.
		if len(known) > 0 && len(known) < len(groups) {
			if res, err = idx.Match(ctx, q, known, true); err != nil {
				return search.Result{}, err
			}
		}
		if !enough(res) && len(known) > 1 {
			if res, err = idx.Match(ctx, q, known, false); err != nil {
				return search.Result{}, err
			}
		}
		res.Relaxed = true
	}
	res.Searched = searched
	res.TotalAtLeast = q.CountUpTo > 0 && res.Total >= q.CountUpTo
	return res, nil
}

// VocabularyChange returns the words in now but not in before, and those in before but
// not in now; both lists are sorted as search.Terms sorts its Vocabulary.
func VocabularyChange(before, now []string) (added, removed []string) {
	i, j := 0, 0
	for i < len(before) || j < len(now) {
		switch {
		case j == len(now) || (i < len(before) && before[i] < now[j]):
			removed = append(removed, before[i])
			i++
		case i == len(before) || now[j] < before[i]:
			added = append(added, now[j])
			j++
		default:
			i++
			j++
		}
	}
	return added, removed
}

// MaxNarrowing bounds the alternatives (subsets of a question's word groups) a level
// of NarrowingLevels takes.
const MaxNarrowing = 35

// NarrowingLevels returns the match expressions of the documents holding at least m
// of the word groups, for m = len(groups)-1 down to 2, most words first: each is the
// OR (joined by or) of every m-group subset, as and renders such a subset. It stops
// before a level of more than MaxNarrowing subsets. A document holding m of k groups
// always ranks above one holding fewer (20 points a group; see the drivers' ranking),
// so when the documents of a level fill an any-word page, only they need ranking.
func NarrowingLevels[G any](groups []G, and func([]G) string, or string) []string {
	var levels []string
	for m := len(groups) - 1; m >= 2; m-- {
		subsets := subsets(len(groups), m)
		if len(subsets) > MaxNarrowing {
			break
		}
		alts := make([]string, len(subsets))
		for i, set := range subsets {
			each := make([]G, len(set))
			for j, g := range set {
				each[j] = groups[g]
			}
			alts[i] = "(" + and(each) + ")"
		}
		levels = append(levels, strings.Join(alts, or))
	}
	return levels
}

// subsets returns the m-element subsets of {0, …, k-1}, each in increasing order.
func subsets(k, m int) [][]int {
	var out [][]int
	var walk func(start int, set []int)
	walk = func(start int, set []int) {
		if len(set) == m {
			out = append(out, slices.Clone(set))
			return
		}
		for i := start; i <= k-(m-len(set)); i++ {
			walk(i+1, append(set, i))
		}
	}
	walk(0, make([]int, 0, m))
	return out
}
