package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// indexerWords name the tables of the kill -9 test, so that each name is distinct.
var indexerWords = []string{"ledger", "refund", "cohort", "invoice", "churn", "shipment", "coupon", "payroll",
	"warranty", "tariff", "voucher", "rebate"}

// vectorsBacklog is the vectors consumer's number of undelivered events (-1 when absent).
func vectorsBacklog(c *client) int {
	for _, st := range list(c.must(http.StatusOK, "GET", "/api/v1/events/consumers", nil)["data"]) {
		if m := object(st); m["name"] == "vectors" {
			return int(num(m["pending"]))
		}
	}
	return -1
}

func TestIndexerResumesAfterKill9AndIndexesEveryEntityOnce(t *testing.T) {
	t.Parallel()
	const n, perRequest = 240, 40
	s := startServer(t)
	sch, _ := hierarchy(t, s.admin, "kill9_svc", "kill9_db", "kill9_schema")
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s_%s_%d", indexerWords[i%len(indexerWords)], indexerWords[(i/len(indexerWords))%len(indexerWords)], i)
	}

	// Bulk writes from several clients at once, then kill -9 the moment the last one is
	// acknowledged: the indexer, which runs after the commits, is left behind.
	var wg sync.WaitGroup
	for from := 0; from < n; from += perRequest {
		var bodies []map[string]any
		for i := from; i < from+perRequest; i++ {
			bodies = append(bodies, map[string]any{"name": names[i], "databaseSchema": sch, "columns": twoColumns(),
				"description": fmt.Sprintf("Table %d of the indexer crash test.", i)})
		}
		wg.Go(func() {
			hc := &http.Client{Timeout: 60 * time.Second}
			if status, changes := bulkWrite(hc, s.base, s.adminToken, bodies); status != http.StatusOK || len(changes) != len(bodies) {
				t.Errorf("bulk of %d tables: status %d, %d written", len(bodies), status, len(changes))
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	backlog := vectorsBacklog(s.admin)
	s.crash()
	t.Logf("killed with %d events not yet indexed", backlog)

	r := s.restart(t)
	eventually(t, 2*time.Minute, "the vectors indexer catches up after the restart", func() bool { return vectorsBacklog(r.admin) == 0 })

	for _, name := range names {
		fqn := sch + "." + name
		ans := r.admin.must(http.StatusOK, "GET", "/api/v1/search/semantic?index=table&size=20&q="+url.QueryEscape(name), nil)
		found := 0
		for _, h := range hitFQNs(ans) {
			if h == fqn {
				found++
			}
		}
		if found != 1 {
			t.Errorf("semantic search for %q finds %s %d times, want once; hits %v", name, fqn, found, hitFQNs(ans))
		}
	}
}
