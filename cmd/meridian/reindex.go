package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/vectors"
)

// reindexPoll is how often `meridian reindex` reads its job's progress.
const reindexPoll = 200 * time.Millisecond

// reindexCmd runs `meridian reindex`: it re-embeds every entity with the configured
// embedder (MERIDIAN_EMBEDDER*) in the durable job vectors.reindex, showing the job's
// progress on stderr, and fails with the job's error when the job fails. Entities whose
// vectors are current for the model are skipped, and the vectors of other models are
// removed at the end. Run it while no server uses the same data directory: a server
// started with a new model starts the same job by itself. Interrupted (Ctrl-C), the
// job is left for the next server or reindex of this data directory to resume.
func reindexCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("reindex", stderr)
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	level := fs.string("log-level", "MERIDIAN_LOG_LEVEL", "warn", "log level: debug, info, warn or error")
	if err := fs.parse(args); err != nil {
		return err
	}
	log, err := newLogger(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return errUsage
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	cat, err := openCatalog(ctx, app.Config{DataDir: *dir, DatabaseURL: *dbURL, Logger: log})
	if err != nil {
		return err
	}
	defer cat.Close()
	// The jobs service heartbeats the job (so no other node takes it over) and, when
	// ctx ends, stops it and leaves it for recovery; it stops before the store closes.
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { cat.Jobs.Run(runCtx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	emb := cat.Indexer.Embedder()
	id, err := cat.Indexer.StartReindex(ctx, cat.Jobs, system)
	if err != nil {
		return fmt.Errorf("start the reindex: %w", err)
	}
	fmt.Fprintf(stderr, "meridian: re-embedding the catalog with %s (%d dimensions), job %s\n", emb.Model(), emb.Dimension(), id)
	j, err := watchJob(ctx, cat.Jobs, id, "reindex", "the next serve or reindex", stderr)
	if err != nil {
		return err
	}
	var res vectors.ReindexResult
	_ = json.Unmarshal(j.Result, &res)
	fmt.Fprintf(stderr, "meridian: %d entities, %d embedded, %d stale vectors removed\n", res.Entities, res.Embedded, res.Pruned)
	return nil
}

// progressBar shows a percentage on w: a bar redrawn in place when w is a terminal,
// otherwise one line per new percentage.
type progressBar struct {
	w       io.Writer
	label   string // what the bar shows the progress of: reindex, graph rebuild
	tty     bool
	last    int
	started bool
}

// barWidth is the number of cells of the bar.
const barWidth = 40

func newProgressBar(w io.Writer, label string) *progressBar {
	return &progressBar{w: w, label: label, tty: isTerminal(w), last: -1}
}

// set shows percent (0 to 100) unless it is already shown.
func (b *progressBar) set(percent int) {
	percent = max(0, min(100, percent))
	if percent == b.last {
		return
	}
	b.last, b.started = percent, true
	if !b.tty {
		fmt.Fprintf(b.w, "%s: %d%%\n", b.label, percent)
		return
	}
	filled := percent * barWidth / 100
	fmt.Fprintf(b.w, "\r%s [%s%s] %3d%%", b.label, strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), percent)
}

// end ends the bar's line on a terminal.
func (b *progressBar) end() {
	if b.tty && b.started {
		fmt.Fprintln(b.w)
	}
	b.started = false
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
