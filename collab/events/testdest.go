package events

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
)

// MaxTestDestinations bounds the destinations of one testDestination call.
const MaxTestDestinations = 10

// TestRequest is the body of POST /v1/events/subscriptions/testDestination, in
// OpenMetadata's shape: the destinations to try, and optionally the alert's name for
// the message.
type TestRequest struct {
	AlertName    string               `json:"alertName,omitempty"`
	Destinations []collab.Destination `json:"destinations"`
}

// TestResult is what happened when the test message went to one destination.
type TestResult struct {
	Type      string   `json:"type"`
	Endpoint  string   `json:"endpoint,omitempty"`
	Receivers []string `json:"receivers,omitempty"`
	// Status is "Success" or "Failed".
	Status string `json:"status"`
	collab.Delivery
}

var headerNameRE = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")

// CheckDestination checks a destination given in a request: a known type with what the
// type needs, a timeout of at most MaxTimeout, at most 20 valid headers, at most 50
// receivers. Errors: EInvalid.
func CheckDestination(i int, d collab.Destination) error {
	bad := func(format string, args ...any) error {
		return meridian.Errorf(meridian.EInvalid, "destinations[%d]: %s", i, fmt.Sprintf(format, args...))
	}
	if d.Timeout < 0 || time.Duration(d.Timeout)*time.Second > MaxTimeout {
		return bad("timeout must be between 1 and %d seconds", int(MaxTimeout.Seconds()))
	}
	switch d.Type {
	case collab.DestinationWebhook:
		if err := meridian.ValidateWebhookEndpoint(d.Config.Endpoint); err != nil {
			return bad("config.endpoint: %s", meridian.ErrorMessage(err))
		}
		if len(d.Config.Headers) > 20 {
			return bad("config.headers: at most 20 headers")
		}
		for k, v := range d.Config.Headers {
			if !headerNameRE.MatchString(k) || len(v) > 4096 || !meridian.ValidHeaderValue(v) {
				return bad("config.headers: invalid header %q", k)
			}
		}
	case collab.DestinationEmail:
		if len(d.Config.Receivers) == 0 || len(d.Config.Receivers) > 50 {
			return bad("config.receivers: an Email destination needs 1 to 50 receivers")
		}
		for _, r := range d.Config.Receivers {
			if err := meridian.ValidateEmailAddress(r); err != nil {
				return bad("config.receivers: %s", meridian.ErrorMessage(err))
			}
		}
	default:
		return bad("type must be Webhook or Email, not %q", d.Type)
	}
	return nil
}

// TestDestination sends a test message to each destination, at once and concurrently,
// and reports each outcome (status code, latency, error). Only admins may: a test sends
// a request from the server. A disabled destination is tried too. Errors: EUnauthorized,
// EForbidden (not an admin), EInvalid (no destination, more than
// MaxTestDestinations, a destination CheckDestination refuses).
func (s *Service) TestDestination(ctx context.Context, p *meridian.Principal, req TestRequest) ([]TestResult, error) {
	if p == nil {
		return nil, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if !p.IsAdmin() {
		return nil, meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [EditAll] not allowed: only admins test destinations", p.Name)
	}
	if len(req.Destinations) == 0 || len(req.Destinations) > MaxTestDestinations {
		return nil, meridian.Errorf(meridian.EInvalid, "destinations: give 1 to %d destinations", MaxTestDestinations)
	}
	for i, d := range req.Destinations {
		if err := CheckDestination(i, d); err != nil {
			return nil, err
		}
	}
	name := req.AlertName
	if len(name) > 256 {
		name = name[:256]
	}
	ev := meridian.ChangeEvent{ID: uuid.NewString(), EventType: "testMessage", EntityType: meridian.KindEventSubscription,
		UserName: p.Name, Timestamp: s.now(), EntityFQN: name}
	msg := collab.Message{Subject: "[Meridian] test message", Body: ev,
		Text: "This is a test message from Meridian for the alert destination" + alertSuffix(name) + "."}
	out := make([]TestResult, len(req.Destinations))
	var wg sync.WaitGroup
	for i, d := range req.Destinations {
		enabled := true
		d.Enabled = &enabled
		wg.Add(1)
		go func() {
			defer wg.Done()
			delivery, err := s.notifier.Notify(ctx, d, msg)
			r := TestResult{Type: d.Type, Receivers: d.Config.Receivers, Status: "Success", Delivery: delivery}
			if d.Type == collab.DestinationWebhook {
				r.Endpoint = d.Config.Endpoint
			}
			if err != nil {
				r.Status = "Failed"
				if r.Error == "" {
					r.Error = err.Error()
				}
			}
			out[i] = r
		}()
	}
	wg.Wait()
	return out, nil
}

func alertSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " of " + name
}
