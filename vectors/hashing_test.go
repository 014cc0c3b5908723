package vectors

import (
	"hash/fnv"
	"math"
	"testing"

	"github.com/meridian-catalog/meridian/search"
)

// referenceEmbed is the hashing embedder as first written (one allocated string per
// feature, hashed with hash/fnv): a model's vectors must never change, or an index
// built before would no longer match the questions embedded after.
func referenceEmbed(text string) []float32 {
	type feature struct {
		gram bool
		text string
	}
	counts := map[feature]int{}
	for _, w := range search.Words(text) {
		if search.IsStopWord(w) {
			continue
		}
		counts[feature{false, w}]++
		r := []rune("<" + w + ">")
		for n := 3; n <= 4; n++ {
			for i := 0; i+n <= len(r); i++ {
				counts[feature{true, string(r[i : i+n])}]++
			}
		}
	}
	v := make([]float64, HashingDimension)
	for f, tf := range counts {
		h := fnv.New64a()
		if f.gram {
			h.Write([]byte{1})
		}
		h.Write([]byte(f.text))
		x := h.Sum64()
		w := wordWeight
		if f.gram {
			w = ngramWeight
		}
		w *= 1 + math.Log(float64(tf))
		if x>>63 == 1 {
			w = -w
		}
		v[x%HashingDimension] += w
	}
	return normalise(v)
}

// sameVector reports whether two vectors agree up to the order their sums were taken in.
func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}

var hashingSeeds = []string{
	"",
	"the of and",
	"Daily refund figures per customer",
	"fct_orders dim_customer ltv_monthly",
	"Kundenübersicht für Bestellungen — 顧客の注文 📦 orders",
	"a ab abc abcd abcde",
	"\xff\xfe broken \xc3 utf8 \xe2\x82",
	"repeat repeat repeat repeated repeating",
}

// TestHashingEmbedsAsTheFirstVersionDid compares the embedder with its reference on
// texts in several scripts, with repeated words, and with invalid UTF-8.
func TestHashingEmbedsAsTheFirstVersionDid(t *testing.T) {
	for _, text := range hashingSeeds {
		if got, want := (Hashing{}).embed(text), referenceEmbed(text); !sameVector(got, want) {
			t.Errorf("embed(%q) differs from the reference", text)
		}
	}
}

// FuzzHashingEmbedsAsTheFirstVersionDid is TestHashingEmbedsAsTheFirstVersionDid on
// any text.
func FuzzHashingEmbedsAsTheFirstVersionDid(f *testing.F) {
	for _, s := range hashingSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := (Hashing{}).embed(text), referenceEmbed(text); !sameVector(got, want) {
			t.Errorf("embed(%q) differs from the reference", text)
		}
	})
}

// BenchmarkHashingEmbed embeds a table's search text.
func BenchmarkHashingEmbed(b *testing.B) {
	text := "fact_daily_refund_summary Daily refund figures per customer, loaded nightly from the billing system. " +
		"refund_id customer_id amount currency refunded_at reason channel store_id region_code order_id " +
		"payment_id status created_at updated_at approved_by approved_at notes source batch_id"
	for b.Loop() {
		(Hashing{}).embed(text)
	}
}
