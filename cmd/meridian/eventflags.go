package main

import (
	"fmt"
	"os"
	"time"

	"github.com/meridian-catalog/meridian/collab/events"
)

// eventOptions are serve's settings of change-event delivery to event subscriptions.
type eventOptions struct {
	allowedNetworks *string
	smtpHost        *string
	smtpPort        *int
	smtpUsername    *string
	smtpFrom        *string
	smtpTLS         *string
	maxQueue        *int
	retryHorizon    *time.Duration
}

// eventFlags adds the delivery settings to serve. The SMTP password is read from
// MERIDIAN_SMTP_PASSWORD only, never from a flag (flags show in the process list).
func eventFlags(fs *flagSet) eventOptions {
	return eventOptions{
		allowedNetworks: fs.string("webhook-allowed-networks", "MERIDIAN_WEBHOOK_ALLOWED_NETWORKS", "",
			"comma-separated CIDR networks webhooks may reach besides public addresses (loopback and private networks are refused otherwise), e.g. 10.0.0.0/8"),
		smtpHost:     fs.string("smtp-host", "MERIDIAN_SMTP_HOST", "", "SMTP server of e-mail destinations; empty disables e-mail"),
		smtpPort:     fs.int("smtp-port", "MERIDIAN_SMTP_PORT", 0, "SMTP port (default 25, or 465 with --smtp-tls=tls)"),
		smtpUsername: fs.string("smtp-username", "MERIDIAN_SMTP_USERNAME", "", "SMTP user for PLAIN authentication (password in $MERIDIAN_SMTP_PASSWORD)"),
		smtpFrom:     fs.string("smtp-from", "MERIDIAN_SMTP_FROM", "", "sender address of e-mail notifications (default meridian@<smtp-host>)"),
		smtpTLS:      fs.string("smtp-tls", "MERIDIAN_SMTP_TLS", events.TLSAuto, "SMTP TLS: auto (STARTTLS when offered), starttls (required), tls (implicit) or none"),
		maxQueue: fs.int("subscription-max-queue", "MERIDIAN_SUBSCRIPTION_MAX_QUEUE", events.DefaultMaxQueue,
			"most events waiting for one event subscription; more are dropped for it and counted"),
		retryHorizon: fs.duration("subscription-retry-horizon", "MERIDIAN_SUBSCRIPTION_RETRY_HORIZON", events.DefaultRetryHorizon,
			"how long an event is retried to a failing destination before it is given up"),
	}
}

// config checks the settings and returns them as events.Config.
func (o eventOptions) config() (events.Config, error) {
	nets, err := events.ParseNetworks(*o.allowedNetworks)
	if err != nil {
		return events.Config{}, fmt.Errorf("invalid --webhook-allowed-networks: %w", err)
	}
	smtp := events.SMTPConfig{Host: *o.smtpHost, Port: *o.smtpPort, Username: *o.smtpUsername,
		Password: os.Getenv("MERIDIAN_SMTP_PASSWORD"), From: *o.smtpFrom, TLS: *o.smtpTLS}
	if err := smtp.Check(); err != nil {
		return events.Config{}, err
	}
	switch {
	case *o.maxQueue < 1:
		return events.Config{}, fmt.Errorf("invalid --subscription-max-queue %d: it must be at least 1", *o.maxQueue)
	case *o.retryHorizon <= 0:
		return events.Config{}, fmt.Errorf("invalid --subscription-retry-horizon %s: it must be positive", *o.retryHorizon)
	}
	return events.Config{SMTP: smtp, AllowedNetworks: nets, MaxQueue: *o.maxQueue, RetryHorizon: *o.retryHorizon}, nil
}
