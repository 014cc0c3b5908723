package main

import (
	"fmt"
	"time"

	"github.com/meridian-catalog/meridian/rest"
)

// serverOptions are serve's bounds on what clients can hold of the HTTP server.
type serverOptions struct {
	maxConns          *int
	readHeaderTimeout *time.Duration
	readTimeout       *time.Duration
}

// serverFlags adds the HTTP server's bounds to serve.
func serverFlags(fs *flagSet) serverOptions {
	return serverOptions{
		maxConns: fs.int("max-connections", "MERIDIAN_MAX_CONNECTIONS", rest.DefaultMaxConnections,
			fmt.Sprintf("most open client connections (plus %d kept for /healthz, /readyz and /metrics); keep it below the open-file limit", rest.ProbeConnections)),
		readHeaderTimeout: fs.duration("read-header-timeout", "MERIDIAN_READ_HEADER_TIMEOUT", rest.DefaultReadHeaderTimeout,
			"longest time a client may take to send a request's headers"),
		readTimeout: fs.duration("read-timeout", "MERIDIAN_READ_TIMEOUT", rest.DefaultReadTimeout,
			"longest time a client may take to send a whole request, body included (408 after it)"),
	}
}

// limits checks the flags and returns them as rest.Limits.
func (o serverOptions) limits() (rest.Limits, error) {
	switch {
	case *o.maxConns < 1:
		return rest.Limits{}, fmt.Errorf("invalid --max-connections %d: it must be at least 1", *o.maxConns)
	case *o.readHeaderTimeout <= 0:
		return rest.Limits{}, fmt.Errorf("invalid --read-header-timeout %s: it must be positive", *o.readHeaderTimeout)
	case *o.readTimeout <= 0:
		return rest.Limits{}, fmt.Errorf("invalid --read-timeout %s: it must be positive", *o.readTimeout)
	}
	return rest.Limits{MaxConnections: *o.maxConns, ReadHeaderTimeout: *o.readHeaderTimeout, ReadTimeout: *o.readTimeout}, nil
}
