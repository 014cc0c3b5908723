package search

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// Typo tolerance: a query word that matches nothing in the keyword index is replaced
// by the indexed words within a small edit distance of it (MaxEdits), the closest
// first, then the most frequent.
const (
	// MinTypoLength is the shortest word corrected (in letters): shorter words are
	// within one edit of too many others.
	MinTypoLength = 4
	// MaxCorrections is how many indexed words a misspelt word is replaced by.
	MaxCorrections = 3
)

// WordCount is one word of the keyword index's vocabulary with the number of
// documents that hold it.
type WordCount struct {
	Word string
	Docs int
}

// MaxEdits is the edit distance tolerated for a query word: 0 below MinTypoLength
// letters, 1 up to 7 letters, 2 from 8.
func MaxEdits(w string) int {
	switch n := utf8.RuneCountInString(w); {
	case n < MinTypoLength:
		return 0
	case n < 8:
		return 1
	}
	return 2
}

// Corrections returns the vocabulary words within MaxEdits(w) edits of w (an edit is
// an insertion, deletion, substitution or swap of adjacent letters), at most
// MaxCorrections of them: the closest first, then the most frequent, then by word.
func Corrections(w string, vocab []WordCount) []string {
	limit := MaxEdits(w)
	if limit == 0 {
		return nil
	}
	type cand struct {
		WordCount
		dist int
	}
	var cands []cand
	for _, v := range vocab {
		if v.Word == w {
			continue
		}
		if d := EditDistance(w, v.Word, limit); d <= limit {
			cands = append(cands, cand{v, d})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(b.Docs, a.Docs), cmp.Compare(a.Word, b.Word))
	})
	var out []string
	for _, c := range cands[:min(len(cands), MaxCorrections)] {
		out = append(out, c.Word)
	}
	return out
}

// EditDistance is the optimal string alignment distance between a and b (insertions,
// deletions, substitutions and swaps of adjacent letters), counted in runes. Above
// limit it returns limit+1; words whose lengths differ by more cost nothing.
func EditDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(rb)], limit+1)
}
