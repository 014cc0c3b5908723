package vectors

import "context"

// Embedder turns texts into L2-normalised vectors of Dimension() floats. Model() names the model and its version; stored vectors are keyed by content hash, Model() and Dimension().
type Embedder interface {
	Model() string
	Dimension() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
