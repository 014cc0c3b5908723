// Package vectors turns catalog text into embeddings and keeps them for semantic search:
// the Embedder interface, the built-in embedders and the vector index.
package vectors

import "context"

// Embedder turns texts into L2-normalised vectors of Dimension() floats. Model() names the model and its version; stored vectors are keyed by content hash, Model() and Dimension().
type Embedder interface {
	Model() string
	Dimension() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
