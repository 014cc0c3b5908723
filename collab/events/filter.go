package events

import (
	"encoding/json"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
)

// Subscription is what delivery needs of an eventSubscription entity.
type Subscription struct {
	ID           string
	Name         string
	Enabled      bool
	Deleted      bool
	Resources    []string
	Filters      []Filter
	Destinations []collab.Destination
}

// Live reports whether the subscription receives events: it is enabled and not deleted.
func (s Subscription) Live() bool { return s.Enabled && !s.Deleted }

// Filter is one of a subscription's filters: Name is meridian.FilterByEventType,
// FilterByEntityType or FilterByFQN; Exclude inverts it.
type Filter struct {
	Name    string
	Exclude bool
	Values  []string
	fqns    [][]string // Values split into names, for FilterByFQN; nil where one is no FQN
}

// ParseSubscription reads a subscription from its entity document (as the kind's schema
// and rules accepted it; anything unexpected is ignored rather than trusted).
func ParseSubscription(e meridian.Entity) (Subscription, error) {
	var doc struct {
		Enabled   *bool    `json:"enabled"`
		Resources []string `json:"resources"`
		Input     struct {
			Filters []struct {
				Name      string `json:"name"`
				Effect    string `json:"effect"`
				Arguments []struct {
					Name  string   `json:"name"`
					Input []string `json:"input"`
				} `json:"arguments"`
			} `json:"filters"`
		} `json:"input"`
		Destinations []collab.Destination `json:"destinations"`
	}
	b, err := json.Marshal(e)
	if err != nil {
		return Subscription{}, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Subscription{}, meridian.Errorf(meridian.EInvalid, "event subscription %s: %v", e.ID(), err)
	}
	s := Subscription{ID: e.ID(), Name: e.Name(), Enabled: doc.Enabled == nil || *doc.Enabled, Deleted: e.Deleted(),
		Resources: doc.Resources, Destinations: doc.Destinations}
	for _, f := range doc.Input.Filters {
		flt := Filter{Name: f.Name, Exclude: f.Effect == "exclude"}
		for _, a := range f.Arguments {
			flt.Values = append(flt.Values, a.Input...)
		}
		if f.Name == meridian.FilterByFQN {
			for _, v := range flt.Values {
				parts, err := meridian.SplitFQN(v)
				if err != nil {
					parts = nil // compared as text (underFQN)
				}
				flt.fqns = append(flt.fqns, parts)
			}
		}
		s.Filters = append(s.Filters, flt)
	}
	return s, nil
}

// Matches reports whether the event goes to the subscription: its entity type is one of
// the resources (none, or "all", means every type), it matches every include filter
// and no exclude filter.
func (s Subscription) Matches(e meridian.ChangeEvent) bool {
	if !s.matchesResources(e.EntityType) {
		return false
	}
	for _, f := range s.Filters {
		if f.matches(e) == f.Exclude {
			return false
		}
	}
	return true
}

func (s Subscription) matchesResources(entityType string) bool {
	if len(s.Resources) == 0 {
		return true
	}
	for _, r := range s.Resources {
		if r == meridian.ResourceAll || r == entityType {
			return true
		}
	}
	return false
}

func (f Filter) matches(e meridian.ChangeEvent) bool {
	switch f.Name {
	case meridian.FilterByEventType:
		return containsString(f.Values, e.EventType)
	case meridian.FilterByEntityType:
		return containsString(f.Values, e.EntityType) || containsString(f.Values, meridian.ResourceAll)
	case meridian.FilterByFQN:
		for _, fqn := range EventFQNs(e) {
			parts, _ := meridian.SplitFQN(fqn)
			for i, want := range f.fqns {
				if underFQN(fqn, parts, f.Values[i], want) {
					return true
				}
			}
		}
		return false
	}
	return false // an unknown filter matches nothing: it never widens what is sent
}

// underFQN reports whether an FQN (fqn, split into parts) equals ancestor or lies
// under it: its name parts equal ancestor's or start with them, so "svc.db" covers
// "svc.db" and "svc.db.sch.t", not "svc.dbx". Names compare literally (case-sensitive,
// no pattern syntax). Where either is no FQN (its parts are nil), only the same text
// matches: a dot in it may lie inside an unbalanced quote.
func underFQN(fqn string, parts []string, ancestor string, ancestorParts []string) bool {
	if parts == nil || ancestorParts == nil {
		return ancestor != "" && fqn == ancestor
	}
	if len(ancestorParts) == 0 || len(parts) < len(ancestorParts) {
		return false
	}
	for i, a := range ancestorParts {
		if parts[i] != a {
			return false
		}
	}
	return true
}

// EventFQNs are the fully qualified names an event is matched against: the entity's own,
// and for an entity about another (a thread's or task's "about" entity link, or a
// reference in "about" or "entityRef"; an announcement's or test case's "entityLink")
// the FQN of the entity it is about.
func EventFQNs(e meridian.ChangeEvent) []string {
	var out []string
	if e.EntityFQN != "" {
		out = append(out, e.EntityFQN)
	}
	if e.Entity == nil {
		return out
	}
	if fqn := e.Entity.FQN(); fqn != "" && fqn != e.EntityFQN {
		out = append(out, fqn)
	}
	for _, field := range []string{"about", "entityLink", "entityRef"} {
		switch v := e.Entity[field].(type) {
		case string:
			if link, err := meridian.ParseEntityLink(v); err == nil {
				out = append(out, link.FQN)
			}
		case map[string]any:
			if fqn, _ := v["fullyQualifiedName"].(string); fqn != "" {
				out = append(out, fqn)
			}
		}
	}
	return out
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// summary is the e-mail subject of an event.
func summary(e meridian.ChangeEvent) string {
	name := e.EntityFQN
	if name == "" {
		name = e.EntityID
	}
	return strings.TrimSpace("[Meridian] " + e.EventType + " " + e.EntityType + " " + name)
}
