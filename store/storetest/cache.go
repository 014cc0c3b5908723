package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// getJSON reads an entity through GetJSON (the cached read) and decodes it.
func (f *Fixture) getJSON(e *store.Entities, p *meridian.Principal, kind string, key store.Key, o store.GetOptions) (meridian.Entity, string, error) {
	f.T.Helper()
	body, etag, err := e.GetJSON(f.Ctx, p, kind, key, o)
	if err != nil {
		return nil, "", err
	}
	var out meridian.Entity
	if err := json.Unmarshal(body, &out); err != nil {
		f.T.Fatalf("GetJSON answered %s: %v", body, err)
	}
	return out, etag, nil
}

// testCachedReadsAreNeverStale reads through GetJSON (served from the read cache where
// the driver has one) around every kind of change and checks each answer is Get's.
func testCachedReadsAreNeverStale(t *testing.T, f *Fixture) {
	f.Hierarchy()
	tbl := f.Table("orders", `[{"name":"id","dataType":"INT"}]`)
	byName := store.ByFQN("svc.db.sch.orders")
	want := func(e *store.Entities, o store.GetOptions, check func(meridian.Entity)) {
		t.Helper()
		got, etag, err := f.getJSON(e, f.Admin, "table", byName, o)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := e.Get(f.Ctx, f.Admin, "table", byName, o)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(direct)
		if string(a) != string(b) || etag != store.ETag(direct) {
			t.Fatalf("GetJSON = %s (%s)\nGet = %s (%s)", a, etag, b, store.ETag(direct))
		}
		check(got)
	}
	// Twice: the second answer comes from the cache.
	for range 2 {
		want(f.E, store.GetOptions{}, func(e meridian.Entity) {
			if num(e["version"]) != 0.1 || e["owners"] != nil {
				t.Fatalf("first read = %v", e)
			}
		})
	}
	// fields are part of the key.
	want(f.E, store.GetOptions{Fields: "owners"}, func(e meridian.Entity) {
		if e["owners"] == nil {
			t.Fatalf("fields=owners lost its owners: %v", e)
		}
	})
	// A write on this engine is seen by the next read.
	f.Patch("table", tbl.ID(), `[{"op":"add","path":"/description","value":"first"}]`)
	want(f.E, store.GetOptions{}, func(e meridian.Entity) {
		if e["description"] != "first" || num(e["version"]) != 0.2 {
			t.Fatalf("read after a write = %v", e)
		}
	})
	// A write by another engine on the same database (another process on the same
	// SQLite file does the same) is seen too.
	other := store.New(store.Config{Driver: f.Driver, Registry: meridian.DefaultRegistry(), Validator: f.valid, Sealer: rot13{}})
	if _, err := other.Patch(f.Ctx, f.Admin, "table", byName, []byte(`[{"op":"add","path":"/description","value":"second"}]`), ""); err != nil {
		t.Fatal(err)
	}
	want(f.E, store.GetOptions{}, func(e meridian.Entity) {
		if e["description"] != "second" {
			t.Fatalf("read after another engine's write = %v", e)
		}
	})
	// A change elsewhere that shows in the answer: the owner's display name.
	u := f.Create("user", `{"name":"ann","email":"ann@example.com","displayName":"Ann"}`)
	f.Patch("table", tbl.ID(), `[{"op":"add","path":"/owners","value":[{"id":"`+u.ID()+`","type":"user"}]}]`)
	want(f.E, store.GetOptions{Fields: "owners"}, func(e meridian.Entity) {})
	if _, err := other.Patch(f.Ctx, f.Admin, "user", store.ByID(u.ID()), []byte(`[{"op":"replace","path":"/displayName","value":"Annie"}]`), ""); err != nil {
		t.Fatal(err)
	}
	want(f.E, store.GetOptions{Fields: "owners"}, func(e meridian.Entity) {
		if !strings.Contains(mustJSON(e["owners"]), "Annie") {
			t.Fatalf("owners after the owner's rename = %v", e["owners"])
		}
	})
	// Soft delete: hidden, then found with include=deleted; hard delete: not found.
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", byName, store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.getJSON(f.E, f.Admin, "table", byName, store.GetOptions{}); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("read after a soft delete: %v", err)
	}
	want(f.E, store.GetOptions{Include: store.IncludeDeleted}, func(e meridian.Entity) {
		if !e.Deleted() {
			t.Fatalf("include=deleted = %v", e)
		}
	})
	if _, err := other.Delete(f.Ctx, f.Admin, "table", byName, store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.getJSON(f.E, f.Admin, "table", byName, store.GetOptions{Include: store.IncludeDeleted}); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("read after another engine's hard delete: %v", err)
	}
}

// testCachedReadsMaskSecretsPerCaller checks that a cached answer with secrets opened
// is never served to a caller who sees them masked, nor the other way round.
func testCachedReadsMaskSecretsPerCaller(t *testing.T, f *Fixture) {
	p := f.Create("contextPlugin", `{"name":"wiki","pluginType":"Confluence","provider":"Atlassian",
		"connectionConfig":{"url":"https://wiki","auth":{"username":"svc","password":"hunter2"}}}`)
	e := store.New(store.Config{Driver: f.Driver, Registry: meridian.DefaultRegistry(), Validator: f.valid, Sealer: rot13{}, Policy: botsSeeSecrets{}})
	bot := &meridian.Principal{Name: "ingestion-bot", Roles: []string{meridian.RoleAdmin}, IsBot: true}
	for _, c := range []struct {
		p    *meridian.Principal
		want string
	}{{bot, "hunter2"}, {f.Admin, store.Mask}, {bot, "hunter2"}, {f.Admin, store.Mask}} {
		got, _, err := f.getJSON(e, c.p, "contextPlugin", store.ByID(p.ID()), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		auth := got["connectionConfig"].(map[string]any)["auth"].(map[string]any)
		if auth["password"] != c.want {
			t.Fatalf("%s read password %v, want %v", c.p.Name, auth["password"], c.want)
		}
	}
}

// botsSeeSecrets lets bots, and only bots, see secrets.
type botsSeeSecrets struct{}

func (botsSeeSecrets) Authorize(p *meridian.Principal, op store.Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if op == store.OpSeeSecrets && (p == nil || !p.IsBot) {
		return meridian.Errorf(meridian.EForbidden, "no secrets")
	}
	return nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
