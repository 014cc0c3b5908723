package e2e

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, to read raw rows
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver, to read raw rows
)

const mask = "*********"

// secretConnection is a database service connection whose secrets are spread over
// declared properties, names that name a secret, and a URL.
func secretConnection() map[string]any {
	return map[string]any{"config": map[string]any{
		"type": "Postgres", "username": "svc", "password": "HUNTER2", "pwd": "PWD-SECRET",
		"dsn":      "postgres://svc:DSN-SECRET@db.example.com:5432/sales",
		"hostPort": "db.example.com:5432",
		"auth":     map[string]any{"bearer": "BEARER-SECRET"},
	}}
}

var secretValues = []string{"HUNTER2", "PWD-SECRET", "DSN-SECRET", "BEARER-SECRET"}

// noSecret fails the test when text holds any of the secret values.
func noSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range secretValues {
		if strings.Contains(text, s) {
			t.Errorf("%s shows %s: %.600s", where, s, text)
		}
	}
}

// rawDB opens the server's database directly, to read and damage stored rows. It
// answers the statement placeholders' style with a function.
func (s *server) rawDB(t *testing.T) (*sql.DB, func(n int) string) {
	t.Helper()
	if len(s.dbArgs) == 2 {
		db, err := sql.Open("pgx", s.dbArgs[1])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, func(n int) string { return "$" + string(rune('0'+n)) }
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.dataDir, "catalog.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, func(int) string { return "?" }
}

// storedText is every stored form of an entity: its row and its versions.
func (s *server) storedText(t *testing.T, id string) string {
	t.Helper()
	db, ph := s.rawDB(t)
	var b strings.Builder
	for _, q := range []string{"SELECT CAST(doc AS TEXT) FROM entities WHERE id = " + ph(1),
		"SELECT CAST(doc AS TEXT) FROM entity_versions WHERE id = " + ph(1)} {
		rows, err := db.Query(q, id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var doc string
			if err := rows.Scan(&doc); err != nil {
				t.Fatal(err)
			}
			b.WriteString(doc)
		}
		rows.Close()
	}
	if b.Len() == 0 {
		t.Fatalf("no stored row for %s", id)
	}
	return b.String()
}

// damageSecret overwrites one stored secret of an entity with garbage, as a wrong key
// or a bad disk would leave it.
func (s *server) damageSecret(t *testing.T, id, field, key string) {
	t.Helper()
	db, ph := s.rawDB(t)
	var raw string
	if err := db.QueryRow("SELECT CAST(doc AS TEXT) FROM entities WHERE id = "+ph(1), id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	object(doc[field])[key] = "enc:v1:garbage"
	b, _ := json.Marshal(doc)
	if _, err := db.Exec("UPDATE entities SET doc = "+ph(1)+" WHERE id = "+ph(2), string(b), id); err != nil {
		t.Fatal(err)
	}
}

// grantedBot creates a bot (bot user, token and bot entity) and returns its client and
// the bot's id.
func (s *server) bot(t *testing.T, name string) (*client, string) {
	t.Helper()
	c := s.botClient(t, name, "DataConsumer")
	b := s.admin.must(http.StatusCreated, "POST", "/api/v1/bots", map[string]any{"name": name, "botUser": name})
	return c, str(b["id"])
}

func config(e map[string]any) map[string]any { return object(object(e["connection"])["config"]) }

func TestSecretsAreMaskedForEveryHumanAndNeverStoredInClear(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	consumer := s.user(t, "dora", "DataConsumer")
	svc := s.admin.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices",
		map[string]any{"name": "warehouse", "serviceType": "Postgres", "connection": secretConnection()})
	id := str(svc["id"])
	noSecret(t, "the create answer", mustJSON(svc))
	s.admin.must(http.StatusOK, "PATCH", "/api/v1/services/databaseServices/"+id,
		ops(patchOp("add", "/description", "the sales warehouse")))

	for who, c := range map[string]*client{"admin": s.admin, "DataConsumer": consumer.c} {
		got := c.must(http.StatusOK, "GET", "/api/v1/services/databaseServices/"+id, nil)
		cfg := config(got)
		if cfg["password"] != mask || cfg["pwd"] != mask || object(cfg["auth"])["bearer"] != mask ||
			cfg["dsn"] != "postgres://svc:"+mask+"@db.example.com:5432/sales" || cfg["username"] != "svc" {
			t.Errorf("%s sees connection %v", who, cfg)
		}
		for _, path := range []string{"/api/v1/services/databaseServices/" + id,
			"/api/v1/services/databaseServices/name/warehouse",
			"/api/v1/services/databaseServices?limit=10",
			"/api/v1/services/databaseServices/" + id + "/versions",
			"/api/v1/services/databaseServices/" + id + "/versions/0.1",
			"/api/v1/search/query?q=warehouse&index=all"} {
			r := c.do("GET", path, nil, nil)
			if r.status != http.StatusOK {
				t.Fatalf("%s GET %s = %d %s", who, path, r.status, r)
			}
			noSecret(t, who+" GET "+path, string(r.raw))
		}
	}
	search := s.admin.must(http.StatusOK, "GET", "/api/v1/search/query?q=warehouse&index=all", nil)
	if !strings.Contains(mustJSON(search), `"_source"`) || !strings.Contains(mustJSON(search), "warehouse") {
		t.Fatalf("search found no warehouse: %v", search)
	}
	events := s.admin.do("GET", "/api/v1/events?entityType=*&limit=1000", nil, nil)
	if events.status != http.StatusOK || !strings.Contains(string(events.raw), id) {
		t.Fatalf("events = %d %s", events.status, events)
	}
	noSecret(t, "the change events", string(events.raw))
	stored := s.storedText(t, id)
	noSecret(t, "the stored row and versions", stored)
	if !strings.Contains(stored, "enc:v1:") {
		t.Errorf("the stored row holds no sealed value: %.400s", stored)
	}
}

func TestOnlyBotsAnAdminGrantedSeeSecrets(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	steward := s.user(t, "stew", "DataSteward")
	svc := s.admin.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices",
		map[string]any{"name": "warehouse", "serviceType": "Postgres", "connection": secretConnection()})
	id := str(svc["id"])
	granted, botID := s.bot(t, "ingestion-bot")
	other, _ := s.bot(t, "other-bot")
	path := "/api/v1/services/databaseServices/" + id

	if pw := config(granted.must(http.StatusOK, "GET", path, nil))["password"]; pw != mask {
		t.Fatalf("a bot without the grant sees %v", pw)
	}
	expectError(t, steward.c.do("PUT", "/api/v1/bots/"+botID+"/secretsAccess", nil, nil), http.StatusForbidden, "")
	expectError(t, granted.do("PUT", "/api/v1/bots/"+botID+"/secretsAccess", nil, nil), http.StatusForbidden, "")
	g := s.admin.must(http.StatusOK, "PUT", "/api/v1/bots/"+botID+"/secretsAccess", nil)
	if g["secretsAccess"] != true || str(object(g["bot"])["id"]) != botID {
		t.Fatalf("grant = %v", g)
	}
	if a := steward.c.must(http.StatusOK, "GET", "/api/v1/bots/"+botID+"/secretsAccess", nil); a["secretsAccess"] != true {
		t.Fatalf("secretsAccess = %v", a)
	}

	cfg := config(granted.must(http.StatusOK, "GET", path, nil))
	if cfg["password"] != "HUNTER2" || cfg["pwd"] != "PWD-SECRET" || object(cfg["auth"])["bearer"] != "BEARER-SECRET" ||
		cfg["dsn"] != "postgres://svc:DSN-SECRET@db.example.com:5432/sales" {
		t.Fatalf("the granted bot sees %v", cfg)
	}
	for who, c := range map[string]*client{"admin": s.admin, "other bot": other, "steward": steward.c} {
		if pw := config(c.must(http.StatusOK, "GET", path, nil))["password"]; pw != mask {
			t.Errorf("%s sees %v", who, pw)
		}
	}

	// A document read masked and sent back keeps every secret, for PUT and PATCH.
	doc := s.admin.must(http.StatusOK, "GET", path, nil)
	doc["description"] = "put back"
	s.admin.must(http.StatusOK, "PUT", "/api/v1/services/databaseServices", doc)
	s.admin.must(http.StatusOK, "PATCH", path, ops(patchOp("replace", "/connection", doc["connection"]),
		patchOp("replace", "/description", "patched back")))
	cfg = config(granted.must(http.StatusOK, "GET", path, nil))
	if cfg["password"] != "HUNTER2" || cfg["dsn"] != "postgres://svc:DSN-SECRET@db.example.com:5432/sales" ||
		object(cfg["auth"])["bearer"] != "BEARER-SECRET" {
		t.Fatalf("a masked document sent back changed the secrets: %v", cfg)
	}

	// A steward's round trip on a context plugin keeps its password too.
	p := s.admin.must(http.StatusCreated, "POST", "/api/v1/ai/contextPlugins", map[string]any{"name": "wiki",
		"pluginType": "Confluence", "provider": "Atlassian",
		"connectionConfig": map[string]any{"url": "https://wiki", "auth": map[string]any{"username": "svc", "password": "HUNTER2"}}})
	pdoc := steward.c.must(http.StatusOK, "GET", "/api/v1/ai/contextPlugins/"+str(p["id"]), nil)
	pdoc["description"] = "round trip"
	steward.c.must(http.StatusOK, "PUT", "/api/v1/ai/contextPlugins", pdoc)
	pcfg := object(granted.must(http.StatusOK, "GET", "/api/v1/ai/contextPlugins/"+str(p["id"]), nil)["connectionConfig"])
	if object(pcfg["auth"])["password"] != "HUNTER2" {
		t.Fatalf("a steward's PUT of the masked plugin changed its password: %v", pcfg)
	}

	if a := s.admin.must(http.StatusOK, "DELETE", "/api/v1/bots/name/ingestion-bot/secretsAccess", nil); a["secretsAccess"] != false {
		t.Fatalf("revoke = %v", a)
	}
	if pw := config(granted.must(http.StatusOK, "GET", path, nil))["password"]; pw != mask {
		t.Fatalf("a bot whose grant was revoked sees %v", pw)
	}
}

