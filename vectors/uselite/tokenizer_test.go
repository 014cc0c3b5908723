package uselite

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTokenizer(t *testing.T) {
	e := encoder(t)
	tests := []struct {
		name  string
		text  string
		check func(t *testing.T, ids []int32)
	}{
		{"empty text has no pieces", "", func(t *testing.T, ids []int32) {
			if len(ids) != 0 {
				t.Errorf("ids %v, want none", ids)
			}
		}},
		{"a word the vocabulary knows is one piece", "revenue", func(t *testing.T, ids []int32) {
			if !slices.Equal(ids, []int32{2255}) {
				t.Errorf("ids %v, want [2255]", ids)
			}
		}},
		{"an unknown character becomes the unknown piece", "a ☃ b", func(t *testing.T, ids []int32) {
			if !slices.Contains(ids, unknown) {
				t.Errorf("ids %v have no unknown piece", ids)
			}
		}},
		{"a run of unknown characters is one unknown piece", "☃☃☃☃☃☃", func(t *testing.T, ids []int32) {
			if n := count(ids, unknown); n != 1 {
				t.Errorf("ids %v have %d unknown pieces, want 1", ids, n)
			}
		}},
		{"compatibility characters are NFKC-normalised", "ｆｉｌｅ ﬁle", func(t *testing.T, ids []int32) {
			if want := e.Tokenize("file file"); !slices.Equal(ids, want) {
				t.Errorf("ids %v, want those of %q: %v", ids, "file file", want)
			}
		}},
		{"invalid UTF-8 is read as U+FFFD", "ab\xff\xfecd", func(t *testing.T, ids []int32) {
			if want := e.Tokenize("ab\uFFFDcd"); !slices.Equal(ids, want) {
				t.Errorf("ids %v, want %v", ids, want)
			}
		}},
		{"a very long text is cut at the model's maximum length", strings.Repeat("customer orders ", 5000), func(t *testing.T, ids []int32) {
			if len(ids) != e.MaxTokens() {
				t.Errorf("%d pieces, want %d", len(ids), e.MaxTokens())
			}
			whole := e.tok.encodeAll(strings.Repeat("customer orders ", 5000))
			if !slices.Equal(ids, whole) {
				t.Errorf("the cut text's pieces differ from the whole text's first %d", e.MaxTokens())
			}
		}},
		{"a long text without spaces is cut at a character boundary", strings.Repeat("é", 20000), func(t *testing.T, ids []int32) {
			if len(ids) == 0 || len(ids) > e.MaxTokens() {
				t.Errorf("%d pieces", len(ids))
			}
		}},
		{"every id is a row of the embedding table", "Ünïcödé ✓ текст 中文 🚀 \t\n\r\x00", func(t *testing.T, ids []int32) {
			for _, id := range ids {
				if id < 0 || int(id) >= e.model.vocabSize() {
					t.Errorf("id %d outside the table", id)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, e.Tokenize(tt.text)) })
	}
}

func TestTokenizerTimeIsBoundedForHugeText(t *testing.T) {
	e := encoder(t)
	huge := strings.Repeat("x", 50<<20)
	start := time.Now()
	ids := e.Tokenize(huge)
	if len(ids) > e.MaxTokens() {
		t.Errorf("%d pieces, want at most %d", len(ids), e.MaxTokens())
	}
	// Generous: the work is bounded by maxInputBytes, not by the text's 50 MB.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("tokenizing 50 MB took %v", d)
	}
}

func count(ids []int32, id int32) int {
	n := 0
	for _, v := range ids {
		if v == id {
			n++
		}
	}
	return n
}
