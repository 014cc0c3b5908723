// Package collab holds what the collaboration capabilities share: the destinations
// an event subscription or a credit alert notifies.
package collab

import "context"

// Destination types.
const (
	DestinationWebhook = "Webhook"
	DestinationEmail   = "Email"
)

// Destination is where a notification goes, in OpenMetadata's SubscriptionDestination
// shape: a webhook (Config.Endpoint, Config.SecretKey for the HMAC-SHA256 signature,
// Config.Headers) or e-mail (Config.Receivers).
type Destination struct {
	ID       string            `json:"id,omitempty"`
	Category string            `json:"category,omitempty"` // External (default)
	Type     string            `json:"type"`               // Webhook or Email
	Enabled  *bool             `json:"enabled,omitempty"`  // default true
	Timeout  int               `json:"timeout,omitempty"`  // seconds, default 10
	Config   DestinationConfig `json:"config"`
}

// DestinationConfig is a destination's type-specific part.
type DestinationConfig struct {
	Endpoint  string            `json:"endpoint,omitempty"`
	SecretKey string            `json:"secretKey,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Receivers []string          `json:"receivers,omitempty"`
}

// Message is one notification: Subject for e-mail, Body as the webhook's JSON body and
// the e-mail's text (rendered as indented JSON when Text is empty).
type Message struct {
	Subject string
	Text    string
	Body    any
}

// Delivery is what happened when a message was sent to one destination.
type Delivery struct {
	StatusCode int    `json:"statusCode,omitempty"`
	LatencyMs  int64  `json:"latencyMs"`
	Error      string `json:"error,omitempty"`
}

// Notifier sends a message to a destination now (no retry); the event subscriptions'
// delivery and the credit alerts use it, and testDestination reports its Delivery.
type Notifier interface {
	Notify(ctx context.Context, d Destination, m Message) (Delivery, error)
}
