package eventstest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Receiver is an httptest webhook receiver. It checks every request's X-OM-Signature
// ("sha256=<hex>" HMAC-SHA256 of the body under Secret) and answers 401 to a bad one;
// while Down it answers 503 without keeping the event. It keeps the events it accepted,
// in arrival order.
type Receiver struct {
	*httptest.Server
	Secret string

	mu       sync.Mutex
	down     bool
	delay    time.Duration
	events   []map[string]any
	bad      int
	attempts int
	got      chan struct{}
}

// NewReceiver starts a receiver that stops when the test ends.
func NewReceiver(t testing.TB, secret string) *Receiver {
	r := &Receiver{Secret: secret, got: make(chan struct{}, 10000)}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.attempts++
	down, delay := r.down, r.delay
	r.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done(): // the sender gave up
			return
		}
	}
	if down {
		http.Error(w, "receiver is down", http.StatusServiceUnavailable)
		return
	}
	if !Valid(r.Secret, body, req.Header.Get("X-OM-Signature")) {
		r.mu.Lock()
		r.bad++
		r.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	r.got <- struct{}{}
	w.WriteHeader(http.StatusOK)
}

// Valid reports whether sig is the signature of body under secret ("" secret: no header
// expected).
func Valid(secret string, body []byte, sig string) bool {
	if secret == "" {
		return sig == ""
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(sig), []byte(want))
}

// SetDown makes the receiver refuse (503) or accept again.
func (r *Receiver) SetDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// SetDelay makes every answer wait d.
func (r *Receiver) SetDelay(d time.Duration) {
	r.mu.Lock()
	r.delay = d
	r.mu.Unlock()
}

// Events returns the accepted events, in arrival order.
func (r *Receiver) Events() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.events...)
}

// BadSignatures counts the requests refused for their signature.
func (r *Receiver) BadSignatures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

// Attempts counts every request, accepted or not.
func (r *Receiver) Attempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts
}

// Wait waits until n events were accepted or the timeout passes, and returns them.
func (r *Receiver) Wait(n int, timeout time.Duration) []map[string]any {
	deadline := time.After(timeout)
	for len(r.Events()) < n {
		select {
		case <-r.got:
		case <-deadline:
			return r.Events()
		}
	}
	return r.Events()
}
