package uselite

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// golden is testdata/golden.json: reference ids and vectors from the package's own
// JavaScript runtime (testdata/npm/golden.js).
type golden struct {
	Model   string `json:"model"`
	Runtime string `json:"runtime"`
	Cases   []struct {
		Text   string    `json:"text"`
		IDs    []int32   `json:"ids"`
		Vector []float64 `json:"vector"`
	} `json:"cases"`
}

func readGolden(t *testing.T, b []byte) golden {
	t.Helper()
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("golden file: %v", err)
	}
	if len(g.Cases) < 20 {
		t.Fatalf("golden file has %d cases, want at least 20", len(g.Cases))
	}
	return g
}

func encoder(t testing.TB) *Encoder {
	t.Helper()
	e, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func cosine(a []float32, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * b[i]
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}

func TestGoldenVectorsMatchTheReferenceRuntime(t *testing.T) {
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	g := readGolden(t, b)
	e := encoder(t)
	texts := make([]string, len(g.Cases))
	for i, c := range g.Cases {
		texts[i] = c.Text
	}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i, c := range g.Cases {
		want := c.IDs
		if len(want) > e.MaxTokens() {
			want = want[:e.MaxTokens()] // the graph clips to its maximum length
		}
		if ids := e.Tokenize(c.Text); !slices.Equal(ids, want) {
			t.Errorf("%q: ids %v, reference %v", c.Text, ids, want)
		}
		cos := cosine(got[i], c.Vector)
		worst = min(worst, cos)
		if cos < 0.99 {
			t.Errorf("%q: cosine with the reference vector %.5f, want ≥ 0.99", c.Text, cos)
		}
	}
	t.Logf("lowest cosine with the reference vectors: %.6f", worst)
}

// TestGoldenSimilarityRanksMatchTheReferenceRuntime checks that for every sentence a of the
// golden set, whenever the reference runtime clearly prefers b to c (by more than 0.001 in
// cosine), so does the Go encoder.
func TestGoldenSimilarityRanksMatchTheReferenceRuntime(t *testing.T) {
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	g := readGolden(t, b)
	texts := make([]string, len(g.Cases))
	for i, c := range g.Cases {
		texts[i] = c.Text
	}
	got, err := encoder(t).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	n := len(texts)
	ref := make([][]float64, n)
	ours := make([][]float64, n)
	for i := range n {
		ref[i], ours[i] = make([]float64, n), make([]float64, n)
		for j := range n {
			ref[i][j] = dot64(g.Cases[i].Vector, g.Cases[j].Vector)
			ours[i][j] = cosine(got[i], float64s(got[j]))
		}
	}
	checked := 0
	for a := range n {
		for b := range n {
			for c := range n {
				if a == b || a == c || ref[a][b]-ref[a][c] <= 0.001 {
					continue
				}
				checked++
				if ours[a][b] <= ours[a][c] {
					t.Errorf("for %q the reference ranks %q (%.4f) above %q (%.4f); Go gives %.4f ≤ %.4f",
						texts[a], texts[b], ref[a][b], texts[c], ref[a][c], ours[a][b], ours[a][c])
				}
			}
		}
	}
	t.Logf("%d ordered triples agree", checked)
}

func dot64(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
