package tools

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian/search"
)

// Passages: knowledge text cut into paragraph and sentence chunks, and scored against
// a query by keyword overlap.

const (
	// passageChars is the longest passage; a longer paragraph is cut at sentence ends,
	// and a longer sentence at passageChars.
	passageChars = 600
	// maxQueryTerms bounds the distinct words of a query that are scored.
	maxQueryTerms = 64
)

// PassageScorer scores passages against a query: one score per passage, higher is more
// relevant, 0 means no match. The keyword scorer is the default; a vector scorer can
// take its place.
type PassageScorer interface {
	ScorePassages(ctx context.Context, query string, passages []string) ([]float64, error)
}

// passageScorer scores get_knowledge_content's passages.
var passageScorer PassageScorer = KeywordScorer{}

// passageText is one passage: its field, the markdown heading above it, its text and
// whether it is only part of its field's text.
type passageText struct {
	field, heading, text string
	partial              bool
}

// splitPassages cuts each textSection into passages: paragraphs (blank-line separated),
// paragraphs longer than passageChars grouped by sentences, sentences longer than that
// cut. A markdown heading line becomes the heading of the passages below it.
func splitPassages(secs []textSection) []passageText {
	var out []passageText
	for _, s := range secs {
		first := len(out)
		heading := s.heading
		for _, para := range paragraphs(s.text) {
			if strings.HasPrefix(para, "#") && !strings.Contains(para, "\n") {
				heading = strings.TrimSpace(strings.TrimLeft(para, "#"))
				continue
			}
			for _, chunk := range chunks(para) {
				out = append(out, passageText{field: s.field, heading: heading, text: chunk})
			}
		}
		if len(out)-first > 1 {
			for i := first; i < len(out); i++ {
				out[i].partial = true
			}
		}
	}
	return out
}

// paragraphs splits text at blank lines; a heading line is a paragraph of its own.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if p := strings.TrimSpace(strings.Join(cur, "\n")); p != "" {
			out = append(out, p)
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "#"):
			flush()
			out = append(out, trimmed)
		default:
			cur = append(cur, line)
		}
	}
	flush()
	return out
}

// chunks cuts a paragraph into pieces of at most passageChars characters, at sentence
// ends where it can.
func chunks(para string) []string {
	if utf8.RuneCountInString(para) <= passageChars {
		return []string{para}
	}
	var out []string
	var cur strings.Builder
	curLen := 0
	for _, sent := range sentences(para) {
		n := utf8.RuneCountInString(sent)
		if curLen > 0 && curLen+1+n > passageChars {
			out = append(out, cur.String())
			cur.Reset()
			curLen = 0
		}
		for n > passageChars { // one sentence longer than a passage
			head := cut(sent, passageChars)
			out = append(out, head)
			sent = strings.TrimSpace(sent[len(head):])
			n = utf8.RuneCountInString(sent)
		}
		if n == 0 {
			continue
		}
		if curLen > 0 {
			cur.WriteByte(' ')
			curLen++
		}
		cur.WriteString(sent)
		curLen += n
	}
	if curLen > 0 {
		out = append(out, cur.String())
	}
	return out
}

// sentences splits text after '.', '!' or '?' followed by white space.
func sentences(text string) []string {
	var out []string
	start := 0
	runes := []rune(text)
	for i, r := range runes {
		if (r == '.' || r == '!' || r == '?') && i+1 < len(runes) && unicode.IsSpace(runes[i+1]) {
			if s := strings.TrimSpace(string(runes[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(runes[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// rankPassages returns the positions of the size best passages, best first (ties in
// text order), and how many passages matched at all. When none matched it returns the
// first size passages in text order.
func rankPassages(scores []float64, size int) ([]int, int) {
	order := make([]int, len(scores))
	matched := 0
	for i, s := range scores {
		order[i] = i
		if s > 0 {
			matched++
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	if matched > 0 && matched < size {
		size = matched
	}
	if len(order) > size {
		order = order[:size]
	}
	if matched == 0 {
		sort.Ints(order)
	}
	return order, matched
}

// KeywordScorer scores passages by the query words they contain, weighted as BM25
// weighs them over the passages of one text: rare words count more, and a word
// repeated in a short passage more than in a long one. Words are lower-cased, stop
// words dropped and words stemmed (search.Stem), so "orders" matches "order".
type KeywordScorer struct{}

// ScorePassages implements PassageScorer.
func (KeywordScorer) ScorePassages(_ context.Context, query string, passages []string) ([]float64, error) {
	const k1, b = 1.2, 0.75
	terms := map[string]bool{}
	for _, t := range words(query) {
		if len(terms) == maxQueryTerms {
			break
		}
		terms[t] = true
	}
	scores := make([]float64, len(passages))
	if len(terms) == 0 || len(passages) == 0 {
		return scores, nil
	}
	tf := make([]map[string]int, len(passages))
	lengths := make([]int, len(passages))
	df := map[string]int{}
	total := 0
	for i, p := range passages {
		ws := words(p)
		lengths[i] = len(ws)
		total += len(ws)
		counts := map[string]int{}
		for _, w := range ws {
			if terms[w] {
				counts[w]++
			}
		}
		for w := range counts {
			df[w]++
		}
		tf[i] = counts
	}
	avg := math.Max(float64(total)/float64(len(passages)), 1)
	n := float64(len(passages))
	for i := range passages {
		for w, c := range tf[i] {
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			f := float64(c)
			scores[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(lengths[i])/avg))
		}
	}
	return scores, nil
}

// words returns the lower-cased, stemmed words of text without stop words.
func words(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if search.IsStopWord(w) {
			continue
		}
		out = append(out, search.Stem(w))
	}
	return out
}
