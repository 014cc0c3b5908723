package rpc

import (
	"context"
	"io"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"

	"github.com/meridian-catalog/meridian"
)

// ServeStdio serves MCP as newline-delimited JSON-RPC on in and out, as c.Principal,
// until in ends or ctx is done. Nothing but protocol messages is written to out; the
// transport's errors go to c.Logger.
func ServeStdio(ctx context.Context, c Config, in io.Reader, out io.Writer) error {
	s := server.NewStdioServer(NewServer(c))
	s.SetErrorLogger(slog.NewLogLogger(c.logger().Handler(), slog.LevelError))
	p := c.Principal
	s.SetContextFunc(func(ctx context.Context) context.Context { return meridian.WithPrincipal(ctx, p) })
	return s.Listen(ctx, in, out)
}
