package rest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestCancelledByTheClientIs499: a request whose context the server cancelled
// (its client hung up) fails as 499 in the log and the metrics, not as a 500, wherever
// the cancellation surfaces (here in token verification, a database read).
func TestRequestCancelledByTheClientIs499(t *testing.T) {
	f := newFixture(t)
	h := New(Config{Entities: f.ents, Auth: f.auth})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("GET", "/api/v1/tables", nil).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+f.admin)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != StatusClientClosedRequest {
		t.Fatalf("status %d, want 499: %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if body := rec.Body.String(); !strings.Contains(body, `code="499"`) || strings.Contains(body, `code="500"`) {
		t.Errorf("/metrics does not count the cancelled request as 499 alone:\n%s", body)
	}
}

func TestMethodLabelIsOneOfAFixedSet(t *testing.T) {
	for m, want := range map[string]string{"GET": "GET", "PATCH": "PATCH", "TRACE": "TRACE", "get": "other",
		"X-INVENTED": "other", "PROPFIND": "other", "": "other"} {
		if got := methodLabel(m); got != want {
			t.Errorf("methodLabel(%q) = %q, want %q", m, got, want)
		}
	}
}

func TestRewritePlainErrorOnlyTouchesNetHTTPsOwnAnswers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" = left alone
	}{
		{"HTTP/1.1 400 Bad Request" + plainErrorHeaders + "400 Bad Request", `{"code":400,"message":"Bad Request"}`},
		{"HTTP/1.1 400 Bad Request: malformed Host header" + plainErrorHeaders + "400 Bad Request: malformed Host header",
			`{"code":400,"message":"Bad Request: malformed Host header"}`},
		{"HTTP/1.1 431 Request Header Fields Too Large" + plainErrorHeaders + "431 Request Header Fields Too Large",
			`{"code":431,"message":"Request Header Fields Too Large: the request line and headers are limited to 65536 bytes"}`},
		{"HTTP/1.1 501 Not Implemented" + plainErrorHeaders + "Unsupported transfer encoding", `{"code":501,"message":"Unsupported transfer encoding"}`},
		{"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: x\r\nContent-Length: 0\r\n\r\n", `{"code":417,`},
		{"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\n\r\nok", ""},
		{"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nDate: x\r\n\r\n{}", ""},
		{"HTTP/1.1 200 OK" + plainErrorHeaders + "ok", ""},
		{`{"description":"HTTP/1.1 400 Bad Request"}`, ""},
	} {
		got := rewritePlainError([]byte(c.in))
		switch {
		case c.want == "" && got != nil:
			t.Errorf("rewrote %q into %q", c.in, got)
		case c.want != "" && (got == nil || !strings.Contains(string(got), "Content-Type: application/json\r\n") ||
			!strings.Contains(string(got), c.want)):
			t.Errorf("rewritePlainError(%q) = %q, want a JSON answer with %s", c.in, got, c.want)
		}
	}
}

// TestConnLimiterEvictsTheOldestWaitingConnection: at the cap a new connection takes
// the place of the oldest one that is not busy with a request; when all are busy it
// goes to the probe reserve, and past that it is refused.
func TestConnLimiterEvictsTheOldestWaitingConnection(t *testing.T) {
	l := newConnLimiter(2, 1)
	pipe := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	c1, c2 := l.admit(pipe()), l.admit(pipe())
	l.connState(c1, http.StateActive)
	c3 := l.admit(pipe()) // evicts c2, the oldest waiting one
	if c3 == nil || c3.probe || !c2.released || c1.released {
		t.Fatalf("at the cap: c3 %+v, c2 released %v, c1 released %v", c3, c2.released, c1.released)
	}
	l.connState(c3, http.StateActive)
	c4 := l.admit(pipe()) // every main place busy: the probe reserve
	if c4 == nil || !c4.probe {
		t.Fatalf("all busy: c4 = %+v, want a probe connection", c4)
	}
	l.connState(c4, http.StateActive)
	if c5 := l.admit(pipe()); c5 != nil {
		t.Fatalf("all busy and the reserve full: admitted %+v", c5)
	}
	l.connState(c1, http.StateIdle)
	if c6 := l.admit(pipe()); c6 == nil || c6.probe || !c1.released {
		t.Fatalf("an idle connection is evicted for a new one: c6 %+v, c1 released %v", c6, c1.released)
	}
	c3.Close()
	c3.Close() // closing twice gives the place back once
	if got := l.pools[mainPool].open; got != 1 {
		t.Errorf("open main connections = %d, want 1", got)
	}
}
