package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/collab/events/eventstest"
)

// loopbackArgs let the server's webhooks reach the tests' loopback receivers.
var loopbackArgs = []string{"--webhook-allowed-networks", "127.0.0.0/8,::1"}

// subscription creates an event subscription with a webhook to r and returns it.
func subscription(t *testing.T, c *client, name string, r *eventstest.Receiver, fqns ...string) map[string]any {
	t.Helper()
	body := map[string]any{"name": name, "resources": []any{"table"},
		"destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": r.URL, "secretKey": r.Secret}}}}
	if len(fqns) > 0 {
		in := make([]any, len(fqns))
		for i, f := range fqns {
			in[i] = f
		}
		body["input"] = map[string]any{"filters": []any{map[string]any{"name": "filterByFqn", "effect": "include",
			"arguments": []any{map[string]any{"name": "fqnList", "input": in}}}}}
	}
	return c.must(http.StatusCreated, "POST", "/api/v1/events/subscriptions", body)
}

func received(evs []map[string]any) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = str(e["eventType"]) + " " + str(e["entityFullyQualifiedName"])
	}
	return out
}

func statusOf(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	return object(c.must(http.StatusOK, "GET", "/api/v1/events/subscriptions/"+id, nil)["statusDetails"])
}

// TestSubscriptionWebhookDeliveryWithSignaturesAndRetries: a webhook receiver that
// checks the HMAC signature is down while tables are written; the subscription shows
// the failure, and once the receiver is back it gets every event once, in order. The
// secret is masked in every answer.
func TestSubscriptionWebhookDeliveryWithSignaturesAndRetries(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, loopbackArgs...)
	c := s.admin
	sch, _ := hierarchy(t, c, "hooks", "db", "sch")
	r := eventstest.NewReceiver(t, "webhook-secret-1")
	sub := subscription(t, c, "orders_hook", r)
	id := str(sub["id"])
	b := c.do("GET", "/api/v1/events/subscriptions/"+id, nil, nil)
	if strings.Contains(string(b.raw), "webhook-secret-1") || !strings.Contains(string(b.raw), `"secretKey":"*********"`) {
		t.Fatalf("the secret is not masked: %s", b.raw)
	}
	r.SetDown(true)
	for i := range 4 {
		table(t, c, sch, fmt.Sprintf("t%d", i), nil)
	}
	eventually(t, 20*time.Second, "the failure shows on the subscription", func() bool {
		st := statusOf(t, c, id)
		return st["status"] == "awaitingRetry" && strings.Contains(str(st["lastError"]), "503") && num(st["pendingEvents"]) == 4
	})
	r.SetDown(false)
	got := received(r.Wait(4, 60*time.Second))
	want := []string{"entityCreated hooks.db.sch.t0", "entityCreated hooks.db.sch.t1", "entityCreated hooks.db.sch.t2", "entityCreated hooks.db.sch.t3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("received %v, want %v", got, want)
	}
	if r.BadSignatures() != 0 {
		t.Fatalf("%d requests had a bad signature", r.BadSignatures())
	}
	eventually(t, 10*time.Second, "the subscription is active again", func() bool {
		st := statusOf(t, c, id)
		return st["status"] == "active" && num(st["deliveredEvents"]) == 4 && num(st["pendingEvents"]) == 0 && num(st["lastSuccessfulAt"]) > 0
	})
	time.Sleep(1500 * time.Millisecond)
	if n := len(r.Events()); n != 4 {
		t.Fatalf("%d events after the backlog, want each once", n)
	}
}

// TestSubscriptionDeliveryResumesAfterRestart: events queued for a receiver that is
// down survive a crash of the server and are delivered by the restarted one.
func TestSubscriptionDeliveryResumesAfterRestart(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, loopbackArgs...)
	sch, _ := hierarchy(t, s.admin, "resume", "db", "sch")
	r := eventstest.NewReceiver(t, "k")
	sub := subscription(t, s.admin, "resume_hook", r)
	r.SetDown(true)
	table(t, s.admin, sch, "a", nil)
	table(t, s.admin, sch, "b", nil)
	eventually(t, 20*time.Second, "both events wait", func() bool {
		return num(statusOf(t, s.admin, str(sub["id"]))["pendingEvents"]) == 2
	})
	s.crash()
	n := s.restart(t)
	r.SetDown(false)
	table(t, n.admin, sch, "c", nil)
	got := received(r.Wait(3, 60*time.Second))
	if strings.Join(got, "|") != "entityCreated resume.db.sch.a|entityCreated resume.db.sch.b|entityCreated resume.db.sch.c" {
		t.Fatalf("after the restart: %v", got)
	}
}

