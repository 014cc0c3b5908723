package vectors_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/search"
)

// labelled is testdata/retrieval.json: catalog tables and natural questions, each with
// the tables that answer it.
type labelled struct {
	Assets []struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Columns     []string `json:"columns"`
	} `json:"assets"`
	Questions []struct {
		Question string   `json:"question"`
		Relevant []string `json:"relevant"`
	} `json:"questions"`
}

// ndcg10 is the nDCG@10 of a ranking with binary relevance.
func ndcg10(ranked []string, relevant []string) float64 {
	var dcg, ideal float64
	for i, name := range ranked[:min(10, len(ranked))] {
		if slices.Contains(relevant, name) {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := range min(10, len(relevant)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal
}

// TestRetrievalQuality measures strict keyword (every word as asked), keyword (stop
// words, stems, typos, relaxed), vector (hashing) and hybrid retrieval on the labelled
// set, with and without descriptions, and checks that hybrid beats strict keyword and
// that the forgiving keyword search does not fall below it.
func TestRetrievalQuality(t *testing.T) {
	b, err := os.ReadFile("testdata/retrieval.json")
	if err != nil {
		t.Fatal(err)
	}
	var set labelled
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	for _, withDesc := range []bool{true, false} {
		ctx := context.Background()
		c := openCatalog(t, app.Config{DataDir: t.TempDir()})
		schema := createSchema(t, c)
		for _, a := range set.Assets {
			cols := make([]any, len(a.Columns))
			for i, col := range a.Columns {
				cols[i] = map[string]any{"name": col, "dataType": "VARCHAR", "dataLength": 64}
			}
			body := meridian.Entity{"name": a.Name, "databaseSchema": schema, "columns": cols}
			if withDesc && a.Description != "" {
				body["description"] = a.Description
			}
			if _, err := c.Entities.Create(ctx, admin, "table", body); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Dispatcher.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		type mode struct {
			name   string
			mode   search.Mode
			fusion search.Fusion
			strict bool
		}
		modes := []mode{{"strict keyword", search.Keyword, "", true}, {"keyword", search.Keyword, "", false},
			{"vector", search.Vector, "", false}, {"hybrid 0.3/0.7", search.Hybrid, search.FuseWeighted, false},
			{"hybrid RRF", search.Hybrid, search.FuseRRF, false}}
		scores := map[string]float64{}
		for _, m := range modes {
			engine := *c.Search
			engine.Fusion = m.fusion
			var sum float64
			top3 := 0
			for _, q := range set.Questions {
				query := search.Query{Mode: m.mode, Text: q.Question, Kinds: []string{"table"}, Size: 10}
				if m.mode == search.Keyword {
					query.Text, query.Terms, query.Strict = "", search.Words(q.Question), m.strict
				}
				res, err := engine.Search(ctx, admin, query)
				if err != nil {
					t.Fatalf("%s %q: %v", m.name, q.Question, err)
				}
				var ranked []string
				for _, h := range res.Hits {
					ranked = append(ranked, h.FQN[strings.LastIndexByte(h.FQN, '.')+1:])
				}
				sum += ndcg10(ranked, q.Relevant)
				for _, r := range ranked[:min(3, len(ranked))] {
					if slices.Contains(q.Relevant, r) {
						top3++
						break
					}
				}
			}
			n := float64(len(set.Questions))
			scores[m.name] = sum / n
			t.Logf("descriptions %-5v %-15s nDCG@10 %.3f  top-3 %d/%d (%.0f%%)", withDesc, m.name, sum/n, top3, len(set.Questions), 100*float64(top3)/n)
		}
		if scores["hybrid 0.3/0.7"] < scores["strict keyword"]+0.1 {
			t.Errorf("descriptions %v: hybrid %.3f does not beat strict keyword %.3f by 0.1", withDesc, scores["hybrid 0.3/0.7"], scores["strict keyword"])
		}
		if scores["keyword"] < scores["strict keyword"] {
			t.Errorf("descriptions %v: forgiving keyword %.3f is below strict keyword %.3f", withDesc, scores["keyword"], scores["strict keyword"])
		}
	}
}
