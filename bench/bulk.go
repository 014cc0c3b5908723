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

// ingestBulk loads n more tables (generated as tables first..first+n-1, so their names
// are new) through PUT /api/v1/tables/bulk, bulkBatch per request, with workers
// concurrent clients. Every element must succeed.
func ingestBulk(ctx context.Context, c *client, seed uint64, first, n, workers int) (time.Duration, error) {
	return parallel(ctx, n, bulkBatch, workers, func(from, to int) error {
		bodies := make([]map[string]any, 0, to-from)
		for i := from; i < to; i++ {
			bodies = append(bodies, genTable(seed, first+i).body)
		}
		if err := putBulk(ctx, c, bodies); err != nil {
			return fmt.Errorf("bulk of tables %d..%d: %w", first+from, first+to-1, err)
		}
		return nil
	})
}

// putBulk sends one bulk request and fails unless every element succeeded.
func putBulk(ctx context.Context, c *client, bodies []map[string]any) error {
	b, err := json.Marshal(bodies)
	if err != nil {
		return err
	}
	ans, err := c.do(ctx, http.MethodPut, "/api/v1/tables/bulk", "application/json", b)
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
	if res.Status != "success" || res.Passed != len(bodies) {
		first := res.AbortReason
		if len(res.FailedRequest) > 0 {
			first = res.FailedRequest[0].Message
		}
		return fmt.Errorf("bulk status %s, %d of %d passed: %s", res.Status, res.Passed, len(bodies), first)
	}
	return nil
}
