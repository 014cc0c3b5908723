package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/vectors"
)

// seedGlossaries creates a catalog in dir with n glossaries and returns their ids. No
// outbox consumer runs, so none of them has vectors yet.
func seedGlossaries(t *testing.T, dir string, n int) []string {
	t.Helper()
	ctx := context.Background()
	cat, err := openCatalog(ctx, app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var ids []string
	for i := range n {
		e, err := cat.Entities.Create(ctx, system, "glossary", meridian.Entity{
			"name": "terms_" + string(rune('a'+i)), "description": "Business terms of the sales team"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.Entity.ID())
	}
	return ids
}

func TestReindexEmbedsEveryEntityWithTheConfiguredModelAndShowsProgress(t *testing.T) {
	t.Setenv("MERIDIAN_EMBEDDER", app.EmbedderHashing)
	dir := t.TempDir()
	ids := seedGlossaries(t, dir, 3)

	code, _, stderr := runCmd("reindex", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "reindex: 100%") || !strings.Contains(stderr, vectors.HashingModel) {
		t.Fatalf("the output shows no 100%% or no model:\n%s", stderr)
	}
	ctx := context.Background()
	cat, err := openCatalog(ctx, app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	for _, id := range ids {
		if _, _, found, err := cat.Vectors.Stored(ctx, id, vectors.HashingModel, vectors.HashingDimension); err != nil || !found {
			t.Fatalf("entity %s has no %s vectors (err %v)", id, vectors.HashingModel, err)
		}
	}
	if current, err := cat.Indexer.Current(ctx); err != nil || !current {
		t.Fatalf("after reindex the index is not current for the model: %v, %v", current, err)
	}
}

func TestReindexFailsWithTheJobsErrorWhenTheEmbedderFails(t *testing.T) {
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"model not loaded"}`, http.StatusBadRequest)
	}))
	defer endpoint.Close()
	dir := t.TempDir()
	seedGlossaries(t, dir, 1)
	t.Setenv("MERIDIAN_EMBEDDER", app.EmbedderHTTP)
	t.Setenv("MERIDIAN_EMBEDDING_URL", endpoint.URL)
	t.Setenv("MERIDIAN_EMBEDDING_MODEL", "broken")
	t.Setenv("MERIDIAN_EMBEDDING_DIMENSION", "8")

	code, _, stderr := runCmd("reindex", "--data-dir", dir)
	if code != 1 || !strings.Contains(stderr, "failed") {
		t.Fatalf("exit %d, want 1 with the job's error:\n%s", code, stderr)
	}
}

func TestProgressBarRedrawsInPlaceOnATerminalAndPrintsLinesOtherwise(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		want string
	}{
		{"terminal", true, "\rreindex [" + strings.Repeat(".", barWidth) + "]   0%" +
			"\rreindex [" + strings.Repeat("#", barWidth/2) + strings.Repeat(".", barWidth/2) + "]  50%" +
			"\rreindex [" + strings.Repeat("#", barWidth) + "] 100%\n"},
		{"pipe", false, "reindex: 0%\nreindex: 50%\nreindex: 100%\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			b := &progressBar{w: &out, label: "reindex", tty: tc.tty, last: -1}
			for _, p := range []int{0, 0, 50, 100} {
				b.set(p)
			}
			b.end()
			if out.String() != tc.want {
				t.Fatalf("got %q, want %q", out.String(), tc.want)
			}
		})
	}
}
