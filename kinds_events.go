package meridian

import (
	"context"
	"net/mail"
	"net/url"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// The kinds of change events for the outside world: event subscriptions (delivered by
// collab/events) and announcements.
const (
	KindEventSubscription = "eventSubscription"
	KindAnnouncement      = "announcement"
)

// Destination types of an event subscription (collab.DestinationWebhook and
// collab.DestinationEmail name the same).
const (
	destinationWebhook = "Webhook"
	destinationEmail   = "Email"
)

// Subscription filter names and their argument names (schema/kinds/eventSubscription.json).
const (
	FilterByEventType  = "filterByEventType"
	FilterByEntityType = "filterByEntityType"
	FilterByFQN        = "filterByFqn"
	// ResourceAll in a subscription's resources matches every entity type.
	ResourceAll = "all"
)

// FilterArgument is the argument name each filter takes.
var FilterArgument = map[string]string{
	FilterByEventType:  "eventTypeList",
	FilterByEntityType: "entityList",
	FilterByFQN:        "fqnList",
}

// EventTypes are the change event types a subscription may filter on.
var EventTypes = []string{EventEntityCreated, EventEntityUpdated, EventEntitySoftDeleted, EventEntityDeleted,
	EventEntityRestored, EventEntityFieldsChanged, EventTaskCreated, EventTaskUpdated,
	EventEntityLineageAdded, EventEntityLineageDeleted, EventEntityLineageUpdated}

// eventKinds are the kinds of subscriptions and announcements.
func eventKinds() []*Kind {
	return []*Kind{
		{Name: KindEventSubscription, Collection: "events/subscriptions", Fields: []string{"owners", "followers"},
			SoftDelete: true, NoLineage: true, DedicatedFlows: true, AdminOnly: true, Computed: []string{"statusDetails"},
			Prepare: prepareEventSubscription, Validate: validateEventSubscription,
			Filters: []Filter{{Param: "alertType", Field: "alertType"}}},
		{Name: KindAnnouncement, Collection: "announcements", Fields: []string{"owners", "followers", "votes"},
			SoftDelete: true, NoLineage: true, LeftTheFeed: true, Prepare: prepareAnnouncement, Validate: validateAnnouncement,
			Filters: []Filter{{Param: "entityLink", Field: "entityLink"}}},
	}
}

// prepareEventSubscription gives every destination an id (kept from the stored
// subscription when the destination's type and position are unchanged), so delivery
// can record what each destination already received.
func prepareEventSubscription(_ context.Context, _ Catalog, w *Write) error {
	dests, _ := w.New["destinations"].([]any)
	var old []any
	if w.Old != nil {
		old, _ = w.Old["destinations"].([]any)
	}
	for i, d := range dests {
		m, ok := d.(map[string]any)
		if !ok {
			continue
		}
		if id, _ := m["id"].(string); id != "" {
			continue
		}
		if i < len(old) {
			if om, ok := old[i].(map[string]any); ok && om["type"] == m["type"] {
				if id, _ := om["id"].(string); id != "" {
					m["id"] = id
					continue
				}
			}
		}
		m["id"] = uuid.NewString()
	}
	return nil
}

// validateEventSubscription checks what the schema cannot (only admins write one: the
// kind is AdminOnly, which the policy enforces): each destination has what its type needs (an http(s) endpoint without credentials in it,
// valid e-mail receivers); destination ids are unique; each filter takes its own
// argument with known event types and valid fully qualified names.
func validateEventSubscription(_ context.Context, _ Catalog, w *Write) error {
	e := w.New
	dests, _ := e["destinations"].([]any)
	ids := map[string]bool{}
	for i, d := range dests {
		m, _ := d.(map[string]any)
		cfg, _ := m["config"].(map[string]any)
		id, _ := m["id"].(string)
		if ids[id] {
			return Errorf(EInvalid, "destinations[%d]: id %s appears twice", i, id)
		}
		ids[id] = true
		switch m["type"] {
		case destinationWebhook:
			endpoint, _ := cfg["endpoint"].(string)
			if err := ValidateWebhookEndpoint(endpoint); err != nil {
				return Errorf(EInvalid, "destinations[%d].config.endpoint: %s", i, err.Error())
			}
			headers, _ := cfg["headers"].(map[string]any)
			for name, v := range headers {
				if s, _ := v.(string); !ValidHeaderValue(s) {
					return Errorf(EInvalid, "destinations[%d].config.headers: the value of %s holds a control character", i, name)
				}
			}
		case destinationEmail:
			receivers, _ := cfg["receivers"].([]any)
			if len(receivers) == 0 {
				return Errorf(EInvalid, "destinations[%d].config.receivers: an Email destination needs at least one receiver", i)
			}
			for _, r := range receivers {
				s, _ := r.(string)
				if err := ValidateEmailAddress(s); err != nil {
					return Errorf(EInvalid, "destinations[%d].config.receivers: %s", i, err.Error())
				}
			}
		}
	}
	resources, _ := e["resources"].([]any)
	for _, r := range resources {
		if s, _ := r.(string); s != ResourceAll && !knownKind(s) {
			return Errorf(EInvalid, "resources: unknown entity type %s", s)
		}
	}
	input, _ := e["input"].(map[string]any)
	filters, _ := input["filters"].([]any)
	for i, f := range filters {
		m, _ := f.(map[string]any)
		name, _ := m["name"].(string)
		args, _ := m["arguments"].([]any)
		for _, a := range args {
			am, _ := a.(map[string]any)
			if am["name"] != FilterArgument[name] {
				return Errorf(EInvalid, "input.filters[%d]: %s takes the argument %s, not %v", i, name, FilterArgument[name], am["name"])
			}
			values, _ := am["input"].([]any)
			for _, v := range values {
				s, _ := v.(string)
				switch name {
				case FilterByEventType:
					if !contains(EventTypes, s) {
						return Errorf(EInvalid, "input.filters[%d]: unknown event type %s", i, s)
					}
				case FilterByEntityType:
					if s != ResourceAll && !knownKind(s) {
						return Errorf(EInvalid, "input.filters[%d]: unknown entity type %s", i, s)
					}
				case FilterByFQN:
					if _, err := SplitFQN(s); err != nil {
						return Errorf(EInvalid, "input.filters[%d]: %s", i, err.Error())
					}
				}
			}
		}
	}
	return nil
}

// kindNames are the names of every kind served, read once (set in init: DefaultKinds
// refers to the hooks that read it).
var kindNames func() map[string]bool

func init() {
	kindNames = sync.OnceValue(func() map[string]bool {
		out := map[string]bool{}
		for _, k := range DefaultKinds() {
			out[k.Name] = true
		}
		return out
	})
}

func knownKind(name string) bool { return kindNames()[name] }

// ValidateWebhookEndpoint checks a webhook endpoint: an absolute http or https URL with a
// host, and no user:password in it (a secret belongs in secretKey or headers, which are
// encrypted). Where it may connect is decided when it connects (collab/events).
func ValidateWebhookEndpoint(s string) error {
	if strings.TrimSpace(s) == "" {
		return Errorf(EInvalid, "a Webhook destination needs an endpoint")
	}
	if len(s) > 2048 {
		return Errorf(EInvalid, "the endpoint is longer than 2048 characters")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return Errorf(EInvalid, "the endpoint must be an absolute http or https URL")
	}
	if u.User != nil {
		return Errorf(EInvalid, "the endpoint must not carry credentials; use secretKey or headers")
	}
	return nil
}

// ValidHeaderValue reports whether s may be sent as an HTTP header value: no control
// character but tab.
func ValidHeaderValue(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return false
		}
	}
	return true
}

