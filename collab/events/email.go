package events

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
)

// SMTP TLS modes.
const (
	TLSAuto     = "auto"     // STARTTLS when the server offers it (the default)
	TLSStartTLS = "starttls" // STARTTLS required
	TLSImplicit = "tls"      // TLS from the first byte (port 465)
	TLSNone     = "none"     // never TLS (a local relay)
)

// SMTPConfig is the mail server e-mail destinations are sent through.
type SMTPConfig struct {
	Host     string // empty: e-mail destinations fail with "e-mail is not configured"
	Port     int    // default 25 (465 with TLSImplicit)
	Username string // when set, PLAIN authentication (only over TLS or to localhost)
	Password string
	From     string // the sender address; default meridian@<host>
	TLS      string // TLSAuto, TLSStartTLS, TLSImplicit or TLSNone
}

// SMTPFromEnv reads MERIDIAN_SMTP_HOST, MERIDIAN_SMTP_PORT, MERIDIAN_SMTP_USERNAME,
// MERIDIAN_SMTP_PASSWORD, MERIDIAN_SMTP_FROM and MERIDIAN_SMTP_TLS.
func SMTPFromEnv() (SMTPConfig, error) {
	c := SMTPConfig{Host: strings.TrimSpace(os.Getenv("MERIDIAN_SMTP_HOST")),
		Username: os.Getenv("MERIDIAN_SMTP_USERNAME"), Password: os.Getenv("MERIDIAN_SMTP_PASSWORD"),
		From: strings.TrimSpace(os.Getenv("MERIDIAN_SMTP_FROM")), TLS: strings.TrimSpace(os.Getenv("MERIDIAN_SMTP_TLS"))}
	if v := strings.TrimSpace(os.Getenv("MERIDIAN_SMTP_PORT")); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil {
			return SMTPConfig{}, fmt.Errorf("MERIDIAN_SMTP_PORT=%q is not a port number", v)
		}
		c.Port = p
	}
	return c, c.Check()
}

// Check reports a configuration that cannot work.
func (c SMTPConfig) Check() error {
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("invalid SMTP port %d", c.Port)
	}
	switch c.TLS {
	case "", TLSAuto, TLSStartTLS, TLSImplicit, TLSNone:
	default:
		return fmt.Errorf("invalid SMTP TLS mode %q: use auto, starttls, tls or none", c.TLS)
	}
	if c.From != "" {
		if err := meridian.ValidateEmailAddress(c.From); err != nil {
			return fmt.Errorf("invalid SMTP sender: %s", meridian.ErrorMessage(err))
		}
	}
	return nil
}

func (c SMTPConfig) addr() string {
	port := c.Port
	if port == 0 {
		port = 25
		if c.TLS == TLSImplicit {
			port = 465
		}
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(port))
}

func (c SMTPConfig) from() string {
	if c.From != "" {
		return c.From
	}
	return "meridian@" + strings.Trim(c.Host, "[]")
}

// email sends m to every receiver of d in one SMTP transaction.
func (n *Notifier) email(ctx context.Context, d collab.Destination, m collab.Message) error {
	c := n.SMTP
	if c.Host == "" {
		return fmt.Errorf("%w: e-mail is not configured (set MERIDIAN_SMTP_HOST)", ErrPermanent)
	}
	if len(d.Config.Receivers) == 0 {
		return fmt.Errorf("%w: the destination has no receivers", ErrPermanent)
	}
	for _, r := range d.Config.Receivers {
		if err := meridian.ValidateEmailAddress(r); err != nil {
			return fmt.Errorf("%w: %s", ErrPermanent, meridian.ErrorMessage(err))
		}
	}
	msg, err := mailMessage(c.from(), d.Config.Receivers, m)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrPermanent, err)
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", c.addr())
	if err != nil {
		return fmt.Errorf("connect to the mail server: %w", err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	host := strings.Trim(c.Host, "[]")
	if c.TLS == TLSImplicit {
		conn = tls.Client(conn, &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12})
	}
	client, err := smtp.NewClient(conn, host)
	if err != nil {
		return fmt.Errorf("mail server greeting: %w", err)
	}
	defer client.Close()
	if err := client.Hello("meridian"); err != nil {
		return fmt.Errorf("mail server HELO: %w", err)
	}
	if c.TLS != TLSImplicit && c.TLS != TLSNone {
		if ok, _ := client.Extension("STARTTLS"); ok {
			if err := client.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
				return fmt.Errorf("mail server STARTTLS: %w", err)
			}
		} else if c.TLS == TLSStartTLS {
			return fmt.Errorf("%w: the mail server does not offer STARTTLS", ErrPermanent)
		}
	}
	if c.Username != "" {
		if err := client.Auth(smtp.PlainAuth("", c.Username, c.Password, host)); err != nil {
			return fmt.Errorf("mail server authentication: %w", err)
		}
	}
	if err := client.Mail(c.from()); err != nil {
		return fmt.Errorf("mail server MAIL FROM: %w", err)
	}
	for _, r := range d.Config.Receivers {
		if err := client.Rcpt(r); err != nil {
			return fmt.Errorf("mail server RCPT TO %s: %w", r, err)
		}
	}
	w, err := client.Data()
	if err != nil {
		return fmt.Errorf("mail server DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("mail server DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail server DATA: %w", err)
	}
	return client.Quit()
}

// mailMessage is the RFC 5322 message: a plain-text body (the message's Text, or its Body
// as indented JSON), with CR and LF removed from the subject so no header can be
// injected.
func mailMessage(from string, to []string, m collab.Message) ([]byte, error) {
	text := m.Text
	if text == "" {
		b, err := json.MarshalIndent(m.Body, "", "  ")
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	subject := strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, m.Subject)
	if subject == "" {
		subject = "[Meridian] notification"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n",
		from, strings.Join(to, ", "), mime.QEncoding.Encode("utf-8", subject), time.Now().UTC().Format(time.RFC1123Z))
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	return b.Bytes(), nil
}
