package main

import (
	"context"
	"sync"
	"time"
)

// parallel calls f(from, to) for consecutive ranges of at most step of 0..n-1 from
// workers goroutines and returns the wall time; the first error stops it and is
// returned as f returned it.
func parallel(ctx context.Context, n, step, workers int, f func(from, to int) error) (time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for from := range jobs {
				to := min(from+step, n)
				if err := f(from, to); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
feed:
	for from := 0; from < n; from += step {
		select {
		case jobs <- from:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return time.Since(start), context.Cause(ctx)
}
