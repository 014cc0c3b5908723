package audit_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/audit"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestModule is the audit module's conformance suite, on every driver.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"TheWriterRecordsQueuedEntriesInBatches", testWriter},
		{"ChangeEventsAreRecordedOnce", testConsumer},
		{"SearchFiltersByTextUserEntityTypeKindAndTime", testSearch},
		{"SearchPagesNewestFirst", testPaging},
		{"OnlyAdminsReadTheLog", testAdminOnly},
		{"ExportStreamsCSVAndJSON", testExport},
		{"TheLogIsAppendOnly", testAppendOnly},
		{"BadFiltersAreRefused", testBadFilters},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open)) })
		}
	})
}

type fixture struct {
	t     *testing.T
	ctx   context.Context
	db    store.Driver
	svc   *audit.Service
	w     *audit.Writer
	admin *meridian.Principal
}

const base = int64(1_767_225_600_000)

func newFixture(t *testing.T, open drivertest.Open) *fixture {
	db := open(t, audit.Module())
	svc := audit.New(db)
	w := audit.NewWriter(svc, audit.WriterConfig{Batch: 7, Interval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{t: t, ctx: context.Background(), db: db, svc: svc, w: w,
		admin: &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}}
}

func (f *fixture) record(entries ...audit.Entry) {
	f.t.Helper()
	for _, e := range entries {
		f.w.Record(e)
	}
	if err := f.w.Flush(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) search(q audit.Query) audit.Page {
	f.t.Helper()
	p, err := f.svc.Search(f.ctx, f.admin, q)
	if err != nil {
		f.t.Fatalf("search %v: %v", q, err)
	}
	return p
}

func testWriter(t *testing.T, f *fixture) {
	var entries []audit.Entry
	for i := range 30 {
		entries = append(entries, audit.Entry{Timestamp: base + int64(i), Source: audit.SourceREST, Kind: audit.KindWrite,
			UserName: "alice", Method: "PUT", Path: fmt.Sprintf("/api/v1/tables/%d", i), Status: 200})
	}
	f.record(entries...)
	page := f.search(audit.Query{Limit: 100, Source: audit.SourceREST, UserName: "alice"})
	if len(page.Data) != 30 {
		t.Fatalf("recorded %d entries, want 30", len(page.Data))
	}
	if page.Data[0].Outcome != audit.OutcomeSuccess || page.Data[0].ID == "" {
		t.Fatalf("entry not completed: %+v", page.Data[0])
	}
	// Characters a database cannot hold are dropped, not the entry.
	f.record(audit.Entry{Timestamp: base, Source: audit.SourceREST, Kind: audit.KindWrite, UserName: "nul",
		Path: "/api/v1/tables/a\x00b\xff", Status: 400})
	if got := f.search(audit.Query{UserName: "nul"}); len(got.Data) != 1 || got.Data[0].Path != "/api/v1/tables/ab" {
		t.Fatalf("entry with NUL: %+v", got.Data)
	}
	// An entry without a time is stamped.
	f.record(audit.Entry{Source: audit.SourceMCP, Kind: audit.KindWrite, UserName: "bot", Path: "create_glossary", Status: 403})
	got := f.search(audit.Query{UserName: "bot"})
	if len(got.Data) != 1 || got.Data[0].Timestamp == 0 || got.Data[0].Outcome != audit.OutcomeFailure {
		t.Fatalf("stamped entry: %+v", got.Data)
	}
}

func testConsumer(t *testing.T, f *fixture) {
	c := audit.NewConsumer(f.db)
	ev := meridian.ChangeEvent{ID: "5d0b0a52-6a53-4b8f-8c1e-1d8b2b0c9a11", EventType: meridian.EventEntityCreated, EntityType: "table",
		EntityID: "0b6f7f4e-58a8-4f0e-9d0e-2c1f4c5a6b7d", EntityFQN: "svc.db.sch.orders", UserName: "alice", Timestamp: base}
	for range 2 { // redelivered
		if err := c.Handle(f.ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	page := f.search(audit.Query{Kind: audit.KindChange})
	if len(page.Data) != 1 {
		t.Fatalf("change entries = %d, want 1", len(page.Data))
	}
	e := page.Data[0]
	if e.ID != ev.ID || e.Source != audit.SourceEvent || e.EntityFQN != "svc.db.sch.orders" || e.EventType != meridian.EventEntityCreated || e.UserName != "alice" {
		t.Fatalf("change entry: %+v", e)
	}
	// A batch, delivered twice with the event above, records each new event once.
	batch := []meridian.ChangeEvent{ev}
	for i := range 5 {
		next := ev
		next.ID, next.EntityFQN, next.Timestamp = fmt.Sprintf("5d0b0a52-6a53-4b8f-8c1e-1d8b2b0c9b%02d", i), fmt.Sprintf("svc.db.sch.t%d", i), base+int64(i+1)
		batch = append(batch, next)
	}
	for range 2 {
		if err := c.HandleBatch(f.ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if page := f.search(audit.Query{Kind: audit.KindChange, Limit: 100}); len(page.Data) != 6 {
		t.Fatalf("change entries after a redelivered batch = %d, want 6", len(page.Data))
	}
}

func seed(f *fixture) {
	f.record(
		audit.Entry{Timestamp: base, Source: audit.SourceREST, Kind: audit.KindWrite, UserName: "alice", Method: "POST",
			Path: "/api/v1/tables", EntityType: "table", EntityFQN: "svc.db.sch.orders", Status: 201, RemoteAddr: "10.0.0.7"},
		audit.Entry{Timestamp: base + 1000, Source: audit.SourceREST, Kind: audit.KindWrite, UserName: "bob", Method: "PATCH",
			Path: "/api/v1/metrics/name/revenue", EntityType: "metric", EntityFQN: "revenue", Status: 403},
		audit.Entry{Timestamp: base + 2000, Source: audit.SourceREST, Kind: audit.KindAuthFailure, Method: "GET",
			Path: "/api/v1/tables", Status: 401, Message: "Token has expired", RemoteAddr: "203.0.113.9"},
		audit.Entry{Timestamp: base + 3000, Source: audit.SourceMCP, Kind: audit.KindWrite, UserName: "alice", Method: "tools/call",
			Path: "create_glossary", EntityType: "glossary", Status: 200},
		audit.Entry{Timestamp: base + 4000, Source: audit.SourceREST, Kind: audit.KindWrite, UserName: "alice", Method: "PUT",
			Path: "/api/v1/tables", EntityType: "table", EntityFQN: "svc.db.sch.100%_done", Status: 200},
	)
}

func paths(p audit.Page) []string {
	var out []string
	for _, e := range p.Data {
		out = append(out, e.Path)
	}
	return out
}

func testSearch(t *testing.T, f *fixture) {
	seed(f)
	cases := []struct {
		name string
		q    audit.Query
		want []string
	}{
		{"text is case-insensitive", audit.Query{Text: "ORDERS"}, []string{"/api/v1/tables"}},
		{"text matches the message", audit.Query{Text: "expired"}, []string{"/api/v1/tables"}},
		{"text matches the remote address", audit.Query{Text: "203.0.113"}, []string{"/api/v1/tables"}},
		{"text wildcards are literal", audit.Query{Text: "100%_"}, []string{"/api/v1/tables"}},
		{"percent alone matches only a percent", audit.Query{Text: "%"}, []string{"/api/v1/tables"}},
		{"user", audit.Query{UserName: "alice"}, []string{"/api/v1/tables", "create_glossary", "/api/v1/tables"}},
		{"entity type", audit.Query{EntityType: "metric"}, []string{"/api/v1/metrics/name/revenue"}},
		{"kind", audit.Query{Kind: audit.KindAuthFailure}, []string{"/api/v1/tables"}},
		{"source", audit.Query{Source: audit.SourceMCP}, []string{"create_glossary"}},
		{"time window", audit.Query{Start: base + 1000, End: base + 3000}, []string{"create_glossary", "/api/v1/tables", "/api/v1/metrics/name/revenue"}},
		{"combined", audit.Query{UserName: "alice", EntityType: "table", Start: base + 1}, []string{"/api/v1/tables"}},
		{"nothing", audit.Query{UserName: "nobody"}, nil},
	}
	for _, c := range cases {
		got := paths(f.search(c.q))
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	// The failure outcome of the 403 write.
	if p := f.search(audit.Query{UserName: "bob"}); p.Data[0].Outcome != audit.OutcomeFailure {
		t.Errorf("403 write outcome = %s", p.Data[0].Outcome)
	}
}

func testPaging(t *testing.T, f *fixture) {
	var entries []audit.Entry
	for i := range 23 {
		// Pairs share a timestamp: the id orders them.
		entries = append(entries, audit.Entry{Timestamp: base + int64(i/2), Source: audit.SourceREST, Kind: audit.KindWrite,
			UserName: "u", Path: fmt.Sprint(i), Status: 200})
	}
	f.record(entries...)
	seen := map[string]bool{}
	q := audit.Query{Limit: 5}
	last := int64(1 << 62)
	for pages := 0; ; pages++ {
		p := f.search(q)
		for _, e := range p.Data {
			if seen[e.ID] || e.Timestamp > last {
				t.Fatalf("entry repeated or out of order: %+v", e)
			}
			seen[e.ID], last = true, e.Timestamp
		}
		if p.After == "" {
			break
		}
		q.After = p.After
	}
	if len(seen) != 23 {
		t.Fatalf("paged through %d entries, want 23", len(seen))
	}
}

func testAdminOnly(t *testing.T, f *fixture) {
	steward := &meridian.Principal{Name: "sam", Roles: []string{meridian.RoleDataSteward}}
	if _, err := f.svc.Search(f.ctx, steward, audit.Query{}); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("steward search: %v", err)
	}
	if err := f.svc.Export(f.ctx, steward, audit.Query{}, audit.FormatCSV, &bytes.Buffer{}); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("steward export: %v", err)
	}
	if _, err := f.svc.Search(f.ctx, nil, audit.Query{}); meridian.ErrorCode(err) != meridian.EUnauthorized {
		t.Fatalf("anonymous search: %v", err)
	}
}

func testExport(t *testing.T, f *fixture) {
	var entries []audit.Entry
	for i := range 1203 { // more than two export batches
		entries = append(entries, audit.Entry{Timestamp: base + int64(i), Source: audit.SourceREST, Kind: audit.KindWrite,
			UserName: "alice", Method: "PUT", Path: fmt.Sprintf("/api/v1/tables/%d", i), Status: 200})
	}
	entries = append(entries, audit.Entry{Timestamp: base + 5000, Source: audit.SourceREST, Kind: audit.KindWrite,
		UserName: "=cmd|' /C calc'!A0", Method: "PUT", Path: "/api/v1/x", Status: 200})
	f.record(entries...)

	var buf bytes.Buffer
	if err := f.svc.Export(f.ctx, f.admin, audit.Query{UserName: "alice"}, audit.FormatCSV, &buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1204 || strings.Join(recs[0], ",") != strings.Join(audit.CSVHeader, ",") {
		t.Fatalf("CSV: %d lines, header %v", len(recs), recs[0])
	}
	if recs[1][7] != "/api/v1/tables/1202" || recs[1203][7] != "/api/v1/tables/0" {
		t.Fatalf("CSV order: first %v last %v", recs[1], recs[1203])
	}

	buf.Reset()
	if err := f.svc.Export(f.ctx, f.admin, audit.Query{}, audit.FormatJSON, &buf); err != nil {
		t.Fatal(err)
	}
	var all []audit.Entry
	if err := json.Unmarshal(buf.Bytes(), &all); err != nil {
		t.Fatalf("JSON export is not one array: %v", err)
	}
	if len(all) != 1204 {
		t.Fatalf("JSON export has %d entries", len(all))
	}

	buf.Reset()
	if err := f.svc.Export(f.ctx, f.admin, audit.Query{UserName: "=cmd|' /C calc'!A0"}, audit.FormatCSV, &buf); err != nil {
		t.Fatal(err)
	}
	recs, _ = csv.NewReader(&buf).ReadAll()
	if len(recs) != 2 || !strings.HasPrefix(recs[1][5], "'=") {
		t.Fatalf("a formula cell is not neutralized: %v", recs)
	}
	if err := f.svc.Export(f.ctx, f.admin, audit.Query{}, "xml", &buf); meridian.ErrorCode(err) != meridian.EInvalid {
		t.Fatalf("xml export: %v", err)
	}
}

func testAppendOnly(t *testing.T, f *fixture) {
	seed(f)
	for _, stmt := range []string{"UPDATE audit_log SET user_name = 'mallory'", "DELETE FROM audit_log"} {
		tx, err := f.db.Begin(f.ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.SQL().Exec(f.ctx, stmt)
		_ = tx.Rollback()
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: err = %v, want the append-only refusal", stmt, err)
		}
	}
	if p := f.search(audit.Query{}); len(p.Data) != 5 {
		t.Fatalf("entries after refused changes: %d", len(p.Data))
	}
}

func testBadFilters(t *testing.T, f *fixture) {
	for _, q := range []audit.Query{
		{Kind: "delete"}, {Source: "ftp"}, {Start: 5, End: 4}, {Limit: audit.MaxLimit + 1}, {Limit: -1},
		{Text: strings.Repeat("x", audit.MaxQuery+1)}, {After: "not a cursor"},
	} {
		if _, err := f.svc.Search(f.ctx, f.admin, q); meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("%+v: err = %v, want invalid", q, err)
		}
	}
}

func TestSearchRefusesNULOnEveryDriver(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		f := newFixture(t, open)
		for _, q := range []audit.Query{{Text: "a\x00"}, {UserName: "\x00"}, {EntityType: "\xff"}} {
			if _, err := f.svc.Search(f.ctx, f.admin, q); meridian.ErrorCode(err) != meridian.EInvalid {
				t.Errorf("%+v: %v", q, err)
			}
		}
	})
}

func TestWriterWritesTheQueueOnShutdownAndNeverBlocksAfter(t *testing.T) {
	db := drivertest.SQLite(t, audit.Module())
	svc := audit.New(db)
	w := audit.NewWriter(svc, audit.WriterConfig{Queue: 50, Batch: 7, Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	for i := range 40 {
		w.Record(audit.Entry{Timestamp: base + int64(i), Source: audit.SourceREST, Kind: audit.KindWrite, UserName: "u", Status: 200})
	}
	cancel()
	<-done
	page, err := svc.Search(context.Background(), &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}, audit.Query{Limit: 100})
	if err != nil || len(page.Data) != 40 {
		t.Fatalf("after shutdown: %d entries, %v", len(page.Data), err)
	}
	stopped := make(chan struct{})
	go func() {
		for range 100 { // more than the queue holds
			w.Record(audit.Entry{Source: audit.SourceREST, Kind: audit.KindWrite})
		}
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Record blocked after the writer stopped")
	}
	var nilWriter *audit.Writer
	nilWriter.Record(audit.Entry{}) // records nothing, and does not panic
}
