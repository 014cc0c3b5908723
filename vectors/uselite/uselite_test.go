package uselite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/vectors"
)

var _ vectors.Embedder = (*Encoder)(nil)

func TestEncoderDescribesItsModel(t *testing.T) {
	e := encoder(t)
	if e.Model() != "use-lite-en@0.2.0-fp16" || e.Dimension() != 512 || e.MaxTokens() != 128 {
		t.Errorf("Model %q, Dimension %d, MaxTokens %d", e.Model(), e.Dimension(), e.MaxTokens())
	}
	again := encoder(t)
	if again.model != e.model {
		t.Error("a second New decoded the weights again instead of sharing them")
	}
}

func TestEmbedInput(t *testing.T) {
	e := encoder(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		texts    []string
		wantLen  int
		wantCode string
	}{
		{"nil embeds nothing", nil, 0, ""},
		{"an empty batch embeds nothing", []string{}, 0, ""},
		{"empty and blank texts get vectors", []string{"", "   ", "\n"}, 3, ""},
		{"a huge text is cut, not refused", []string{strings.Repeat("orders ", 1<<20)}, 1, ""},
		{"a full batch is accepted", slices.Repeat([]string{"a"}, MaxBatch), MaxBatch, ""},
		{"a batch over MaxBatch is refused", slices.Repeat([]string{"a"}, MaxBatch+1), 0, meridian.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Embed(ctx, tt.texts)
			if code := meridian.ErrorCode(err); code != tt.wantCode {
				t.Fatalf("error %v (code %q), want code %q", err, code, tt.wantCode)
			}
			if len(got) != tt.wantLen {
				t.Fatalf("%d vectors, want %d", len(got), tt.wantLen)
			}
			for i, v := range got {
				if len(v) != Dimension {
					t.Fatalf("vector %d has %d floats", i, len(v))
				}
				var sum float64
				for _, x := range v {
					if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
						t.Fatalf("vector %d has %v", i, x)
					}
					sum += float64(x) * float64(x)
				}
				if math.Abs(sum-1) > 1e-4 {
					t.Errorf("vector %d has squared norm %v, want 1", i, sum)
				}
			}
		})
	}
}

func TestEmbedStopsWhenTheContextIsCancelled(t *testing.T) {
	e := encoder(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"orders"}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestEmbedIsDeterministicUnderConcurrentUse(t *testing.T) {
	e := encoder(t)
	texts := []string{"customer orders", "daily revenue by region", "", "who reports to whom", "fct_orders", "warehouse stock"}
	want, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				errs <- err
				return
			}
			for i := range texts {
				if !slices.Equal(got[i], want[i]) {
					errs <- fmt.Errorf("goroutine %d: vector for %q differs", g, texts[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEmbedOrderDoesNotChangeVectors(t *testing.T) {
	e := encoder(t)
	one, err := e.Embed(context.Background(), []string{"customer orders"})
	if err != nil {
		t.Fatal(err)
	}
	many, err := e.Embed(context.Background(), []string{"a much longer text about daily revenue by region", "customer orders"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(one[0], many[1]) {
		t.Error("a text's vector depends on the other texts of its batch")
	}
}
