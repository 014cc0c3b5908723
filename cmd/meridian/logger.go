package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// newLogger returns a text logger on w at the named level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.TrimSpace(level))); err != nil {
		return nil, fmt.Errorf("invalid log level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// Bounds of the server's log buffer.
const (
	logFlushEvery = 100 * time.Millisecond // longest a line waits in the buffer
	logBufferMax  = 64 << 10               // bytes after which a write flushes at once
)

// logBuffer is the server's log output: a request's access line is copied into a
// buffer, which a goroutine writes out every logFlushEvery, rather than costing each
// request a write to stderr. A write that fills the buffer past logBufferMax flushes
// it at once; Flush (after every warning and error, see flushAbove) and Close write
// what waits. A process killed with SIGKILL loses at most the last logFlushEvery of
// lines. Write errors are dropped: a log line is not worth failing a request.
type logBuffer struct {
	every time.Duration
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	stop  chan struct{}
	done  chan struct{}
}

// newLogBuffer starts a buffer in front of w that writes out every period (the server
// uses logFlushEvery); Close stops it.
func newLogBuffer(w io.Writer, every time.Duration) *logBuffer {
	b := &logBuffer{every: every, w: w, stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *logBuffer) run() {
	defer close(b.done)
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.Flush()
		case <-b.stop:
			b.Flush()
			return
		}
	}
}

// Write appends p to the buffer, and flushes when the buffer is full.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) >= logBufferMax {
		b.flushLocked()
	}
	return len(p), nil
}

// Flush writes out what is buffered.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBuffer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	_, _ = b.w.Write(b.buf)
	if cap(b.buf) > 4*logBufferMax {
		b.buf = nil // a burst does not keep its memory
	} else {
		b.buf = b.buf[:0]
	}
}

// Close flushes and stops the buffer's goroutine; later writes are buffered until the
// next Flush.
func (b *logBuffer) Close() {
	close(b.stop)
	<-b.done
}

// flushAbove is a slog.Handler that flushes its buffer after every record at level
// or above, so warnings and errors are never left waiting.
type flushAbove struct {
	slog.Handler
	buf   *logBuffer
	level slog.Level
}

func (h flushAbove) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= h.level {
		h.buf.Flush()
	}
	return err
}

func (h flushAbove) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushAbove{Handler: h.Handler.WithAttrs(attrs), buf: h.buf, level: h.level}
}

func (h flushAbove) WithGroup(name string) slog.Handler {
	return flushAbove{Handler: h.Handler.WithGroup(name), buf: h.buf, level: h.level}
}

// newBufferedLogger is newLogger writing through buf, which it flushes after every
// warning and error.
func newBufferedLogger(buf *logBuffer, level string) (*slog.Logger, error) {
	l, err := newLogger(buf, level)
	if err != nil {
		return nil, err
	}
	return slog.New(flushAbove{Handler: l.Handler(), buf: buf, level: slog.LevelWarn}), nil
}
