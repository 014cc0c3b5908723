package billing

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// journal is this process's append-only file of metered entries not yet in the ledger
// table. A segment is locked (flock) while its process lives, so another process
// opening the same directory replays only the segments of processes that are gone.
type journal struct {
	dir    string
	prefix string // unique per process

	mu  sync.Mutex
	seq int
	f   *os.File
}

const segmentExt = ".jsonl"

func openJournal(dir string) (*journal, error) {
	if strings.TrimSpace(dir) == "" {
		return nil, fmt.Errorf("billing: the journal directory must not be empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("billing: create the journal directory: %w", err)
	}
	j := &journal{dir: dir, prefix: fmt.Sprintf("%020d-%d", time.Now().UnixNano(), os.Getpid())}
	if err := j.rotateLocked(); err != nil {
		return nil, err
	}
	return j, nil
}

// rotateLocked starts a new segment and returns the previous one's path ("" for none).
func (j *journal) rotateLocked() error {
	j.seq++
	name := filepath.Join(j.dir, fmt.Sprintf("%s-%08d%s", j.prefix, j.seq, segmentExt))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("billing: open a journal segment: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return fmt.Errorf("billing: lock a journal segment: %w", err)
	}
	j.f = f
	return nil
}

// append writes one line: one write(2), no fsync.
func (j *journal) append(line []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("billing: the journal is closed")
	}
	_, err := j.f.Write(line)
	return err
}

// rotate closes the current segment and opens a new one; the closed segment's path is
// returned for the caller to remove once its entries are committed. The old file keeps
// its lock until it is closed by the caller (removeSegment).
func (j *journal) rotate() (*os.File, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil { // closed: nothing more is journaled
		return nil, nil
	}
	old := j.f
	if err := j.rotateLocked(); err != nil {
		j.f = old
		return nil, err
	}
	return old, nil
}

// retire removes a drained segment and releases it.
func retire(f *os.File) {
	if f == nil {
		return
	}
	_ = os.Remove(f.Name())
	_ = f.Close()
}

// close closes the current segment, removing it when it is known to be drained.
func (j *journal) close(drained bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		_ = j.f.Sync()
		if drained {
			_ = os.Remove(j.f.Name())
		}
		_ = j.f.Close()
		j.f = nil
	}
}

// orphans returns the segments of other processes that are gone, oldest first, each
// opened and locked.
func (j *journal) orphans() ([]*os.File, error) {
	names, err := filepath.Glob(filepath.Join(j.dir, "*"+segmentExt))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*os.File
	for _, n := range names {
		if strings.HasPrefix(filepath.Base(n), j.prefix) {
			continue
		}
		f, err := os.OpenFile(n, os.O_RDWR, 0)
		if err != nil {
			continue // removed meanwhile
		}
		if lockFile(f) != nil { // its process lives
			f.Close()
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// readSegment parses a segment's lines; a torn last line (a crash in the middle of a
// write) is skipped.
func readSegment(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.ID == "" {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
