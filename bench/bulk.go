package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// bulkBatch is how many tables one bulk request carries.
const bulkBatch = 500

// bulkRequests encodes the bulk requests that carry tables first..first+n-1 (generated
// from their index, so their names are new), bulkBatch a request. An ingest encodes them
// before its clock and its CPU count start: the bench's clients share the server's
// CPUs, and a timed window in which they generate and encode tables would time them
// too.
func bulkRequests(seed uint64, first, n int) ([][]byte, error) {
	var reqs [][]byte
	for from := 0; from < n; from += bulkBatch {
		bodies := make([]map[string]any, 0, bulkBatch)
		for i := from; i < min(from+bulkBatch, n); i++ {
			bodies = append(bodies, genTable(seed, first+i).body)
		}
		b, err := json.Marshal(bodies)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, b)
	}
	return reqs, nil
}

// ingestBulk sends reqs, the bulk requests of n tables from bulkRequests, through PUT
// /api/v1/tables/bulk with workers concurrent clients, and returns the wall time.
// Every element must succeed.
func ingestBulk(ctx context.Context, c *client, reqs [][]byte, n, workers int) (time.Duration, error) {
	return parallel(ctx, n, bulkBatch, workers, func(from, to int) error {
		if err := putBulk(ctx, c, reqs[from/bulkBatch], to-from); err != nil {
			return fmt.Errorf("bulk request %d: %w", from/bulkBatch, err)
		}
		return nil
	})
}

// putBulk sends one bulk request of n elements, encoded, and fails unless every element
// succeeded.
func putBulk(ctx context.Context, c *client, req []byte, n int) error {
	ans, err := c.do(ctx, http.MethodPut, "/api/v1/tables/bulk", "application/json", req)
	if err != nil {
		return err
	}
	var res struct {
		Status        string `json:"status"`
		AbortReason   string `json:"abortReason"`
		Passed        int    `json:"numberOfRowsPassed"`
		FailedRequest []struct {
			Message string `json:"message"`
		} `json:"failedRequest"`
	}
	if err := json.Unmarshal(ans, &res); err != nil {
		return fmt.Errorf("bulk answer: %w", err)
	}
	if res.Status != "success" || res.Passed != n {
		first := res.AbortReason
		if len(res.FailedRequest) > 0 {
			first = res.FailedRequest[0].Message
		}
		return fmt.Errorf("bulk status %s, %d of %d passed: %s", res.Status, res.Passed, n, first)
	}
	return nil
}