// TestSubscriptionFQNFilterIsLiteral: FQN filters match the entity and its descendants
// by names, literally: not a sibling sharing a prefix, and a regex-looking filter is no
// pattern.
func TestSubscriptionFQNFilterIsLiteral(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, loopbackArgs...)
	c := s.admin
	svc := c.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices", map[string]any{"name": "fq", "serviceType": "Mysql"})
	for _, db := range []string{"db", "dbx", "a+b", "aab"} {
		d := c.must(http.StatusCreated, "POST", "/api/v1/databases", map[string]any{"name": db, "service": svc["fullyQualifiedName"]})
		c.must(http.StatusCreated, "POST", "/api/v1/databaseSchemas", map[string]any{"name": "s", "database": d["fullyQualifiedName"]})
	}
	exact := eventstest.NewReceiver(t, "e")
	subscription(t, c, "exact", exact, "fq.db")
	pattern := eventstest.NewReceiver(t, "p")
	subscription(t, c, "pattern", pattern, "fq.d.*")
	plus := eventstest.NewReceiver(t, "+")
	subscription(t, c, "plus", plus, "fq.a+b")
	for _, sch := range []string{"fq.db.s", "fq.dbx.s", "fq.a+b.s", "fq.aab.s"} {
		table(t, c, sch, "t", nil)
	}
	marker := eventstest.NewReceiver(t, "m")
	subscription(t, c, "marker", marker)
	table(t, c, "fq.db.s", "last", nil)
	marker.Wait(1, 30*time.Second) // everything before it has been matched by now
	if got := received(exact.Wait(2, 30*time.Second)); strings.Join(got, "|") != "entityCreated fq.db.s.t|entityCreated fq.db.s.last" {
		t.Errorf("fq.db received %v", got)
	}
	if got := received(plus.Wait(1, 30*time.Second)); strings.Join(got, "|") != "entityCreated fq.a+b.s.t" {
		t.Errorf("fq.a+b received %v", got)
	}
	time.Sleep(time.Second)
	if got := pattern.Events(); len(got) != 0 {
		t.Errorf("the regex-looking filter fq.d.* received %v", received(got))
	}
}

// TestSubscriptionEmailThroughSMTP: an e-mail destination sends each matching event to
// its receivers through the configured SMTP server (a Go sink).
func TestSubscriptionEmailThroughSMTP(t *testing.T) {
	t.Parallel()
	sink := eventstest.NewSMTPSink(t)
	s := startServerWith(t, "--smtp-host", sink.Host, "--smtp-port", strconv.Itoa(sink.Port), "--smtp-from", "catalog@example.com")
	c := s.admin
	sch, _ := hierarchy(t, c, "mail", "db", "sch")
	c.must(http.StatusCreated, "POST", "/api/v1/events/subscriptions", map[string]any{"name": "mail", "resources": []any{"table"},
		"destinations": []any{map[string]any{"type": "Email", "config": map[string]any{"receivers": []any{"steward@example.com"}}}}})
	table(t, c, sch, "orders", nil)
	mail := sink.Wait(1, 30*time.Second)
	if len(mail) != 1 || mail[0].From != "catalog@example.com" || strings.Join(mail[0].To, ",") != "steward@example.com" ||
		!strings.Contains(mail[0].Data, "Subject: [Meridian] entityCreated table mail.db.sch.orders") {
		t.Fatalf("mail: %+v", mail)
	}
}

