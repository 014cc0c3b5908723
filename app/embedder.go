package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian/vectors"
	"github.com/meridian-catalog/meridian/vectors/uselite"
)

// Embedder kinds.
const (
	// EmbedderHashing is the built-in weightless feature-hashing embedder (the default).
	EmbedderHashing = "hashing"
	// EmbedderHTTP is an OpenAI-compatible embedding endpoint.
	EmbedderHTTP = "http"
	// EmbedderUSELite is the built-in Universal Sentence Encoder lite (pure Go, weights
	// in the binary, no network).
	EmbedderUSELite = "use-lite"
)

// EmbedderConfig chooses the embedder of semantic search. Changing the model (or its
// dimension) never mixes vectors: the next serve re-embeds the catalog in a reindex
// job, and searches meanwhile find only what the new model has embedded.
type EmbedderConfig struct {
	// Kind is EmbedderHashing, EmbedderUSELite or EmbedderHTTP (MERIDIAN_EMBEDDER); empty
	// means EmbedderHashing.
	Kind string
	// The endpoint of EmbedderHTTP: URL (MERIDIAN_EMBEDDING_URL, the API base such as
	// http://localhost:11434/v1), Model (MERIDIAN_EMBEDDING_MODEL), Dimension
	// (MERIDIAN_EMBEDDING_DIMENSION), APIKey (MERIDIAN_EMBEDDING_API_KEY, a secret),
	// MaxBatch (MERIDIAN_EMBEDDING_BATCH, default 64) and Timeout per request
	// (MERIDIAN_EMBEDDING_TIMEOUT, default 30s).
	vectors.HTTPConfig
}

// EmbedderFromEnv reads the MERIDIAN_EMBEDDER* and MERIDIAN_EMBEDDING_* variables.
// Malformed numbers are left at zero, which NewEmbedder reports or defaults.
func EmbedderFromEnv() EmbedderConfig {
	c := EmbedderConfig{Kind: os.Getenv("MERIDIAN_EMBEDDER"), HTTPConfig: vectors.HTTPConfig{URL: os.Getenv("MERIDIAN_EMBEDDING_URL"),
		Model: os.Getenv("MERIDIAN_EMBEDDING_MODEL"), APIKey: os.Getenv("MERIDIAN_EMBEDDING_API_KEY")}}
	c.Dimension, _ = strconv.Atoi(os.Getenv("MERIDIAN_EMBEDDING_DIMENSION"))
	c.MaxBatch, _ = strconv.Atoi(os.Getenv("MERIDIAN_EMBEDDING_BATCH"))
	c.Timeout, _ = time.ParseDuration(os.Getenv("MERIDIAN_EMBEDDING_TIMEOUT"))
	return c
}

// NewEmbedder builds the embedder c describes; a zero c reads the environment.
func NewEmbedder(c EmbedderConfig) (vectors.Embedder, error) {
	if c == (EmbedderConfig{}) {
		c = EmbedderFromEnv()
	}
	switch strings.ToLower(strings.TrimSpace(c.Kind)) {
	case "", EmbedderHashing:
		return vectors.Hashing{}, nil
	case EmbedderUSELite:
		e, err := uselite.New()
		if err != nil {
			return nil, fmt.Errorf("MERIDIAN_EMBEDDER=use-lite: %w", err)
		}
		return e, nil
	case EmbedderHTTP:
		e, err := vectors.NewHTTP(c.HTTPConfig)
		if err != nil {
			return nil, fmt.Errorf("MERIDIAN_EMBEDDER=http: %w", err)
		}
		return e, nil
	}
	return nil, fmt.Errorf("unknown embedder %q (known: %s, %s, %s)", c.Kind, EmbedderHashing, EmbedderUSELite, EmbedderHTTP)
}
