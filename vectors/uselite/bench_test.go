package uselite

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// textOfTokens returns a text that the tokenizer cuts into exactly n pieces.
func textOfTokens(tb testing.TB, e *Encoder, n int) string {
	tb.Helper()
	words := strings.Fields("customer orders placed by clients in each region with the total amount and the date of delivery for the warehouse stock levels and daily revenue per product category of the online shop")
	var parts []string
	for i := 0; len(e.Tokenize(strings.Join(parts, " "))) < n; i++ {
		parts = append(parts, words[i%len(words)])
	}
	text := strings.Join(parts, " ")
	for len(e.Tokenize(text)) > n {
		text = text[:len(text)-1]
	}
	if got := len(e.Tokenize(text)); got != n {
		tb.Fatalf("text has %d pieces, want %d", got, n)
	}
	return text
}

func benchmarkOne(b *testing.B, tokens int) {
	e := encoder(b)
	text := textOfTokens(b, e, tokens)
	var s scratch
	dst := make([]float32, Dimension)
	b.ResetTimer()
	for b.Loop() {
		e.model.encode(e.tok.encode(text), &s, dst)
	}
}

// BenchmarkQuery8Tokens is one query of 8 pieces on one goroutine.
func BenchmarkQuery8Tokens(b *testing.B) { benchmarkOne(b, 8) }

// BenchmarkDocument32Tokens is one document of 32 pieces on one goroutine.
func BenchmarkDocument32Tokens(b *testing.B) { benchmarkOne(b, 32) }

// BenchmarkDocument128Tokens is one document at the model's maximum length.
func BenchmarkDocument128Tokens(b *testing.B) { benchmarkOne(b, 128) }

// BenchmarkEmbedBatch embeds 64 documents of 32 pieces through Embed, in parallel on
// GOMAXPROCS goroutines, and reports documents per second.
func BenchmarkEmbedBatch(b *testing.B) {
	e := encoder(b)
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = textOfTokens(b, e, 32)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
}

// BenchmarkTokenizeLongText tokenizes a text far beyond the cut-off.
func BenchmarkTokenizeLongText(b *testing.B) {
	e := encoder(b)
	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 10000)
	for b.Loop() {
		e.Tokenize(text)
	}
}