func TestLookalikeAndDamagedSecretsNeverBreakTheCollection(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	granted, botID := s.bot(t, "ingestion-bot")
	s.admin.must(http.StatusOK, "PUT", "/api/v1/bots/"+botID+"/secretsAccess", nil)
	create := func(name, password string) string {
		p := s.admin.must(http.StatusCreated, "POST", "/api/v1/ai/contextPlugins", map[string]any{"name": name,
			"pluginType": "Confluence", "provider": "Atlassian", "connectionConfig": map[string]any{"password": password, "token": "tok-" + name}})
		return str(p["id"])
	}
	lookalike := create("lookalike", "enc:xyz")
	damaged := create("damaged", "hunter2")
	create("fine", "fine-secret")
	if stored := s.storedText(t, lookalike); strings.Contains(stored, `"enc:xyz"`) {
		t.Fatalf("a password that looks sealed was stored as sent: %.400s", stored)
	}
	s.damageSecret(t, damaged, "connectionConfig", "password")

	base := "/api/v1/ai/contextPlugins"
	for who, c := range map[string]*client{"admin": s.admin, "granted bot": granted} {
		page := c.must(http.StatusOK, "GET", base+"?limit=10", nil)
		if n := len(list(page["data"])); n != 3 {
			t.Fatalf("%s lists %d plugins", who, n)
		}
		got := c.must(http.StatusOK, "GET", base+"/"+damaged, nil)
		if cfg := object(got["connectionConfig"]); cfg["password"] != mask {
			t.Errorf("%s sees the damaged password as %v", who, cfg["password"])
		}
		c.must(http.StatusOK, "GET", base+"/"+damaged+"/versions", nil)
	}
	if cfg := object(granted.must(http.StatusOK, "GET", base+"/"+lookalike, nil)["connectionConfig"]); cfg["password"] != "enc:xyz" {
		t.Errorf("the granted bot sees the lookalike password as %v", cfg["password"])
	}
	for _, id := range []string{lookalike, damaged} {
		s.admin.must(http.StatusOK, "PATCH", base+"/"+id, ops(patchOp("add", "/description", "still works")))
		doc := s.admin.must(http.StatusOK, "GET", base+"/"+id, nil)
		doc["description"] = "put"
		s.admin.must(http.StatusOK, "PUT", base, doc)
	}
	if cfg := object(granted.must(http.StatusOK, "GET", base+"/"+damaged, nil)["connectionConfig"]); cfg["token"] != "tok-damaged" {
		t.Errorf("the damaged plugin's other secret is %v", cfg["token"])
	}
	for _, id := range []string{lookalike, damaged} {
		s.admin.must(http.StatusOK, "DELETE", base+"/"+id, nil)
		s.admin.must(http.StatusOK, "DELETE", base+"/"+id+"?hardDelete=true", nil)
	}
	s.admin.must(http.StatusOK, "GET", base+"?limit=10&include=all", nil)
	if strings.Contains(s.stderr.String(), "hunter2") {
		t.Errorf("the server log shows a secret")
	}
}

func TestMCPGetEntityDetailsMasksSecrets(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	consumer := s.user(t, "dora", "DataConsumer")
	s.admin.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices",
		map[string]any{"name": "warehouse", "serviceType": "Postgres", "connection": secretConnection()})
	script := []call{{"get_entity_details", map[string]any{"entityType": "databaseService", "fqn": "warehouse"}}}
	for who, tok := range map[string]string{"admin": s.adminToken, "DataConsumer": consumer.token} {
		run := m.runTSClient(t, httpTarget(s, "/mcp", tok), script)
		r := run.Results[0]
		if r.IsError || !strings.Contains(r.content(), mask) {
			t.Fatalf("%s: get_entity_details = %s", who, r)
		}
		text := ""
		if r.Text != nil {
			text = *r.Text
		}
		noSecret(t, who+" get_entity_details", r.content()+text)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
