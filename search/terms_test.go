package search

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestTermsAreTheDocAsAnIndexStoresIt(t *testing.T) {
	d := Doc{ID: "t1", Kind: "table", FQN: "svc.db.s.orders", Name: "customer orders", DisplayName: "customer orders",
		Description: "all the payments of 2024 from refunds", Columns: "svc db s order id amount",
		Service: "Svc", Tags: []string{"PII.Sensitive"}, Owners: []string{"Alice"}, Domains: []string{"Sales"}}
	want := Terms{
		Name: StemText("customer orders"), DisplayName: StemText("customer orders"),
		Description: StemText("all the payments of 2024 from refunds"), Columns: StemText("svc db s order id amount"),
		Service: "svc", Tags: []string{"pii.sensitive"}, Owners: []string{"alice"}, Domains: []string{"sales"},
		// Short words, stop words and words with digits are left out; the rest once, sorted.
		Vocabulary: []string{"amount", "customer", "order", "orders", "payments", "refunds"},
	}
	for name, d := range map[string]Doc{"computed when asked": d, "computed ahead (WithTerms)": d.WithTerms()} {
		if got := d.Terms(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got  %+v\nwant %+v", name, got, want)
		}
	}
}

func TestTermsVocabularyIsLowercase(t *testing.T) {
	got := Doc{Name: "Customer customer", Description: "REFUNDS"}.Terms().Vocabulary
	if want := []string{"customer", "refunds"}; !reflect.DeepEqual(got, want) {
		t.Errorf("vocabulary %q, want %q", got, want)
	}
}

func TestTermsListsAreNeverNil(t *testing.T) {
	got := Doc{ID: "x"}.Terms()
	if got.Tags == nil || got.Owners == nil || got.Domains == nil || got.Vocabulary == nil {
		t.Errorf("nil list in %+v", got)
	}
}

func TestTermsVocabularyIsBounded(t *testing.T) {
	words := make([]string, MaxVocabularyWords+50)
	for i := range words {
		words[i] = "word" + strings.Map(func(r rune) rune { return 'a' + (r - '0') }, fmt.Sprintf("%05d", i))
	}
	if n := len(Doc{Description: strings.Join(words, " ")}.Terms().Vocabulary); n != MaxVocabularyWords {
		t.Errorf("vocabulary of %d words, want %d", n, MaxVocabularyWords)
	}
}
