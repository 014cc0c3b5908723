package rest

import (
	"container/list"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimiter caps the open connections of a Server. It keeps, per pool (the main one
// and the probe reserve), the connections that are waiting (accepted but without a
// whole request head yet, or idle between requests) oldest first, so that at the cap a
// new connection can replace the oldest waiting one: a client that opens connections
// and sends nothing, or sends its headers a byte at a time, can hold at most the cap,
// and only until newer connections arrive. A connection whose request head has arrived
// but is not parsed yet still counts as waiting, so under a flood it can be evicted
// too: the price of never letting connections that send nothing keep their places.
type connLimiter struct {
	mu    sync.Mutex
	pools [2]connPool // main, probe
}

type connPool struct {
	max     int
	open    int
	waiting list.List // of *limitedConn
}

const (
	mainPool  = 0
	probePool = 1
)

func newConnLimiter(max, probes int) *connLimiter {
	l := &connLimiter{}
	l.pools[mainPool].max = max
	l.pools[probePool].max = probes
	return l
}

// admit takes a connection into a pool, first the main one, then the probe reserve,
// making room by evicting the oldest waiting connection of a full pool. It returns nil
// when every connection of both pools is busy with a request.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	var victim *limitedConn
	defer func() {
		if victim != nil {
			_ = victim.Conn.Close() // outside the lock; its own Close is then a no-op
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pool := range []int{mainPool, probePool} {
		p := &l.pools[pool]
		if p.open >= p.max && p.waiting.Len() == 0 {
			continue
		}
		if p.open >= p.max {
			victim = p.waiting.Front().Value.(*limitedConn)
			l.releaseLocked(victim)
		}
		lc := &limitedConn{Conn: c, limiter: l, probe: pool == probePool}
		p.open++
		lc.elem = p.waiting.PushBack(lc)
		return lc
	}
	return nil
}

// connState follows net/http's view of each connection: a connection reading a
// request is busy; a new or idle one is waiting and may be evicted.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.released {
		return
	}
	p := &l.pools[lc.pool()]
	switch state {
	case http.StateActive, http.StateHijacked:
		if lc.elem != nil {
			p.waiting.Remove(lc.elem)
			lc.elem = nil
		}
	case http.StateIdle:
		if lc.elem == nil {
			lc.elem = p.waiting.PushBack(lc)
		}
	}
}

// releaseLocked gives a connection's place back, once.
func (l *connLimiter) releaseLocked(lc *limitedConn) {
	if lc.released {
		return
	}
	lc.released = true
	p := &l.pools[lc.pool()]
	p.open--
	if lc.elem != nil {
		p.waiting.Remove(lc.elem)
		lc.elem = nil
	}
}

// limitedConn is an admitted connection. It gives its place back when closed, bounds
// each write by MaxWriteStall, and rewrites net/http's own plain-text error answers
// into JSON ones.
type limitedConn struct {
	net.Conn
	limiter  *connLimiter
	probe    bool
	released bool          // guarded by limiter.mu
	elem     *list.Element // in its pool's waiting list; guarded by limiter.mu
}

func (c *limitedConn) pool() int {
	if c.probe {
		return probePool
	}
	return mainPool
}

func (c *limitedConn) Write(b []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(MaxWriteStall))
	if j := rewritePlainError(b); j != nil {
		if _, err := c.Conn.Write(j); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

func (c *limitedConn) Close() error {
	c.limiter.mu.Lock()
	c.limiter.releaseLocked(c)
	c.limiter.mu.Unlock()
	return c.Conn.Close()
}

type connKey struct{}

// withConn keeps the admitted connection in each request's context (http.Server's
// ConnContext).
func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// connOf is the admitted connection a request came on, or nil.
func connOf(ctx context.Context) *limitedConn {
	c, _ := ctx.Value(connKey{}).(*limitedConn)
	return c
}

// limitListener admits each accepted connection into the limiter, and refuses with a
// 503 the ones it has no room for.
type limitListener struct {
	net.Listener
	conns *connLimiter
}

// refusal is the answer to a connection refused at the cap.
var refusal = func() []byte {
	body, _ := marshal(errorBody{Code: http.StatusServiceUnavailable,
		Message: "The server is at its connection limit; retry later"})
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

func (ln *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := ln.conns.admit(c); lc != nil {
			return lc, nil
		}
		_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = c.Write(refusal)
		_ = c.Close()
	}
}
