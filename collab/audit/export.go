package audit

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
)

// Export formats.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// exportBatch is how many entries an export reads per transaction: its memory does not
// grow with the size of the log.
const exportBatch = 500

// CSVHeader is the first line of a CSV export.
var CSVHeader = []string{"id", "timestamp", "time", "source", "kind", "userName", "method", "path", "entityType",
	"entityId", "entityFullyQualifiedName", "status", "outcome", "remoteAddr", "requestId", "eventType", "message"}

// CheckExport validates an export before anything is written, so that the caller can
// still answer with an error status. Errors: EUnauthorized, EForbidden, EInvalid.
func (s *Service) CheckExport(p *meridian.Principal, q *Query, format string) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	if format != FormatCSV && format != FormatJSON {
		return meridian.Errorf(meridian.EInvalid, "format must be one of [%s, %s]", FormatCSV, FormatJSON)
	}
	if q.After != "" {
		return meridian.Errorf(meridian.EInvalid, "an export has no cursor: it streams every matching entry")
	}
	q.Limit = exportBatch
	return q.check()
}

// Export streams every entry q selects, newest first, to w as CSV (CSVHeader, then one
// line per entry) or as one JSON array, reading exportBatch entries at a time. q.Limit
// and q.After are ignored. Call CheckExport first. Errors: those of CheckExport, the
// store's, and w's.
func (s *Service) Export(ctx context.Context, p *meridian.Principal, q Query, format string, w io.Writer) error {
	if err := s.CheckExport(p, &q, format); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var cw *csv.Writer
	if format == FormatCSV {
		cw = csv.NewWriter(bw)
		if err := cw.Write(CSVHeader); err != nil {
			return err
		}
	} else if _, err := bw.WriteString("["); err != nil {
		return err
	}
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	first := true
	var c *collab.Cursor
	for {
		batch, err := s.page(ctx, q, c, exportBatch)
		if err != nil {
			return err
		}
		for _, e := range batch {
			if cw != nil {
				if err := cw.Write(csvRecord(e)); err != nil {
					return err
				}
				continue
			}
			if !first {
				if _, err := bw.WriteString(","); err != nil {
					return err
				}
			}
			first = false
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		if cw != nil {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if f, ok := w.(interface{ Flush() }); ok {
			f.Flush()
		}
		if len(batch) < exportBatch {
			break
		}
		last := batch[len(batch)-1]
		c = &collab.Cursor{TS: last.Timestamp, ID: last.ID}
	}
	if cw == nil {
		if _, err := bw.WriteString("]\n"); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// csvRecord is one CSV line. A cell that a spreadsheet would run as a formula (it
// starts with =, +, -, @, tab or carriage return) is prefixed with a quote.
func csvRecord(e Entry) []string {
	rec := []string{e.ID, strconv.FormatInt(e.Timestamp, 10), time.UnixMilli(e.Timestamp).UTC().Format(time.RFC3339Nano),
		e.Source, e.Kind, e.UserName, e.Method, e.Path, e.EntityType, e.EntityID, e.EntityFQN, strconv.Itoa(e.Status),
		e.Outcome, e.RemoteAddr, e.RequestID, e.EventType, e.Message}
	for i, v := range rec {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			rec[i] = "'" + v
		}
	}
	return rec
}