// TestTestDestination: testDestination answers the status code, the latency and the
// error of each destination; only admins may call it; bad bodies are 400; without an
// allowance the server refuses to reach loopback addresses.
func TestTestDestination(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, loopbackArgs...)
	c := s.admin
	up := eventstest.NewReceiver(t, "test-secret")
	down := eventstest.NewReceiver(t, "")
	down.SetDown(true)
	res := c.must(http.StatusOK, "POST", "/api/v1/events/subscriptions/testDestination", map[string]any{"alertName": "orders",
		"destinations": []any{
			map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": up.URL, "secretKey": "test-secret"}},
			map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": down.URL}},
		}})
	data := list(res["data"])
	if len(data) != 2 {
		t.Fatalf("answer %v", res)
	}
	ok, failed := object(data[0]), object(data[1])
	if ok["status"] != "Success" || num(ok["statusCode"]) != 200 || ok["latencyMs"] == nil || ok["error"] != nil {
		t.Errorf("reachable destination: %v", ok)
	}
	if failed["status"] != "Failed" || num(failed["statusCode"]) != 503 || !strings.Contains(str(failed["error"]), "503") {
		t.Errorf("failing destination: %v", failed)
	}
	if got := up.Events(); len(got) != 1 || got[0]["eventType"] != "testMessage" || up.BadSignatures() != 0 {
		t.Errorf("test message %v, bad signatures %d", got, up.BadSignatures())
	}
	for _, body := range []any{`{"destinations": []}`, `[]`, `{"destinations": [{"type": "Slack", "config": {}}]}`,
		`{"destinations": [{"type": "Webhook", "config": {"endpoint": "file:///etc/passwd"}}]}`,
		`{"destinations": [{"type": "Email", "config": {"receivers": ["not an address"]}}]}`, `{"destinations": 3}`} {
		expectError(t, c.do("POST", "/api/v1/events/subscriptions/testDestination", body, nil), http.StatusBadRequest, "")
	}
	steward := s.user(t, "steward", "DataSteward")
	expectError(t, steward.c.do("POST", "/api/v1/events/subscriptions/testDestination", map[string]any{
		"destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": up.URL}}}}, nil), http.StatusForbidden, "")
	expectError(t, s.client(t, "").do("POST", "/api/v1/events/subscriptions/testDestination", `{}`, nil), http.StatusUnauthorized, "")

	strict := startServer(t)
	res = strict.admin.must(http.StatusOK, "POST", "/api/v1/events/subscriptions/testDestination", map[string]any{
		"destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": up.URL}}}})
	if r := object(list(res["data"])[0]); r["status"] != "Failed" || !strings.Contains(str(r["error"]), "not allowed") {
		t.Errorf("loopback without allowance: %v", r)
	}
	if n := len(up.Events()); n != 1 {
		t.Errorf("the strict server reached the receiver: %d events", n)
	}
}

