package vectors

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEndpoint answers like an OpenAI-compatible /embeddings: input i of length n gets
// a vector of dim values (n, i, 1, …), unnormalised. fail says how many requests fail
// first, with status.
func fakeEndpoint(t *testing.T, dim int, fail int32, status int) (*httptest.Server, *atomic.Int32, *[]int) {
	var calls atomic.Int32
	var batches []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if n <= fail {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":"busy"}`))
			return
		}
		var req embeddingRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "nomic" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		batches = append(batches, len(req.Input))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var a struct {
			Data []item `json:"data"`
		}
		for i := len(req.Input) - 1; i >= 0; i-- { // out of order: index says where
			v := make([]float32, dim)
			v[0], v[1] = float32(len(req.Input[i])), float32(i)
			a.Data = append(a.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls, &batches
}

func TestHTTPEmbedder(t *testing.T) {
	ctx := context.Background()
	cfg := func(url string, dim int) HTTPConfig {
		return HTTPConfig{URL: url + "/v1/", Model: "nomic", Dimension: dim, APIKey: "sk-test", MaxBatch: 2,
			Backoff: time.Millisecond, Timeout: time.Second}
	}
	t.Run("batches the texts and keeps their order, normalised", func(t *testing.T) {
		srv, _, batches := fakeEndpoint(t, 4, 0, 0)
		e, err := NewHTTP(cfg(srv.URL, 4))
		if err != nil {
			t.Fatal(err)
		}
		if e.Model() != "http:nomic" || e.Dimension() != 4 {
			t.Errorf("model %s dim %d", e.Model(), e.Dimension())
		}
		vs, err := e.Embed(ctx, []string{"a", "bb", "ccc", "dddd", "eeeee"})
		if err != nil {
			t.Fatal(err)
		}
		if got := *batches; len(got) != 3 || got[0] != 2 || got[2] != 1 {
			t.Errorf("batches = %v, want [2 2 1]", got)
		}
		for i, v := range vs {
			n := float32(i + 1)
			idx := float32(i % 2)
			want := n / float32(math.Sqrt(float64(n*n+idx*idx)))
			if d := v[0] - want; d > 1e-5 || d < -1e-5 {
				t.Errorf("vector %d = %v, want first %v", i, v, want)
			}
		}
	})
	t.Run("retries 5xx and 429, then succeeds", func(t *testing.T) {
		for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
			srv, calls, _ := fakeEndpoint(t, 4, 2, status)
			e, _ := NewHTTP(cfg(srv.URL, 4))
			if _, err := e.Embed(ctx, []string{"x"}); err != nil {
				t.Errorf("%d: %v", status, err)
			}
			if calls.Load() != 3 {
				t.Errorf("%d: %d calls, want 3", status, calls.Load())
			}
		}
	})
	t.Run("gives up after the retries with the status", func(t *testing.T) {
		srv, calls, _ := fakeEndpoint(t, 4, 100, http.StatusBadGateway)
		c := cfg(srv.URL, 4)
		c.Retries = 2
		e, _ := NewHTTP(c)
		_, err := e.Embed(ctx, []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "502") || calls.Load() != 3 {
			t.Errorf("err = %v after %d calls", err, calls.Load())
		}
	})
	t.Run("a 4xx is not retried", func(t *testing.T) {
		srv, calls, _ := fakeEndpoint(t, 4, 0, 0)
		c := cfg(srv.URL, 4)
		c.APIKey = "wrong"
		e, _ := NewHTTP(c)
		_, err := e.Embed(ctx, []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "401") || calls.Load() != 1 {
			t.Errorf("err = %v after %d calls", err, calls.Load())
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("the API key leaked: %v", err)
		}
	})
	t.Run("a wrong dimension is an error", func(t *testing.T) {
		srv, _, _ := fakeEndpoint(t, 3, 0, 0)
		e, _ := NewHTTP(cfg(srv.URL, 4))
		_, err := e.Embed(ctx, []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "returned 3 dimensions, configured 4") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a down endpoint says so", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c := cfg(url, 4)
		c.Retries = 1
		e, _ := NewHTTP(c)
		_, err := e.Embed(ctx, []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "embedding endpoint "+url+"/v1 is unreachable") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a slow endpoint times out", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}))
		defer srv.Close()
		c := cfg(srv.URL, 4)
		c.Timeout, c.Retries = 50*time.Millisecond, -1
		e, _ := NewHTTP(c)
		start := time.Now()
		if _, err := e.Embed(ctx, []string{"x"}); err == nil || time.Since(start) > time.Second {
			t.Errorf("err = %v after %v", err, time.Since(start))
		}
	})
	t.Run("bad configurations are refused", func(t *testing.T) {
		for _, c := range []HTTPConfig{{}, {URL: "ftp://x", Model: "m", Dimension: 3}, {URL: "http://x", Dimension: 3},
			{URL: "http://x", Model: "m"}, {URL: "http://x", Model: "m", Dimension: MaxDimension + 1}} {
			if _, err := NewHTTP(c); err == nil {
				t.Errorf("%+v accepted", c)
			}
		}
	})
}