// ValidateEmailAddress checks one bare e-mail address (no display name, no line breaks).
func ValidateEmailAddress(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" || strings.ContainsAny(s, "\r\n") {
		return Errorf(EInvalid, "%q is not an e-mail address", s)
	}
	return nil
}

// prepareAnnouncement writes the entity link in its normal form.
func prepareAnnouncement(_ context.Context, _ Catalog, w *Write) error {
	link, err := ParseEntityLink(w.New.String("entityLink"))
	if err != nil {
		return nil // validateAnnouncement reports it
	}
	if fqn, err := NormalizeFQN(link.FQN); err == nil {
		link.FQN = fqn
		w.New["entityLink"] = link.String()
	}
	return nil
}

// validateAnnouncement checks that the announcement ends after it starts and that the
// entity it is about exists (when the link is new or changed).
func validateAnnouncement(ctx context.Context, c Catalog, w *Write) error {
	e := w.New
	start, _ := e["startTime"].(float64)
	end, _ := e["endTime"].(float64)
	if end <= start {
		return Errorf(EInvalid, "endTime must be after startTime")
	}
	raw := e.String("entityLink")
	link, err := ParseEntityLink(raw)
	if err != nil {
		return err
	}
	if w.Old != nil && w.Old.String("entityLink") == raw {
		return nil
	}
	if _, err := c.GetByFQN(ctx, link.EntityType, link.FQN); err != nil {
		if ErrorCode(err) == ENotFound || ErrorCode(err) == EInvalid {
			return Errorf(ENotFound, "entityLink: %s %s not found", link.EntityType, link.FQN)
		}
		return err
	}
	return nil
}
