package billing_test

import (
	"testing"

	"github.com/meridian-catalog/meridian/billing"
)

// FuzzParsePrices: any price table file is accepted valid or refused with EInvalid,
// never a panic, and an accepted one prices every feature within the bounds.
func FuzzParsePrices(f *testing.F) {
	f.Add([]byte(`{"features":{"semanticSearch":{"unit":"query","credits":5}},"actions":{"x":0.5}}`))
	f.Add([]byte(`{"toolFeatures":{"t":"embeddings"},"operations":{"op":"executions"}}`))
	f.Add([]byte(`{"features":{"x":{"unit":"","credits":1e400}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := billing.ParsePrices(b)
		if err != nil {
			return
		}
		for name, pr := range p.Features {
			if pr.Credits < 0 || pr.Credits > 1e6 || pr.Unit == "" {
				t.Fatalf("accepted price %s = %+v", name, pr)
			}
		}
	})
}
