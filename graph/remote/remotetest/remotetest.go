// Package remotetest finds the Virtuoso server the remote SPARQL tests run against (the
// one scripts/start-virtuoso.sh starts) and gives each test its own named graph.
package remotetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/graph/remote"
)

// DefaultEndpoint is where scripts/start-virtuoso.sh serves SPARQL.
const DefaultEndpoint = "http://127.0.0.1:18890/sparql"

// Endpoint is the test endpoint: MERIDIAN_TEST_SPARQL_ENDPOINT, else DefaultEndpoint.
func Endpoint() string {
	if e := os.Getenv("MERIDIAN_TEST_SPARQL_ENDPOINT"); e != "" {
		return e
	}
	return DefaultEndpoint
}

// Client returns a client of the test Virtuoso bound to a fresh named graph that is
// cleared when the test ends. When Virtuoso does not answer the test is skipped with a
// message naming it, or fails under CI=true, where every component must be present.
func Client(t testing.TB, cfg remote.Config) *remote.Client {
	t.Helper()
	if cfg.QueryEndpoint == "" {
		cfg.QueryEndpoint = Endpoint()
	}
	if cfg.Graph == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		cfg.Graph = "urn:meridian:test:" + hex.EncodeToString(b)
	}
	c, err := remote.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx); errors.Is(err, remote.ErrUnreachable) || errors.Is(err, remote.ErrTimeout) {
		Absent(t, err)
	} else if err != nil {
		t.Fatalf("the SPARQL endpoint at %s answers, but not as expected: %v", cfg.QueryEndpoint, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = c.Clear(ctx)
	})
	return c
}

// Absent skips (or, under CI=true, fails) a test because Virtuoso is not answering.
func Absent(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("Virtuoso is required under CI=true but does not answer at %s: %v", Endpoint(), err)
	}
	t.Skipf("Virtuoso is not answering at %s (start it with scripts/start-virtuoso.sh): %v", Endpoint(), err)
}
