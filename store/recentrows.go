package store

import (
	"sync"
	"time"
)

// Bounds of recentRows.
const (
	recentRowsTTL    = time.Second // how long a row found is answered again
	recentRowsMax    = 512         // rows kept
	recentRowsMaxDoc = 64 << 10    // the largest document kept, in bytes
)

// recentRows are the rows that the read sets of prepared creates found lately: the
// creates of a load name the same schema, database, service and tags, and each of
// them is then read from the database about once a second instead of once per
// create. A row may be older than the snapshot of the set it is answered to; that is
// safe because replay reads every row again under the writer, and a row that changed
// sends the create to the usual path (so a row is kept only for a second: a changed
// one would send every create there until then). Absences are not kept (each create's
// own FQN is one), nor rows of documents over recentRowsMaxDoc. Safe for concurrent
// use; the zero value is not usable (newRecentRows).
type recentRows struct {
	now  func() time.Time
	mu   sync.Mutex
	rows map[RowKey]recentRow
}

type recentRow struct {
	row Row
	at  time.Time
}

func newRecentRows(now func() time.Time) *recentRows {
	return &recentRows{now: now, rows: map[RowKey]recentRow{}}
}

// get returns the row found under key within recentRowsTTL, if any. A nil set holds
// none.
func (s *recentRows) get(key RowKey) (Row, bool) {
	if s == nil {
		return Row{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[key]
	if !ok || s.now().Sub(r.at) >= recentRowsTTL {
		return Row{}, false
	}
	return r.row, true
}

// put remembers a row found under key. When the set is full, the expired rows go,
// and if none had, all of them.
func (s *recentRows) put(key RowKey, row Row) {
	if s == nil || len(row.Doc) > recentRowsMaxDoc {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if _, ok := s.rows[key]; !ok && len(s.rows) >= recentRowsMax {
		for k, r := range s.rows {
			if now.Sub(r.at) >= recentRowsTTL {
				delete(s.rows, k)
			}
		}
		if len(s.rows) >= recentRowsMax {
			clear(s.rows)
		}
	}
	s.rows[key] = recentRow{row: row, at: now}
}
