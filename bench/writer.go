package main

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// writerCounts are the counters of the server's single writer (/metrics), on a driver
// that commits writes in groups (SQLite); ok is false on others.
type writerCounts struct {
	commits, writes, busy float64 // busy in seconds
	ok                    bool
}

// writerLoad is the single writer's work over an ingest: the share of the wall time it
// was busy (near 1: writes waited for it) and how many writes one commit held.
type writerLoad struct {
	busy, perCommit float64
}

// readWriter scrapes the writer's counters; on any failure, or on a driver without
// them, it returns counts that are not ok.
func readWriter(ctx context.Context, c *client) writerCounts {
	b, err := c.do(ctx, http.MethodGet, "/metrics", "", nil)
	if err != nil {
		return writerCounts{}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return writerCounts{}
	}
	value := func(name string) (float64, bool) {
		f, ok := families[name]
		if !ok || len(f.GetMetric()) != 1 {
			return 0, false
		}
		return f.GetMetric()[0].GetCounter().GetValue(), true
	}
	var w writerCounts
	var ok1, ok2, ok3 bool
	w.commits, ok1 = value("meridian_writer_commits_total")
	w.writes, ok2 = value("meridian_writer_writes_total")
	w.busy, ok3 = value("meridian_writer_busy_seconds_total")
	w.ok = ok1 && ok2 && ok3
	return w
}

// load is the writer's work between w and later, over wall.
func (w writerCounts) load(later writerCounts, wall time.Duration) writerLoad {
	commits := later.commits - w.commits
	if !w.ok || !later.ok || commits <= 0 || wall <= 0 {
		return writerLoad{}
	}
	return writerLoad{busy: (later.busy - w.busy) / wall.Seconds(), perCommit: (later.writes - w.writes) / commits}
}