// TestSubscriptionsStandardOperationsAndAdminOnlyWrites: subscriptions are versioned
// entities with the standard operation set; only admins write them; bad ones are 400.
func TestSubscriptionsStandardOperationsAndAdminOnlyWrites(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, loopbackArgs...)
	c := s.admin
	r := eventstest.NewReceiver(t, "x")
	sub := subscription(t, c, "ops", r)
	id := str(sub["id"])
	wantVersion(t, sub, 0.1)
	p := c.do("PATCH", "/api/v1/events/subscriptions/"+id, ops(patchOp("add", "/enabled", false)), nil)
	if p.status != http.StatusOK {
		t.Fatalf("%s", p)
	}
	wantVersion(t, p.obj(t), 0.2)
	if st := statusOf(t, c, id); st["status"] != "disabled" {
		t.Errorf("status of a disabled subscription: %v", st)
	}
	c.must(http.StatusOK, "GET", "/api/v1/events/subscriptions/name/ops", nil)
	versions := c.must(http.StatusOK, "GET", "/api/v1/events/subscriptions/"+id+"/versions", nil)
	if len(list(versions["versions"])) != 2 || strings.Contains(fmt.Sprint(versions), "\"x\"") {
		t.Errorf("versions: %v", versions)
	}
	c.must(http.StatusOK, "DELETE", "/api/v1/events/subscriptions/"+id, nil)
	c.must(http.StatusOK, "PUT", "/api/v1/events/subscriptions/restore", map[string]any{"id": id})

	steward := s.user(t, "steward", "DataSteward")
	expectError(t, steward.c.do("POST", "/api/v1/events/subscriptions", map[string]any{"name": "mine",
		"destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "https://example.com/h"}}}}, nil), http.StatusForbidden, "")
	expectError(t, steward.c.do("DELETE", "/api/v1/events/subscriptions/"+id, nil, nil), http.StatusForbidden, "")
	c.must(http.StatusOK, "DELETE", "/api/v1/events/subscriptions/"+id, nil)
	expectError(t, steward.c.do("PUT", "/api/v1/events/subscriptions/restore", map[string]any{"id": id}, nil), http.StatusForbidden, "")
	c.must(http.StatusOK, "PUT", "/api/v1/events/subscriptions/restore", map[string]any{"id": id})
	expectError(t, steward.c.do("PATCH", "/api/v1/events/subscriptions/"+id, ops(patchOp("add", "/enabled", true)), nil), http.StatusForbidden, "")
	got := steward.c.must(http.StatusOK, "GET", "/api/v1/events/subscriptions/"+id, nil)
	if cfg := object(object(list(got["destinations"])[0])["config"]); cfg["secretKey"] != "*********" {
		t.Errorf("a steward sees the secret: %v", cfg)
	}
	for _, bad := range []map[string]any{
		{"name": "noDest"},
		{"name": "badResource", "resources": []any{"tablez"}, "destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "https://example.com"}}}},
		{"name": "badType", "destinations": []any{map[string]any{"type": "Slack", "config": map[string]any{}}}},
		{"name": "noEndpoint", "destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{}}}},
		{"name": "creds", "destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "https://u:p@example.com"}}}},
		{"name": "badHeader", "destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "https://example.com",
			"headers": map[string]any{"X-Token": "a\r\nX-Injected: 1"}}}}},
		{"name": "noReceivers", "destinations": []any{map[string]any{"type": "Email", "config": map[string]any{}}}},
		{"name": "badEvent", "destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "https://example.com"}}},
			"input": map[string]any{"filters": []any{map[string]any{"name": "filterByEventType", "arguments": []any{map[string]any{"name": "eventTypeList", "input": []any{"nope"}}}}}}},
		{"name": "badArg", "destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "https://example.com"}}},
			"input": map[string]any{"filters": []any{map[string]any{"name": "filterByFqn", "arguments": []any{map[string]any{"name": "eventTypeList", "input": []any{"a"}}}}}}},
	} {
		expectError(t, c.do("POST", "/api/v1/events/subscriptions", bad, nil), http.StatusBadRequest, "")
	}
}

// TestEventsCarryLineageKindsAndTheRecursiveFlag: GET /api/v1/events lists the lineage
// events, and a cascade delete records one event for its root, marked recursive.
func TestEventsCarryLineageKindsAndTheRecursiveFlag(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	sch, schID := hierarchy(t, c, "ev", "db", "sch")
	a := table(t, c, sch, "a", nil)
	b := table(t, c, sch, "b", nil)
	edge := map[string]any{"edge": map[string]any{"fromEntity": map[string]any{"type": "table", "id": a["id"]},
		"toEntity": map[string]any{"type": "table", "id": b["id"]}}}
	c.must(http.StatusOK, "PUT", "/api/v1/lineage", edge)
	edge["edge"].(map[string]any)["description"] = "copied nightly"
	c.must(http.StatusOK, "PUT", "/api/v1/lineage", edge)
	c.do("DELETE", fmt.Sprintf("/api/v1/lineage/table/%s/table/%s", a["id"], b["id"]), nil, nil)
	c.must(http.StatusOK, "DELETE", "/api/v1/databaseSchemas/"+schID+"?recursive=true&hardDelete=true", nil)
	soft, softID := hierarchy(t, c, "ev2", "db", "sch")
	table(t, c, soft, "x", nil)
	table(t, c, soft, "y", nil)
	c.must(http.StatusOK, "DELETE", "/api/v1/databaseSchemas/"+softID+"?recursive=true", nil)
	evs := list(c.must(http.StatusOK, "GET", "/api/v1/events?limit=1000", nil)["data"])
	var lineage []string
	var deletes, softDeletes []map[string]any
	for _, e := range evs {
		m := object(e)
		switch typ := str(m["eventType"]); {
		case strings.HasPrefix(typ, "entityLineage"):
			lineage = append(lineage, typ)
		case typ == "entityDeleted":
			deletes = append(deletes, m)
		case typ == "entitySoftDeleted":
			softDeletes = append(softDeletes, m)
		}
	}
	if len(softDeletes) != 1 || softDeletes[0]["entityId"] != softID || softDeletes[0]["recursive"] != true {
		t.Errorf("soft delete events %v: want one, for the schema, recursive", softDeletes)
	}
	if strings.Join(lineage, ",") != "entityLineageAdded,entityLineageUpdated,entityLineageDeleted" {
		t.Errorf("lineage events %v", lineage)
	}
	if len(deletes) != 1 || deletes[0]["entityId"] != schID || deletes[0]["recursive"] != true {
		t.Errorf("delete events %v: want one, for the schema, recursive", deletes)
	}
}

// TestSubscriptionDeadReceiverBlocksNobody: a subscription whose receiver is gone (its
// port closed) and one whose receiver hangs hold back neither the writers nor a healthy
// subscription.
func TestSubscriptionDeadReceiverBlocksNobody(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, loopbackArgs...)
	c := s.admin
	sch, _ := hierarchy(t, c, "iso", "db", "sch")
	dead := eventstest.NewReceiver(t, "")
	subscription(t, c, "dead", dead)
	dead.Close()
	hung := eventstest.NewReceiver(t, "")
	hung.SetDelay(8 * time.Second)
	subscription(t, c, "hung", hung)
	healthy := eventstest.NewReceiver(t, "h")
	subscription(t, c, "healthy", healthy)
	start := time.Now()
	for i := range 5 {
		table(t, c, sch, fmt.Sprintf("t%d", i), nil)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("5 writes took %s", d)
	}
	if got := healthy.Wait(5, 5*time.Second); len(got) != 5 {
		t.Fatalf("the healthy receiver got %d of 5 events within 5s", len(got))
	}
}

// TestSubscriptionFailedEventsAreListed: on a server that does not allow loopback
// webhooks, delivery to one fails for good at once: the subscription shows it and lists
// the event given up (admins only).
func TestSubscriptionFailedEventsAreListed(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	sch, _ := hierarchy(t, c, "fail", "db", "sch")
	r := eventstest.NewReceiver(t, "")
	sub := subscription(t, c, "refused", r)
	id := str(sub["id"])
	table(t, c, sch, "orders", nil)
	eventually(t, 20*time.Second, "the event is given up", func() bool {
		st := statusOf(t, c, id)
		return st["status"] == "failed" && num(st["failedEvents"]) == 1 && strings.Contains(str(st["lastError"]), "not allowed")
	})
	res := c.must(http.StatusOK, "GET", "/api/v1/events/subscriptions/"+id+"/failedEvents", nil)
	data := list(res["data"])
	if len(data) != 1 || object(object(data[0])["changeEvent"])["entityFullyQualifiedName"] != "fail.db.sch.orders" ||
		!strings.Contains(str(object(data[0])["reason"]), "not allowed") || object(data[0])["failingSubscriptionId"] != id {
		t.Fatalf("failed events %v", res)
	}
	if r.Attempts() != 0 {
		t.Fatal("the refused receiver was reached")
	}
	steward := s.user(t, "steward", "DataSteward")
	expectError(t, steward.c.do("GET", "/api/v1/events/subscriptions/"+id+"/failedEvents", nil, nil), http.StatusForbidden, "")
	expectError(t, c.do("GET", "/api/v1/events/subscriptions/"+id+"/failedEvents?limit=0", nil, nil), http.StatusBadRequest, "")
	expectError(t, c.do("GET", "/api/v1/events/subscriptions/9b2f5c3e-1d2a-4c1b-8f3e-2a1b3c4d5e6f/failedEvents", nil, nil), http.StatusNotFound, "")
	expectError(t, c.do("GET", "/api/v1/events/subscriptions/nope/failedEvents", nil, nil), http.StatusBadRequest, "")
}
