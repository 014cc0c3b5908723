package events

import (
	"testing"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
)

func fqnFilter(effect string, fqns ...string) map[string]any {
	in := make([]any, len(fqns))
	for i, f := range fqns {
		in[i] = f
	}
	return map[string]any{"name": meridian.FilterByFQN, "effect": effect,
		"arguments": []any{map[string]any{"name": "fqnList", "input": in}}}
}

func subscriptionOf(t *testing.T, resources []any, filters ...map[string]any) Subscription {
	t.Helper()
	fs := make([]any, len(filters))
	for i, f := range filters {
		fs[i] = f
	}
	e := meridian.Entity{"id": "s1", "name": "s", "resources": resources, "input": map[string]any{"filters": fs},
		"destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "http://x"}}}}
	s, err := ParseSubscription(e)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func tableEvent(fqn string) meridian.ChangeEvent {
	return meridian.ChangeEvent{EventType: meridian.EventEntityUpdated, EntityType: "table", EntityFQN: fqn}
}

func TestFQNFilterIsLiteralWithDescendants(t *testing.T) {
	tests := []struct {
		name   string
		filter string
		fqn    string
		want   bool
	}{
		{"the entity itself", "svc.db", "svc.db", true},
		{"a descendant", "svc.db", "svc.db.schema.t", true},
		{"a sibling with the same prefix", "svc.db", "svc.dbx", false},
		{"a sibling's descendant", "svc.db", "svc.dbx.schema", false},
		{"the parent", "svc.db", "svc", false},
		{"case matters", "svc.DB", "svc.db.t", false},
		{"a dot is not any character", "svc.d.", "svc.db", false},
		{"a regex dot", "svc.d.*", "svc.db.t", false},
		{"a regex star", ".*", "svc.db", false},
		{"a regex alternative", "svc|other", "svc.db", false},
		{"a regex-looking name, literally", "svc.a+b", "svc.a+b.t", true},
		{"regex-looking name does not match what the regex would", "svc.a+b", "svc.aab.t", false},
		{"brackets literally", `svc.[x]`, `svc.[x].t`, true},
		{"brackets are no character class", `svc.[x]`, `svc.x.t`, false},
		{"quoted name with a dot is one name", `svc."a.b"`, `svc."a.b".t`, true},
		{"a quoted name is not a prefix of a longer one", `svc."a`, `svc."a.b"`, false},
		{"an unquoted prefix does not enter a quoted name", "svc.a", `svc."a.b"`, false},
		{"a filter that is no FQN matches the same text", `svc."a`, `svc."a`, true},
		{"a filter that is no FQN is not a name", ".", `"."`, false},
		{"an FQN that is no FQN is not under a filter", "svc", `svc."a`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := subscriptionOf(t, nil, fqnFilter("include", tc.filter))
			if got := s.Matches(tableEvent(tc.fqn)); got != tc.want {
				t.Errorf("filter %q on %q = %v, want %v", tc.filter, tc.fqn, got, tc.want)
			}
		})
	}
}

func TestFiltersCombine(t *testing.T) {
	eventTypes := map[string]any{"name": meridian.FilterByEventType,
		"arguments": []any{map[string]any{"name": "eventTypeList", "input": []any{"entityCreated"}}}}
	tests := []struct {
		name      string
		resources []any
		filters   []map[string]any
		event     meridian.ChangeEvent
		want      bool
	}{
		{"no filter matches everything", nil, nil, tableEvent("a.b"), true},
		{"resources all", []any{"all"}, nil, tableEvent("a.b"), true},
		{"another resource", []any{"topic"}, nil, tableEvent("a.b"), false},
		{"the resource", []any{"topic", "table"}, nil, tableEvent("a.b"), true},
		{"event type refused", nil, []map[string]any{eventTypes}, tableEvent("a.b"), false},
		{"event type accepted", nil, []map[string]any{eventTypes},
			meridian.ChangeEvent{EventType: "entityCreated", EntityType: "table", EntityFQN: "a.b"}, true},
		{"exclude wins", nil, []map[string]any{fqnFilter("include", "a"), fqnFilter("exclude", "a.b")}, tableEvent("a.b.c"), false},
		{"exclude elsewhere", nil, []map[string]any{fqnFilter("include", "a"), fqnFilter("exclude", "a.x")}, tableEvent("a.b.c"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := subscriptionOf(t, tc.resources, tc.filters...)
			if got := s.Matches(tc.event); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestThreadEventMatchesTheEntityItIsAbout(t *testing.T) {
	s := subscriptionOf(t, nil, fqnFilter("include", "svc.db"))
	thread := meridian.ChangeEvent{EventType: meridian.EventEntityCreated, EntityType: "thread", EntityFQN: "0b0c7c1e",
		Entity: meridian.Entity{"id": "0b0c7c1e", "about": "<#E::table::svc.db.sch.orders::columns::id>"}}
	if !s.Matches(thread) {
		t.Error("a thread about svc.db.sch.orders did not match svc.db")
	}
	other := meridian.ChangeEvent{EventType: meridian.EventEntityCreated, EntityType: "thread", EntityFQN: "0b0c7c1f",
		Entity: meridian.Entity{"id": "0b0c7c1f", "about": "<#E::table::svc.dbx.sch.orders>"}}
	if s.Matches(other) {
		t.Error("a thread about svc.dbx matched svc.db")
	}
	task := meridian.ChangeEvent{EventType: meridian.EventTaskCreated, EntityType: "task", EntityFQN: "t1",
		Entity: meridian.Entity{"about": map[string]any{"type": "table", "fullyQualifiedName": "svc.db.t"}}}
	if !s.Matches(task) {
		t.Error("a task about svc.db.t (reference) did not match svc.db")
	}
}

func FuzzMatches(f *testing.F) {
	f.Add("svc.db", "svc.db.t", "<#E::table::svc.db.t>")
	f.Add(`svc."a.b"`, `svc."a.b".c`, "")
	f.Add(".*", "[", "<#E::x::y>")
	f.Fuzz(func(t *testing.T, filter, fqn, about string) {
		if !utf8.ValidString(filter) || !utf8.ValidString(fqn) || !utf8.ValidString(about) {
			t.Skip("FQNs are valid UTF-8 (the API refuses anything else)")
		}
		s := subscriptionOf(t, nil, fqnFilter("include", filter))
		e := meridian.ChangeEvent{EventType: "entityUpdated", EntityType: "table", EntityFQN: fqn,
			Entity: meridian.Entity{"about": about}}
		got := s.Matches(e)
		// Literal: an FQN equal to the filter always matches; one that does not start
		// with it never does.
		if filter != "" && fqn == filter && !got {
			t.Errorf("filter %q does not match itself", filter)
		}
		if got && !hasPrefixAny(EventFQNs(e), filter) {
			t.Errorf("filter %q matched %q / %q though no FQN starts with it", filter, fqn, about)
		}
	})
}

func hasPrefixAny(fqns []string, p string) bool {
	for _, f := range fqns {
		if len(f) >= len(p) && f[:len(p)] == p {
			return true
		}
	}
	return false
}
