package storetest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// recorder is a consumer whose effect lives in the store: it appends each event's
// sequence number to a setting, in the delivery transaction.
type recorder struct {
	name string
	fail func(meridian.ChangeEvent) bool
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Handle(ctx context.Context, tx store.Tx, e meridian.ChangeEvent) error {
	if r.fail != nil && r.fail(e) {
		return errors.New("consumer refuses " + e.EntityFQN)
	}
	seen, err := tx.Setting(ctx, "test.seen."+r.name)
	if err != nil && meridian.ErrorCode(err) != meridian.ENotFound {
		return err
	}
	return tx.PutSetting(ctx, "test.seen."+r.name, seen+strconv.FormatInt(e.Seq, 10)+",")
}

func (f *Fixture) seen(name string) []string {
	f.T.Helper()
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		f.T.Fatal(err)
	}
	defer tx.Rollback()
	v, err := tx.Setting(f.Ctx, "test.seen."+name)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil
	}
	if err != nil {
		f.T.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(v, ","), ",")
}

func testDispatcher(t *testing.T, f *Fixture) {
	for i := 0; i < 3; i++ {
		f.Create("glossary", `{"name":"g`+strconv.Itoa(i)+`","description":"d"}`)
	}
	blocked := true
	good := &recorder{name: "good"}
	picky := &recorder{name: "picky", fail: func(e meridian.ChangeEvent) bool { return blocked && e.EntityFQN == "g1" }}
	d := store.NewDispatcher(f.Driver, nil, good, picky)
	if err := d.Drain(f.Ctx); err == nil {
		t.Fatal("a failing consumer must report its error")
	}
	if got := f.seen("good"); len(got) != 3 {
		t.Fatalf("good consumer saw %v, want 3 events", got)
	}
	if got := f.seen("picky"); len(got) != 1 {
		t.Fatalf("a failing consumer must stop at the failing event: saw %v", got)
	}
	// A restart: a new dispatcher resumes from the stored positions.
	blocked = false
	f.Create("glossary", `{"name":"g3","description":"d"}`)
	d = store.NewDispatcher(f.Driver, nil, good, picky)
	if err := d.Drain(f.Ctx); err != nil {
		t.Fatal(err)
	}
	g, p := f.seen("good"), f.seen("picky")
	if strings.Join(g, ",") != strings.Join(p, ",") || len(g) != 4 {
		t.Fatalf("after resume: good %v, picky %v", g, p)
	}
	for i := 1; i < len(g); i++ {
		a, _ := strconv.Atoi(g[i-1])
		b, _ := strconv.Atoi(g[i])
		if b <= a {
			t.Fatalf("events out of order or repeated: %v", g)
		}
	}
	status, err := d.Status(f.Ctx)
	if err != nil || len(status) != 2 || status[0].Pending != 0 {
		t.Fatalf("status = %+v, %v", status, err)
	}
	page, err := f.E.Events(f.Ctx, f.Admin, store.EventsOptions{EntityTypes: []string{"glossary"}, Limit: 3})
	if err != nil || len(page.Data) != 3 || page.After == "" {
		t.Fatalf("events page = %+v, %v", page, err)
	}
	rest, err := f.E.Events(f.Ctx, f.Admin, store.EventsOptions{After: page.After, Limit: 3})
	if err != nil || len(rest.Data) != 1 || rest.After != "" {
		t.Fatalf("second events page = %+v, %v", rest, err)
	}
	_, err = f.E.Events(f.Ctx, &meridian.Principal{Name: "bob", Roles: []string{meridian.RoleDataSteward}}, store.EventsOptions{})
	WantCode(t, err, meridian.EForbidden)
}
