package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// testDriverRowSnapshots checks rows written as their version's snapshot
// (store.Row.Snapshot): each version stays readable through updates that replace it,
// in place or with a new version, with or without Snapshot; a failed update changes
// no history; an event that refers to a snapshot keeps reading that version's
// document, after an update and after a hard delete.
func testDriverRowSnapshots(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	snap := func(v meridian.Version, doc string) store.Row {
		r := row("a", "table", "a", "s.a")
		r.Version, r.Doc, r.Snapshot = v, []byte(doc), true
		return r
	}
	history := func(want ...string) {
		t.Helper()
		Read(t, db, func(tx store.Tx) error {
			got, err := d.versions(tx, "a")
			if err != nil {
				return err
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("versions %q, want %q", got, want)
			}
			return nil
		})
	}
	version := func(v meridian.Version, want string) {
		t.Helper()
		Read(t, db, func(tx store.Tx) error {
			doc, err := tx.Version(ctx, "a", v)
			if err != nil || string(d.doc(doc)) != want {
				t.Errorf("Version %s = %s, %v; want %s", v, doc, err, want)
			}
			return nil
		})
	}
	eventEntity := func(want string) {
		t.Helper()
		Read(t, db, func(tx store.Tx) error {
			evs, err := tx.Events(ctx, store.EventQuery{})
			if err != nil || len(evs) != 1 {
				t.Fatalf("events = %v, %v", evs, err)
			}
			if got := fmt.Sprint(evs[0].Entity); got != want {
				t.Errorf("event entity = %s, want %s", got, want)
			}
			return nil
		})
	}

	Write(t, db, func(tx store.Tx) error {
		if err := tx.Insert(ctx, snap(1, `{"v":1}`)); err != nil {
			return err
		}
		a, ok := tx.(store.EncodedEventAppender)
		if !ok {
			return tx.AppendEvent(ctx, meridian.ChangeEvent{ID: "ev", EventType: meridian.EventEntityCreated,
				EntityType: "table", EntityID: "a", EntityFQN: "s.a", CurrentVersion: 0.1, Entity: meridian.Entity{"v": 1.0}})
		}
		return a.AppendEncodedEvent(ctx, meridian.ChangeEvent{ID: "ev", EventType: meridian.EventEntityCreated,
			EntityType: "table", EntityID: "a", EntityFQN: "s.a", CurrentVersion: 0.1}, []byte(`{"v":1}`), true)
	})
	history(`{"v":1}`)
	version(1, `{"v":1}`)
	eventEntity("map[v:1]")

	steps := []struct {
		name   string
		row    store.Row
		expect meridian.Version
		put    string // a snapshot PutVersion stores after the update, for a row without Snapshot
		want   []string
	}{
		{"new version", snap(2, `{"v":2}`), 1, "", []string{`{"v":2}`, `{"v":1}`}},
		{"same version in place", snap(2, `{"v":"2b"}`), 2, "", []string{`{"v":"2b"}`, `{"v":1}`}},
		{"new version stored apart", snap(3, `{"row":3}`), 2, `{"v":3}`, []string{`{"v":3}`, `{"v":"2b"}`, `{"v":1}`}},
		{"back to a row snapshot", snap(4, `{"v":4}`), 3, "", []string{`{"v":4}`, `{"v":3}`, `{"v":"2b"}`, `{"v":1}`}},
		{"same version stored apart", snap(4, `{"row":"4b"}`), 4, `{"v":"4b"}`, []string{`{"v":"4b"}`, `{"v":3}`, `{"v":"2b"}`, `{"v":1}`}},
		{"same version as a row snapshot again", snap(4, `{"v":"4c"}`), 4, "", []string{`{"v":"4c"}`, `{"v":3}`, `{"v":"2b"}`, `{"v":1}`}},
	}
	for _, s := range steps {
		r := s.row
		r.Snapshot = s.put == ""
		Write(t, db, func(tx store.Tx) error {
			if err := tx.Update(ctx, r, s.expect); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if s.put != "" {
				return tx.PutVersion(ctx, "a", r.Version, []byte(s.put))
			}
			return nil
		})
		history(s.want...)
	}
	version(1, `{"v":1}`)
	version(2, `{"v":"2b"}`)
	version(4, `{"v":"4c"}`)

	// An update that expects another version changes neither the row nor its history.
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	WantCode(t, tx.Update(ctx, snap(5, `{"v":5}`), 3), meridian.EPreconditionFailed)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	history(`{"v":"4c"}`, `{"v":3}`, `{"v":"2b"}`, `{"v":1}`)

	// The creation event refers to version 0.1, which no longer is the row's.
	eventEntity("map[v:1]")
	Write(t, db, func(tx store.Tx) error { return tx.Remove(ctx, "a") })
	history()
	eventEntity("map[v:1]")
}
