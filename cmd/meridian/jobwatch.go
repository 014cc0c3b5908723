package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/meridian-catalog/meridian/store/jobs"
)

// watchJob follows the durable job id started by the command `what` (reindex, graph
// rebuild), showing its progress on stderr every reindexPoll, and returns the job once
// it completed. A failed job is an error naming it; an interrupted command (ctx done)
// is an error saying that the job resumes with resumesWith.
func watchJob(ctx context.Context, js *jobs.Service, id, what, resumesWith string, stderr io.Writer) (jobs.Job, error) {
	bar := newProgressBar(stderr, what)
	tick := time.NewTicker(reindexPoll)
	defer tick.Stop()
	for {
		j, err := js.Get(ctx, system, id)
		if err != nil {
			if ctx.Err() != nil {
				bar.end()
				return jobs.Job{}, fmt.Errorf("interrupted: job %s resumes with %s", id, resumesWith)
			}
			return jobs.Job{}, err
		}
		switch j.Status {
		case jobs.StatusCompleted:
			bar.set(100)
			bar.end()
			return j, nil
		case jobs.StatusFailed:
			bar.end()
			return jobs.Job{}, fmt.Errorf("%s job %s failed: %s", what, id, j.Error)
		}
		bar.set(j.Progress)
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}
