package main

import (
	"strings"
	"testing"
	"time"
)

func TestServerLogWritesWarningsAtOnceAndInfoAtTheNextFlush(t *testing.T) {
	for _, c := range []struct {
		name string
		log  func(buf *logBuffer)
		// immediately: the line is out before the call returns, not at the next flush.
		immediately bool
	}{
		{"a warning is written at once", func(buf *logBuffer) {
			l, _ := newBufferedLogger(buf, "info")
			l.Warn("disk nearly full")
		}, true},
		{"an error is written at once", func(buf *logBuffer) {
			l, _ := newBufferedLogger(buf, "info")
			l.With("component", "x").Error("disk nearly full")
		}, true},
		{"an access line waits for the next flush", func(buf *logBuffer) {
			l, _ := newBufferedLogger(buf, "info")
			l.Info("disk nearly full")
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out lockedBuffer
			buf := newLogBuffer(&out, time.Hour)
			defer buf.Close()
			c.log(buf)
			if got := strings.Contains(out.String(), "disk nearly full"); got != c.immediately {
				t.Fatalf("written at once = %v, want %v", got, c.immediately)
			}
		})
	}
}

func TestServerLogWritesOutEveryPeriod(t *testing.T) {
	var out lockedBuffer
	buf := newLogBuffer(&out, 10*time.Millisecond)
	defer buf.Close()
	l, _ := newBufferedLogger(buf, "info")
	l.Info("request")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "request") {
		if time.Now().After(deadline) {
			t.Fatal("an access line was not written out within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
func TestServerLogIsWrittenOutOnClose(t *testing.T) {
	var out lockedBuffer
	buf := newLogBuffer(&out, time.Hour)
	l, _ := newBufferedLogger(buf, "info")
	l.Info("shutting down")
	buf.Close()
	if !strings.Contains(out.String(), "shutting down") {
		t.Fatalf("after Close the log holds %q", out.String())
	}
}

func TestServerLogFlushesAFullBufferAtOnce(t *testing.T) {
	var out lockedBuffer
	buf := newLogBuffer(&out, time.Hour)
	defer buf.Close()
	line := strings.Repeat("x", 1024) + "\n"
	for range logBufferMax/len(line) + 1 {
		_, _ = buf.Write([]byte(line))
	}
	if len(out.String()) < logBufferMax {
		t.Fatalf("a full buffer wrote %d bytes at once, want at least %d", len(out.String()), logBufferMax)
	}
}
