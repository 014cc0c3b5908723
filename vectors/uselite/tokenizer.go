package uselite

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// separator replaces spaces and starts every text, as in SentencePiece.
const separator = "\u2581"

// reservedPieces is the number of leading vocabulary entries (unknown, <s>, </s>, three
// extra ids) that the tokenizer never produces from text, except the unknown piece 0.
const reservedPieces = 6

// unknown is the id of the unknown piece.
const unknown = 0

// tokenizer is the SentencePiece unigram tokenizer of the reference runtime
// (@energetic-ai/embeddings 0.2.0): Viterbi over piece log-probabilities, where a position
// no piece starts at becomes the unknown piece, and runs of unknown pieces merge into one.
// It reproduces that runtime's tie-breaking and its quirks so the ids match exactly.
type tokenizer struct {
	pieces    map[string]int32 // piece text → id (a duplicate piece keeps the later id)
	scores    []float64        // log-probability by id; a null score counts as 0
	utf16Len  []int            // length of each piece in UTF-16 code units, used to backtrack
	maxRunes  int              // the longest piece, in code points
	maxTokens int
}

func newTokenizer(vocabJSON []byte, maxTokens int) (*tokenizer, error) {
	var vocab [][2]json.RawMessage
	if err := json.Unmarshal(vocabJSON, &vocab); err != nil {
		return nil, fmt.Errorf("uselite: vocabulary: %w", err)
	}
	t := &tokenizer{
		pieces:    make(map[string]int32, len(vocab)),
		scores:    make([]float64, len(vocab)),
		utf16Len:  make([]int, len(vocab)),
		maxTokens: maxTokens,
	}
	for i, entry := range vocab {
		var piece string
		var score *float64
		if err := json.Unmarshal(entry[0], &piece); err != nil {
			return nil, fmt.Errorf("uselite: vocabulary entry %d: %w", i, err)
		}
		if err := json.Unmarshal(entry[1], &score); err != nil {
			return nil, fmt.Errorf("uselite: vocabulary entry %d: %w", i, err)
		}
		if score != nil {
			t.scores[i] = *score
		}
		t.utf16Len[i] = len(utf16.Encode([]rune(piece)))
		if i < reservedPieces {
			continue
		}
		t.pieces[piece] = int32(i)
		t.maxRunes = max(t.maxRunes, utf8.RuneCountInString(piece))
	}
	if len(vocab) <= reservedPieces {
		return nil, fmt.Errorf("uselite: vocabulary has %d entries", len(vocab))
	}
	return t, nil
}

// edge is a piece ending at some position: where it starts and its id.
type edge struct {
	start int
	id    int32
}

// firstPassBytes is the prefix tried first on a long text: enough for maxTokens pieces of
// ordinary prose, so that a long document costs little more than its first 128 pieces.
const firstPassBytes = 1 << 10

// encode returns the piece ids of text, at most maxTokens of them (the model's own clip
// length). Invalid UTF-8 becomes U+FFFD. A long text is cut at a space, first at
// firstPassBytes and, when that gives fewer than maxTokens pieces, at maxInputBytes. No piece
// contains an inner separator, so the pieces before a cut at a space are exactly those of
// the whole text.
func (t *tokenizer) encode(text string) []int32 {
	for _, limit := range []int{firstPassBytes, maxInputBytes} {
		if len(text) <= limit {
			break
		}
		ids := t.encodeAll(cut(text, limit))
		if len(ids) >= t.maxTokens || limit == maxInputBytes {
			return ids
		}
	}
	return t.encodeAll(text)
}

// cut returns the longest prefix of text of at most limit bytes that ends before a space,
// or at a character boundary when there is no space.
func cut(text string, limit int) string {
	if i := strings.LastIndexByte(text[:limit+1], ' '); i > 0 {
		return text[:i]
	}
	for limit > 0 && !utf8.RuneStart(text[limit]) {
		limit--
	}
	return text[:limit]
}

// encodeAll tokenizes the whole of text.
func (t *tokenizer) encodeAll(text string) []int32 {
	s := norm.NFKC.String(strings.ToValidUTF8(text, "\uFFFD"))
	if s == "" {
		return nil
	}
	s = separator + strings.ReplaceAll(s, " ", separator)

	offs := make([]int, 0, len(s)+1) // byte offset of each code point, and len(s)
	for i := range s {
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	n := len(offs) - 1

	// ends[e] lists the pieces that end at e, by ascending start: the order in which the
	// reference runtime relaxes them, which decides ties.
	ends := make([][]edge, n+1)
	for i := 0; i < n; i++ {
		matched := false
		for l := 1; l <= t.maxRunes && i+l <= n; l++ {
			if id, ok := t.pieces[s[offs[i]:offs[i+l]]]; ok {
				ends[i+l] = append(ends[i+l], edge{i, id})
				matched = true
			}
		}
		if !matched {
			ends[i+1] = append(ends[i+1], edge{i, unknown})
		}
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for e := 1; e <= n; e++ {
		for _, c := range ends[e] {
			score := t.scores[c.id] + best[c.start]
			// The reference treats a best score of exactly 0 as "none yet".
			if best[e] == 0 || score >= best[e] {
				best[e] = score
				words[e] = c.id
			}
		}
	}
	// Backtrack by each piece's UTF-16 length, as the reference does.
	var ids []int32
	for i := n; i > 0; i -= t.utf16Len[words[i]] {
		id := words[i]
		if id == unknown && len(ids) > 0 && ids[len(ids)-1] == unknown {
			continue
		}
		ids = append(ids, id)
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	if len(ids) > t.maxTokens {
		ids = ids[:t.maxTokens]
	}
	return ids
}
