package search

import (
	"slices"
	"strings"
)

// MaxVocabularyWords bounds the vocabulary words one document adds.
const MaxVocabularyWords = 2000

// Terms is a Doc as a keyword index stores it: the words of each text field stemmed
// (StemText), the service and the tag, owner and domain lists lowercased, and the
// document's vocabulary. Every driver stores these, so they are derived here once
// rather than by each driver.
type Terms struct {
	Name, DisplayName, Description, Columns string
	Service                                 string
	Tags, Owners, Domains                   []string
	// Vocabulary is the words typo correction may suggest, lowercased, distinct and
	// sorted: words of MinTypoLength letters or more, without digits, that are not stop
	// words, from the name, display name, description and column words (unstemmed); at
	// most MaxVocabularyWords of them.
	Vocabulary []string
}

// Terms returns d as a keyword index stores it: those WithTerms computed, if it did.
func (d Doc) Terms() Terms {
	if d.terms != nil {
		return *d.terms
	}
	return d.computeTerms()
}

// WithTerms returns d with its Terms computed now, which Terms then returns at no
// cost: the engine computes them while it prepares a write, in parallel with other
// requests, rather than inside a driver's Index, which runs in the single writer. The
// Doc returned must not be changed.
func (d Doc) WithTerms() Doc {
	t := d.computeTerms()
	d.terms = &t
	return d
}

func (d Doc) computeTerms() Terms {
	return Terms{
		Name:        StemText(d.Name),
		DisplayName: StemText(d.DisplayName),
		Description: StemText(d.Description),
		Columns:     StemText(d.Columns),
		Service:     strings.ToLower(d.Service),
		Tags:        Lower(d.Tags),
		Owners:      Lower(d.Owners),
		Domains:     Lower(d.Domains),
		Vocabulary:  vocabulary(d),
	}
}

// vocabulary is Terms.Vocabulary of d. It collects the words, then sorts them and drops
// repeats: a document repeats most of its words (column names and descriptions), and a
// set of them cost more than the sort.
func vocabulary(d Doc) []string {
	out := []string{} // never nil, like the lists
	for _, text := range []string{d.Name, d.DisplayName, d.Description, d.Columns} {
		for w := range strings.FieldsSeq(text) {
			w = strings.ToLower(w) // a Doc's words are lowercase already (Words): no copy then
			if MaxEdits(w) == 0 || IsStopWord(w) || strings.ContainsAny(w, "0123456789") {
				continue
			}
			out = append(out, w)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), MaxVocabularyWords)]
}

// Lower returns filter values as the index stores and compares them (the service,
// tags, owners and domains of Terms): each lower-cased. It never returns nil, so a
// driver binding the result as an array never binds NULL.
func Lower(l []string) []string {
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, strings.ToLower(s))
	}
	return out
}
