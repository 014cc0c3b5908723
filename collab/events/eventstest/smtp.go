// Package eventstest holds fakes of the outside world for the tests of event delivery:
// an SMTP sink and a webhook receiver that checks signatures. Only tests use it.
package eventstest

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mail is one message the SMTP sink received.
type Mail struct {
	From string
	To   []string
	Data string // headers and body, CRLF line ends, dot-unstuffed
}

// SMTPSink is a tiny SMTP server on a loopback port: it speaks enough of RFC 5321
// (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT) to accept mail, and keeps what it
// receives.
type SMTPSink struct {
	Host string
	Port int

	ln   net.Listener
	mu   sync.Mutex
	mail []Mail
	got  chan struct{}
}

// NewSMTPSink starts a sink that stops when the test ends.
func NewSMTPSink(t testing.TB) *SMTPSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtp sink: %v", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	s := &SMTPSink{Host: "127.0.0.1", Port: addr.Port, ln: ln, got: make(chan struct{}, 1000)}
	go s.serve()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *SMTPSink) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.session(c)
	}
}

func (s *SMTPSink) session(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(line string) { w.WriteString(line + "\r\n"); w.Flush() }
	reply("220 sink ESMTP ready")
	var cur Mail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(line)
		switch {
		case strings.HasPrefix(verb, "EHLO"):
			reply("250-sink greets you")
			reply("250 8BITMIME")
		case strings.HasPrefix(verb, "HELO"):
			reply("250 sink")
		case strings.HasPrefix(verb, "MAIL FROM:"):
			cur = Mail{From: strings.Trim(line[len("MAIL FROM:"):], "<> ")}
			if i := strings.Index(cur.From, ">"); i >= 0 {
				cur.From = cur.From[:i]
			}
			reply("250 OK")
		case strings.HasPrefix(verb, "RCPT TO:"):
			cur.To = append(cur.To, strings.Trim(line[len("RCPT TO:"):], "<> "))
			reply("250 OK")
		case verb == "DATA":
			reply("354 end with <CRLF>.<CRLF>")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				l = strings.TrimPrefix(l, ".")
				b.WriteString(l)
			}
			cur.Data = b.String()
			s.mu.Lock()
			s.mail = append(s.mail, cur)
			s.mu.Unlock()
			s.got <- struct{}{}
			reply("250 OK queued")
		case verb == "RSET":
			cur = Mail{}
			reply("250 OK")
		case verb == "NOOP":
			reply("250 OK")
		case verb == "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 command not implemented")
		}
	}
}

// Mail returns the messages received so far.
func (s *SMTPSink) Mail() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mail...)
}

// Wait waits until n messages have arrived or the timeout passes, and returns them.
func (s *SMTPSink) Wait(n int, timeout time.Duration) []Mail {
	deadline := time.After(timeout)
	for len(s.Mail()) < n {
		select {
		case <-s.got:
		case <-deadline:
			return s.Mail()
		}
	}
	return s.Mail()
}
