package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// secretsReader is the role secretsPolicy lets a bot see secrets with.
const secretsReader = "SecretsReader"

// secretsPolicy allows everything but seeing secrets, which only bots holding
// secretsReader may.
type secretsPolicy struct{}

func (secretsPolicy) Authorize(p *meridian.Principal, op store.Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if op == store.OpSeeSecrets && !(p != nil && p.IsBot && p.HasRole(secretsReader)) {
		return meridian.Errorf(meridian.EForbidden, "no secrets")
	}
	return nil
}

var (
	grantedBot = &meridian.Principal{ID: "00000000-0000-0000-0000-0000000000b1", Name: "granted", IsBot: true, Roles: []string{secretsReader}}
	plainBot   = &meridian.Principal{ID: "00000000-0000-0000-0000-0000000000b2", Name: "plain", IsBot: true, Roles: []string{meridian.RoleAdmin}}
	consumer   = &meridian.Principal{ID: "00000000-0000-0000-0000-0000000000c1", Name: "consumer", Roles: []string{meridian.RoleDataConsumer}}
)

// withSecretsPolicy makes the fixture's engine mask secrets for all but granted bots.
func (f *Fixture) withSecretsPolicy() {
	f.E = store.New(store.Config{Driver: f.Driver, Registry: meridian.DefaultRegistry(), Validator: f.valid,
		Policy: secretsPolicy{}, Sealer: rot13{}, Now: func() time.Time { return time.UnixMilli(f.clock.Add(1)) }})
}

// storedRow reads the raw stored row.
func (f *Fixture) storedRow(kind, id string) store.Row {
	f.T.Helper()
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		f.T.Fatal(err)
	}
	defer tx.Rollback()
	row, err := tx.Get(f.Ctx, kind, id)
	if err != nil {
		f.T.Fatal(err)
	}
	return row
}

// everythingStored is every stored form of an entity and the store's events and
// search answers: rows, versions, events, search hits.
func (f *Fixture) everythingStored(id, word string) string {
	f.T.Helper()
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		f.T.Fatal(err)
	}
	defer tx.Rollback()
	var b strings.Builder
	for _, kind := range []string{"databaseService", "contextPlugin"} {
		if row, err := tx.Get(f.Ctx, kind, id); err == nil {
			b.Write(row.Doc)
		}
	}
	versions, err := tx.Versions(f.Ctx, id)
	if err != nil {
		f.T.Fatal(err)
	}
	for _, v := range versions {
		b.Write(v)
	}
	events, err := tx.Events(f.Ctx, store.EventQuery{Limit: 1000})
	if err != nil {
		f.T.Fatal(err)
	}
	ev, _ := json.Marshal(events)
	b.Write(ev)
	res, err := tx.Search(f.Ctx, search.Query{Terms: []string{word}, Size: 10})
	if err != nil {
		f.T.Fatal(err)
	}
	if len(res.Hits) == 0 {
		f.T.Fatalf("search %q found nothing", word)
	}
	hits, _ := json.Marshal(res)
	b.Write(hits)
	return b.String()
}

const secretService = `{"name":"warehouse","serviceType":"Postgres","connection":{"config":{
	"type":"Postgres","username":"svc","password":"HUNTER2","pwd":"PWD-SECRET",
	"dsn":"postgres://svc:DSN-SECRET@db.example.com:5432/sales",
	"extra":{"bearer":"BEARER-SECRET","connectionString":"Server=db;Uid=svc;Pwd=ODBC-SECRET;"},
	"hostPort":"db.example.com:5432"}}}`

var secretWords = []string{"HUNTER2", "PWD-SECRET", "DSN-SECRET", "BEARER-SECRET", "ODBC-SECRET"}

