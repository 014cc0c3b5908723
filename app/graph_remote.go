package app

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/remote"
)

// init wires the remote SPARQL store: MERIDIAN_SPARQL_ENDPOINT and
// MERIDIAN_SPARQL_UPDATE_ENDPOINT name the server (from GraphConfig), and
// MERIDIAN_SPARQL_USER, MERIDIAN_SPARQL_PASSWORD, MERIDIAN_SPARQL_GRAPH and
// MERIDIAN_SPARQL_TIMEOUT tune it. The password is never logged.
func init() {
	remoteGraph = func(cfg GraphConfig, log *slog.Logger) (graph.Backend, error) {
		rc, _, err := remote.ConfigFromEnv(os.Getenv)
		if err != nil {
			return nil, err
		}
		rc.QueryEndpoint, rc.UpdateEndpoint = cfg.Endpoint, cfg.UpdateEndpoint
		c, err := remote.New(rc)
		if err != nil {
			return nil, err
		}
		if log == nil {
			log = slog.Default()
		}
		// Learn which server it is (Virtuoso needs its transitive option); a store that
		// does not answer yet is retried by every query.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Ping(ctx); err != nil {
			log.Warn("the remote SPARQL store does not answer yet", "store", rc.String(), "err", err)
		} else {
			log.Info("knowledge graph on a remote SPARQL store", "store", rc.String(), "virtuoso", c.IsVirtuoso())
		}
		return remote.NewBackend(c), nil
	}
}
