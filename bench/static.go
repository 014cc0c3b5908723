package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// staticFloorName is the report row of the static-HTTP floor.
const staticFloorName = "floor: static HTTP server, same bytes (GET table by name)"

// staticFloor is the HTTP floor of "GET table by name": a plain net/http server in
// this process that answers each sampled path with the bytes and content type
// Meridian answered for it, read once beforehand. It is timed with the same kind of
// client, one request at a time on one keep-alive connection, so GET p50 against this
// p50 is what Meridian adds to serving those bytes over HTTP on this machine. stop
// shuts the server down.
func staticFloor(ctx context.Context, c *client, token string, getFQNs []string) (op operation, stop func(), err error) {
	pages := map[string][]byte{}
	for _, fqn := range getFQNs {
		p := getByNamePath(fqn)
		if _, ok := pages[p]; ok {
			continue
		}
		b, err := c.do(ctx, http.MethodGet, p, "", nil)
		if err != nil {
			return operation{}, nil, fmt.Errorf("read %s: %w", p, err)
		}
		pages[p] = b
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return operation{}, nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := pages[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})}
	go func() { _ = srv.Serve(ln) }()
	sc := newClient("http://"+ln.Addr().String(), token, 1)
	op = operation{
		name: staticFloorName,
		run: func(ctx context.Context, i int) (time.Duration, error) {
			start := time.Now()
			_, err := sc.do(ctx, http.MethodGet, getByNamePath(getFQNs[i%len(getFQNs)]), "", nil)
			return time.Since(start), err
		},
	}
	return op, func() { sc.close(); _ = srv.Close() }, nil
}

// getByNamePath is the path of the timed REST GET by name.
func getByNamePath(fqn string) string {
	return "/api/v1/tables/name/" + url.PathEscape(fqn) + "?fields=columns"
}