func testSecretsAreSealedAndMasked(t *testing.T, f *Fixture) {
	f.withSecretsPolicy()
	svc := f.Create("databaseService", secretService)
	f.Patch("databaseService", svc.ID(), `[{"op":"replace","path":"/connection/config/password","value":"HUNTER3"},
		{"op":"add","path":"/description","value":"sales warehouse"}]`)

	stored := f.everythingStored(svc.ID(), "warehouse")
	for _, w := range append(secretWords, "HUNTER3") {
		if strings.Contains(stored, w) {
			t.Fatalf("%s is stored, indexed or sent in an event in clear:\n%s", w, stored)
		}
	}
	if row := f.storedRow("databaseService", svc.ID()); !strings.Contains(string(row.Doc), "enc:rot13:") {
		t.Fatalf("stored row holds no sealed value: %s", row.Doc)
	}

	wantMasked := map[string]any{"password": store.Mask, "pwd": store.Mask, "username": "svc",
		"dsn": "postgres://svc:" + store.Mask + "@db.example.com:5432/sales", "hostPort": "db.example.com:5432"}
	for _, p := range []*meridian.Principal{f.Admin, consumer, plainBot} {
		got, err := f.E.Get(f.Ctx, p, "databaseService", store.ByID(svc.ID()), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		page, err := f.E.List(f.Ctx, p, "databaseService", store.ListOptions{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		versions, err := f.E.Versions(f.Ctx, p, "databaseService", svc.ID())
		if err != nil {
			t.Fatal(err)
		}
		answers, _ := json.Marshal([]any{got, page, versions})
		for _, w := range append(secretWords, "HUNTER3") {
			if strings.Contains(string(answers), w) {
				t.Fatalf("%s sees %s: %s", p.Name, w, answers)
			}
		}
		cfg := got["connection"].(map[string]any)["config"].(map[string]any)
		for key, want := range wantMasked {
			if cfg[key] != want {
				t.Errorf("%s: config.%s = %v, want %v", p.Name, key, cfg[key], want)
			}
		}
		extra := cfg["extra"].(map[string]any)
		if extra["bearer"] != store.Mask || extra["connectionString"] != "Server=db;Uid=svc;Pwd="+store.Mask+";" {
			t.Errorf("%s: extra = %v", p.Name, extra)
		}
	}

	got, err := f.E.Get(f.Ctx, grantedBot, "databaseService", store.ByID(svc.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := got["connection"].(map[string]any)["config"].(map[string]any)
	if cfg["password"] != "HUNTER3" || cfg["pwd"] != "PWD-SECRET" || cfg["dsn"] != "postgres://svc:DSN-SECRET@db.example.com:5432/sales" {
		t.Fatalf("granted bot sees %v", cfg)
	}
	old, err := f.E.Version(f.Ctx, grantedBot, "databaseService", svc.ID(), "0.1")
	if err != nil {
		t.Fatal(err)
	}
	if pw := old["connection"].(map[string]any)["config"].(map[string]any)["password"]; pw != "HUNTER2" {
		t.Fatalf("granted bot sees version 0.1 password %v", pw)
	}
}

func testMaskedSecretsSentBackKeepTheirValue(t *testing.T, f *Fixture) {
	f.withSecretsPolicy()
	svc := f.Create("databaseService", secretService)
	masked, err := f.E.Get(f.Ctx, f.Admin, "databaseService", store.ByID(svc.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	masked["description"] = "put back"
	if _, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "databaseService", masked); err != nil {
		t.Fatal(err)
	}
	if _, err := f.E.Patch(f.Ctx, f.Admin, "databaseService", store.ByID(svc.ID()),
		[]byte(`[{"op":"replace","path":"/connection/config/password","value":"`+store.Mask+`"},
		{"op":"replace","path":"/connection/config/dsn","value":"postgres://svc:`+store.Mask+`@db.example.com:5432/sales"},
		{"op":"replace","path":"/description","value":"patched"}]`), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.E.Edit(f.Ctx, f.Admin, "databaseService", store.ByID(svc.ID()), "", func(e meridian.Entity) (meridian.Entity, error) {
		e["connection"] = masked["connection"]
		e["description"] = "edited"
		return e, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := f.E.Get(f.Ctx, grantedBot, "databaseService", store.ByID(svc.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := got["connection"].(map[string]any)["config"].(map[string]any)
	extra := cfg["extra"].(map[string]any)
	if got["description"] != "edited" || cfg["password"] != "HUNTER2" || cfg["pwd"] != "PWD-SECRET" ||
		cfg["dsn"] != "postgres://svc:DSN-SECRET@db.example.com:5432/sales" || extra["bearer"] != "BEARER-SECRET" ||
		extra["connectionString"] != "Server=db;Uid=svc;Pwd=ODBC-SECRET;" {
		t.Fatalf("a masked value sent back changed the secret: %v (%v)", cfg, got["description"])
	}
}

func testLookalikeAndDamagedSecretsNeverBreakReads(t *testing.T, f *Fixture) {
	f.withSecretsPolicy()
	fake := f.Create("contextPlugin", `{"name":"fake","pluginType":"Confluence","provider":"Atlassian",
		"connectionConfig":{"url":"https://wiki","username":"enc:rot13:not-a-secret","password":"enc:rot13:xyz"}}`)
	damaged := f.Create("contextPlugin", `{"name":"damaged","pluginType":"Confluence","provider":"Atlassian",
		"connectionConfig":{"url":"https://wiki","password":"hunter2","token":"tok"}}`)
	f.Create("contextPlugin", `{"name":"fine","pluginType":"Confluence","provider":"Atlassian",
		"connectionConfig":{"password":"fine-secret"}}`)

	if row := f.storedRow("contextPlugin", fake.ID()); strings.Contains(string(row.Doc), `"enc:rot13:xyz"`) {
		t.Fatalf("a value that looks sealed was stored as it came: %s", row.Doc)
	}
	// Damage one stored secret, as a wrong key or a bad disk would.
	row := f.storedRow("contextPlugin", damaged.ID())
	var doc map[string]any
	if err := json.Unmarshal(row.Doc, &doc); err != nil {
		t.Fatal(err)
	}
	doc["connectionConfig"].(map[string]any)["password"] = "garbage"
	row.Doc, _ = json.Marshal(doc)
	tx, err := f.Driver.Begin(f.Ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Update(f.Ctx, row, row.Version); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	for _, p := range []*meridian.Principal{grantedBot, f.Admin} {
		page, err := f.E.List(f.Ctx, p, "contextPlugin", store.ListOptions{Limit: 10})
		if err != nil || len(page.Data) != 3 {
			t.Fatalf("%s: list = %d, %v", p.Name, len(page.Data), err)
		}
		got, err := f.E.Get(f.Ctx, p, "contextPlugin", store.ByID(damaged.ID()), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cfg := got["connectionConfig"].(map[string]any); cfg["password"] != store.Mask {
			t.Fatalf("%s: a damaged secret answers %v", p.Name, cfg["password"])
		}
	}
	got, err := f.E.Get(f.Ctx, grantedBot, "contextPlugin", store.ByID(fake.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := got["connectionConfig"].(map[string]any); cfg["password"] != "enc:rot13:xyz" || cfg["username"] != "enc:rot13:not-a-secret" {
		t.Fatalf("values that look sealed come back as %v", cfg)
	}
	// Writes keep working and keep the damaged value as stored; the others are intact.
	if _, err := f.E.Patch(f.Ctx, f.Admin, "contextPlugin", store.ByID(damaged.ID()), []byte(`[{"op":"add","path":"/description","value":"x"}]`), ""); err != nil {
		t.Fatal(err)
	}
	masked, err := f.E.Get(f.Ctx, f.Admin, "contextPlugin", store.ByID(damaged.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	masked["description"] = "put"
	if _, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "contextPlugin", masked); err != nil {
		t.Fatal(err)
	}
	if row := f.storedRow("contextPlugin", damaged.ID()); !strings.Contains(string(row.Doc), `"garbage"`) {
		t.Fatalf("the damaged value was not kept as stored: %s", row.Doc)
	}
	got, err = f.E.Get(f.Ctx, grantedBot, "contextPlugin", store.ByID(damaged.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := got["connectionConfig"].(map[string]any); cfg["token"] != "tok" || got["description"] != "put" {
		t.Fatalf("damaged entity after writes: %v", got)
	}
	for _, id := range []string{damaged.ID(), fake.ID()} {
		if _, err := f.E.Delete(f.Ctx, f.Admin, "contextPlugin", store.ByID(id), store.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.E.Versions(f.Ctx, f.Admin, "contextPlugin", damaged.ID()); err != nil {
		t.Fatal(err)
	}
}

func testSecretsCannotBeCopiedOutByPatch(t *testing.T, f *Fixture) {
	f.withSecretsPolicy()
	svc := f.Create("databaseService", secretService)
	steward := &meridian.Principal{ID: "00000000-0000-0000-0000-0000000000d1", Name: "steward", Roles: []string{meridian.RoleDataSteward}}
	res, err := f.E.Patch(f.Ctx, steward, "databaseService", store.ByID(svc.ID()), []byte(`[
		{"op":"copy","from":"/connection/config/password","path":"/description"},
		{"op":"copy","from":"/connection/config/dsn","path":"/displayName"}]`), "")
	if err != nil {
		t.Fatal(err)
	}
	got := f.Get("databaseService", svc.ID(), "", store.IncludeNonDeleted)
	if got["description"] != store.Mask || got["displayName"] != "postgres://svc:"+store.Mask+"@db.example.com:5432/sales" {
		t.Fatalf("a patch copied a secret out: description %v, displayName %v (answer %v)", got["description"], got["displayName"], res.Entity["description"])
	}
	// test compares with what the caller sees, so it cannot probe a secret.
	_, err = f.E.Patch(f.Ctx, steward, "databaseService", store.ByID(svc.ID()),
		[]byte(`[{"op":"test","path":"/connection/config/password","value":"HUNTER2"}]`), "")
	WantCode(t, err, meridian.EInvalid)
	if strings.Contains(meridian.ErrorMessage(err), "HUNTER2") {
		t.Fatalf("the error shows the secret: %v", err)
	}
	bot, err := f.E.Get(f.Ctx, grantedBot, "databaseService", store.ByID(svc.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pw := bot["connection"].(map[string]any)["config"].(map[string]any)["password"]; pw != "HUNTER2" {
		t.Fatalf("the secret changed: %v", pw)
	}
}
