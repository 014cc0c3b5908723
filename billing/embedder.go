package billing

import (
	"context"

	"github.com/meridian-catalog/meridian/vectors"
)

// meteredEmbedder records every text it embeds as an embeddings entry, attributed to
// the call on the context (the indexer's work is the system's).
type meteredEmbedder struct {
	vectors.Embedder
	s *Service
}

// Embedder returns e metered: each Embed that succeeds records len(texts) units of
// the embeddings feature, action "embed:<model>".
func (s *Service) Embedder(e vectors.Embedder) vectors.Embedder {
	if s == nil || e == nil {
		return e
	}
	return meteredEmbedder{Embedder: e, s: s}
}

// Embed embeds texts and meters them.
func (m meteredEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := m.Embedder.Embed(ctx, texts)
	if err == nil && len(texts) > 0 {
		m.s.Record(ctx, FeatureEmbeddings, "embed:"+m.Model(), int64(len(texts)), nil)
	}
	return out, err
}
