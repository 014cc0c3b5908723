package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/search"
)

// retrievalSet is testdata/retrieval.json: catalog assets of several kinds (tables with
// fct_/dim_ names, name-only assets, dashboards, pipelines, glossary terms, metrics, AI
// assets) and natural questions (paraphrases, synonyms, abbreviations, typos), each
// with the names of the assets that answer it.
type retrievalSet struct {
	Assets []struct {
		Kind        string   `json:"kind"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Columns     []string `json:"columns"`
	} `json:"assets"`
	Questions []struct {
		Question string   `json:"question"`
		Relevant []string `json:"relevant"`
	} `json:"questions"`
}

// parents are the services, hierarchy and glossary the assets live in.
var parents = []struct {
	kind string
	body meridian.Entity
}{
	{"databaseService", meridian.Entity{"name": "shop", "serviceType": "Postgres"}},
	{"database", meridian.Entity{"name": "dw", "service": "shop"}},
	{"databaseSchema", meridian.Entity{"name": "public", "database": "shop.dw"}},
	{"dashboardService", meridian.Entity{"name": "looker", "serviceType": "Looker"}},
	{"pipelineService", meridian.Entity{"name": "airflow", "serviceType": "Airflow"}},
	{"mcpService", meridian.Entity{"name": "mcp_hub", "serviceType": "Mcp"}},
	{"llmService", meridian.Entity{"name": "openai", "serviceType": "OpenAI"}},
	{"glossary", meridian.Entity{"name": "Business", "description": "Business terms"}},
}

// parentField is the reference each asset kind of the set needs.
var parentField = map[string][2]string{
	"table": {"databaseSchema", "shop.dw.public"}, "dashboard": {"service", "looker"},
	"pipeline": {"service", "airflow"}, "mcpServer": {"service", "mcp_hub"}, "llmModel": {"service", "openai"},
	"glossaryTerm": {"glossary", "Business"},
}

// required are the fields the AI asset kinds require.
var required = map[string]map[string]string{
	"mcpServer":     {"serverType": "Database", "transportType": "Stdio"},
	"llmModel":      {"baseModel": "base"},
	"aiApplication": {"applicationType": "Assistant"},
}

func ndcg10(ranked, relevant []string) float64 {
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

// TestRetrievalQualityOnALabelledCatalog loads the labelled set into a real catalog
// (SQLite, the embedder MERIDIAN_EMBEDDER selects: hashing by default), and measures
// top-3 and nDCG@10 of strict keyword search (every word as asked, the behaviour before
// forgiving search), keyword, vector and hybrid search over the default index. Hybrid
// must beat strict keyword by 0.2 nDCG@10, and search_metadata must answer something
// for at least 95% of the questions.
func TestRetrievalQualityOnALabelledCatalog(t *testing.T) {
	b, err := os.ReadFile("testdata/retrieval.json")
	if err != nil {
		t.Fatal(err)
	}
	var set retrievalSet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Assets) < 150 || len(set.Questions) < 60 {
		t.Fatalf("the set has %d assets and %d questions, want at least 150 and 60", len(set.Assets), len(set.Questions))
	}
	ctx := context.Background()
	admin := meridian.System
	c, err := app.Open(ctx, app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range parents {
		if _, err := c.Entities.Create(ctx, admin, p.kind, p.body); err != nil {
			t.Fatalf("%s: %v", p.kind, err)
		}
	}
	names := map[string]string{} // id → name
	for _, a := range set.Assets {
		body := meridian.Entity{"name": a.Name}
		if a.Description != "" {
			body["description"] = a.Description
		}
		if pf, ok := parentField[a.Kind]; ok {
			body[pf[0]] = pf[1]
		}
		for f, v := range required[a.Kind] {
			body[f] = v
		}
		if len(a.Columns) > 0 {
			cols := make([]any, len(a.Columns))
			for i, col := range a.Columns {
				cols[i] = map[string]any{"name": col, "dataType": "VARCHAR", "dataLength": 64}
			}
			body["columns"] = cols
		}
		res, err := c.Entities.Create(ctx, admin, a.Kind, body)
		if err != nil {
			t.Fatalf("%s %s: %v", a.Kind, a.Name, err)
		}
		names[res.Entity.ID()] = a.Name
	}
	start := time.Now()
	if err := c.Dispatcher.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("embedder %s: %d assets indexed in %v", c.Embedder.Model(), len(set.Assets), time.Since(start).Round(time.Millisecond))
	kinds, err := search.Kinds(meridian.DefaultRegistry(), "dataAsset")
	if err != nil {
		t.Fatal(err)
	}

	modes := []struct {
		name   string
		mode   search.Mode
		strict bool
	}{{"strict keyword", search.Keyword, true}, {"keyword", search.Keyword, false}, {"vector", search.Vector, false}, {"hybrid", search.Hybrid, false}}
	scores := map[string]float64{}
	for _, m := range modes {
		var sum float64
		top3 := 0
		for _, q := range set.Questions {
			query := search.Query{Mode: m.mode, Text: q.Question, Kinds: kinds, Size: 10}
			if m.mode == search.Keyword {
				query.Text, query.Terms, query.Strict = "", search.Words(q.Question), m.strict
			}
			res, err := c.Search.Search(ctx, admin, query)
			if err != nil {
				t.Fatalf("%s %q: %v", m.name, q.Question, err)
			}
			var ranked []string
			for _, h := range res.Hits {
				ranked = append(ranked, names[h.ID])
			}
			sum += ndcg10(ranked, q.Relevant)
			if slices.ContainsFunc(ranked[:min(3, len(ranked))], func(r string) bool { return slices.Contains(q.Relevant, r) }) {
				top3++
			} else if testing.Verbose() {
				t.Logf("%s: %q not in the top 3: %v", m.name, q.Question, ranked[:min(3, len(ranked))])
			}
		}
		n := float64(len(set.Questions))
		scores[m.name] = sum / n
		t.Logf("%-15s nDCG@10 %.3f  top-3 %d/%d (%.0f%%)", m.name, sum/n, top3, len(set.Questions), 100*float64(top3)/n)
	}
	if scores["hybrid"] < scores["strict keyword"]+0.2 {
		t.Errorf("hybrid %.3f does not beat strict keyword %.3f by 0.2", scores["hybrid"], scores["strict keyword"])
	}
	if scores["keyword"] < scores["strict keyword"]+0.2 {
		t.Errorf("keyword %.3f does not beat strict keyword %.3f by 0.2", scores["keyword"], scores["strict keyword"])
	}

	answered := 0
	for _, q := range set.Questions {
		res, err := c.Tools.Call(ctx, admin, "search_metadata", map[string]any{"query": q.Question})
		if err != nil || res.IsError {
			t.Fatalf("search_metadata %q: %v %s", q.Question, err, res.Text)
		}
		if n := fmt.Sprint(res.Structured["totalFound"]); n != "0" && n != "<nil>" {
			answered++
		} else {
			t.Logf("search_metadata found nothing for %q: %v", q.Question, res.Structured["hint"])
		}
	}
	t.Logf("search_metadata answered %d/%d natural questions", answered, len(set.Questions))
	if float64(answered) < 0.95*float64(len(set.Questions)) {
		t.Errorf("search_metadata answered %d of %d questions, want at least 95%%", answered, len(set.Questions))
	}
}
