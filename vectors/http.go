package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTPConfig configures an OpenAI-compatible embedding endpoint (OpenAI, Ollama, vLLM,
// TEI): POST {URL}/embeddings with {"model", "input": [...]}, answered by
// {"data": [{"index", "embedding"}]}.
type HTTPConfig struct {
	// URL is the API base, for example http://localhost:11434/v1. Required.
	URL string
	// Model is the model name sent to the endpoint. Required.
	Model string
	// Dimension is the length of the vectors the model returns; every answer is checked
	// against it. Required.
	Dimension int
	// APIKey, when set, is sent as a Bearer token. It is a secret: it is never logged
	// nor shown in an error.
	APIKey string
	// MaxBatch is how many texts one request carries at most (default 64).
	MaxBatch int
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// Retries is how many times a request that failed with a 5xx, a 429 or a network
	// error is retried (default 3; negative for none), after a pause that starts at
	// Backoff (default 500 ms) and doubles, or after the Retry-After the server sent.
	Retries int
	Backoff time.Duration
	// Client is the HTTP client; nil means a new one.
	Client *http.Client
}

// HTTP is an Embedder over an OpenAI-compatible endpoint. Its Model is "http:" plus the
// configured model name, so vectors of a remote model never mix with a built-in one's.
type HTTP struct {
	c HTTPConfig
}

var _ Embedder = (*HTTP)(nil)

// maxAnswer bounds the size of one answer read from the endpoint.
const maxAnswer = 64 << 20

// NewHTTP checks cfg and returns the embedder. It makes no request.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	cfg.URL = strings.TrimRight(strings.TrimSpace(cfg.URL), "/")
	switch {
	case cfg.URL == "":
		return nil, errors.New("embedding endpoint: the URL is required")
	case !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://"):
		return nil, fmt.Errorf("embedding endpoint: the URL %q must start with http:// or https://", cfg.URL)
	case strings.TrimSpace(cfg.Model) == "":
		return nil, errors.New("embedding endpoint: the model is required")
	case cfg.Dimension < 1 || cfg.Dimension > MaxDimension:
		return nil, fmt.Errorf("embedding endpoint: the dimension must be between 1 and %d", MaxDimension)
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 64
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 3
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &HTTP{c: cfg}, nil
}

// Model returns "http:" and the model name.
func (h *HTTP) Model() string { return "http:" + h.c.Model }

// Dimension returns the configured dimension.
func (h *HTTP) Dimension() int { return h.c.Dimension }

// Embed embeds the texts, MaxBatch per request, and L2-normalises the answers. Errors
// name the endpoint and what went wrong: unreachable, an HTTP status, a malformed
// answer, or a vector of the wrong dimension.
func (h *HTTP) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += h.c.MaxBatch {
		batch := texts[start:min(start+h.c.MaxBatch, len(texts))]
		vs, err := h.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

type embeddingRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingAnswer struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// retryable is a failure worth another try, with the pause the server asked for.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }

func (h *HTTP) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: h.c.Model, Input: texts})
	if err != nil {
		return nil, err
	}
	pause := h.c.Backoff
	for attempt := 0; ; attempt++ {
		vs, err := h.post(ctx, body, len(texts))
		var r *retryable
		if err == nil || !errors.As(err, &r) || attempt >= h.c.Retries {
			if r != nil {
				return nil, r.err
			}
			return vs, err
		}
		wait := pause
		if r.after > 0 {
			wait = min(r.after, time.Minute)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		pause *= 2
	}
}

// post sends one request and reads its answer.
func (h *HTTP) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, h.c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.c.URL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embedding endpoint %s: %w", h.c.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.c.APIKey)
	}
	resp, err := h.c.Client.Do(req)
	if err != nil {
		if parent := context.Cause(ctx); parent != nil && !errors.Is(parent, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, &retryable{err: fmt.Errorf("embedding endpoint %s is unreachable: %w", h.c.URL, unwrapURL(err))}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, &retryable{err: fmt.Errorf("embedding endpoint %s: reading the answer: %w", h.c.URL, err)}
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("embedding endpoint %s answered %s: %s", h.c.URL, resp.Status, snippet(data))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, &retryable{err: err, after: retryAfter(resp.Header.Get("Retry-After"))}
		}
		return nil, err
	}
	if len(data) > maxAnswer {
		return nil, fmt.Errorf("embedding endpoint %s: the answer is larger than %d bytes", h.c.URL, maxAnswer)
	}
	var a embeddingAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("embedding endpoint %s: the answer is not an embeddings list: %v", h.c.URL, err)
	}
	if len(a.Data) != n {
		return nil, fmt.Errorf("embedding endpoint %s: %d embeddings for %d texts", h.c.URL, len(a.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range a.Data {
		idx := d.Index
		if idx < 0 || idx >= n || out[idx] != nil {
			idx = i // an endpoint that leaves index out answers in order
		}
		if len(d.Embedding) != h.c.Dimension {
			return nil, fmt.Errorf("embedding endpoint %s: model %s returned %d dimensions, configured %d",
				h.c.URL, h.c.Model, len(d.Embedding), h.c.Dimension)
		}
		out[idx] = Normalise(d.Embedding)
	}
	for i := range out {
		if out[i] == nil {
			return nil, fmt.Errorf("embedding endpoint %s: no embedding for input %d", h.c.URL, i)
		}
	}
	return out, nil
}

// unwrapURL drops net/http's "Post \"url\":" prefix, which repeats the endpoint.
func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// snippet is the start of an error answer, for the message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// Normalise returns v scaled to unit length (v itself when it is zero).
func Normalise(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	n := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}
