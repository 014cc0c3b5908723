// Package remote is a SPARQL 1.1 protocol client for a remote triplestore (Virtuoso,
// Fuseki, Oxigraph, GraphDB): queries are POSTed to the query endpoint with content
// negotiation, updates to the update endpoint, with Digest or Basic authentication when
// the endpoint asks for it, a time limit on every request and a bound on every response
// read. It pushes the catalog's RDF projection into one named graph by SPARQL Update in
// bounded batches, and runs the graph's queries remotely.
//
// Virtuoso's traps are handled: it silently caps a result at ResultSetMaxRows (10,000 by
// default), so a capped query asks for one row more than it needs and reports the result
// TRUNCATED; and a transitive property path over a dense lineage graph runs out of its
// transitive memory, so on Virtuoso (recognised by its Server header) a closure is sent
// with OPTION (TRANSITIVE, t_distinct).
package remote

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Environment variables that configure the remote store.
const (
	EnvEndpoint       = "MERIDIAN_SPARQL_ENDPOINT"
	EnvUpdateEndpoint = "MERIDIAN_SPARQL_UPDATE_ENDPOINT"
	EnvUser           = "MERIDIAN_SPARQL_USER"
	EnvPassword       = "MERIDIAN_SPARQL_PASSWORD"
	EnvGraph          = "MERIDIAN_SPARQL_GRAPH"
	EnvTimeout        = "MERIDIAN_SPARQL_TIMEOUT"
	EnvGraphStore     = "MERIDIAN_SPARQL_GRAPH_STORE_ENDPOINT"
)

// Defaults and bounds.
const (
	// DefaultGraph is the named graph the projection is pushed into.
	DefaultGraph = "urn:meridian:catalog"
	// DefaultTimeout bounds one request.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes bounds the bytes read from one response.
	DefaultMaxResponseBytes = 64 << 20
	// DefaultBatchTriples is how many triples one INSERT DATA or DELETE DATA carries.
	DefaultBatchTriples = 2000
	// MaxBatchTriples bounds BatchTriples.
	MaxBatchTriples = 50000
	// maxErrorBody bounds the bytes of an error answer kept for its message.
	maxErrorBody = 4 << 10
)

// Config configures a Client. Zero values take the defaults.
type Config struct {
	// QueryEndpoint is the SPARQL 1.1 query endpoint URL (http or https).
	QueryEndpoint string
	// UpdateEndpoint is the SPARQL 1.1 update endpoint URL; empty means QueryEndpoint.
	UpdateEndpoint string
	// GraphStoreEndpoint is the SPARQL 1.1 Graph Store HTTP Protocol endpoint bulk loads
	// POST N-Triples to (much faster than INSERT DATA on Virtuoso); empty means
	// Virtuoso's /sparql-graph-crud beside the query endpoint when the server is
	// Virtuoso, else INSERT DATA.
	GraphStoreEndpoint string
	// User and Password authenticate with Digest or Basic, whichever the endpoint asks
	// for. The password is never logged nor shown by String.
	User     string
	Password string
	// Graph is the IRI of the named graph the projection lives in (DefaultGraph).
	Graph string
	// Timeout bounds one request (DefaultTimeout).
	Timeout time.Duration
	// MaxResponseBytes bounds the bytes read from one response (DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// BatchTriples is how many triples one update carries (DefaultBatchTriples).
	BatchTriples int
}

// ConfigFromEnv reads the remote store's configuration from getenv (os.Getenv). ok is
// false when MERIDIAN_SPARQL_ENDPOINT is unset: the embedded store is used then.
func ConfigFromEnv(getenv func(string) string) (cfg Config, ok bool, err error) {
	cfg = Config{
		QueryEndpoint:  getenv(EnvEndpoint),
		UpdateEndpoint: getenv(EnvUpdateEndpoint),
		User:           getenv(EnvUser),
		Password:       getenv(EnvPassword),
		Graph:          getenv(EnvGraph),

		GraphStoreEndpoint: getenv(EnvGraphStore),
	}
	if cfg.QueryEndpoint == "" {
		if cfg.UpdateEndpoint != "" {
			return cfg, false, fmt.Errorf("%s is set without %s", EnvUpdateEndpoint, EnvEndpoint)
		}
		return cfg, false, nil
	}
	if v := getenv(EnvTimeout); v != "" {
		d, perr := time.ParseDuration(v)
		if perr != nil || d <= 0 {
			if s, aerr := strconv.Atoi(v); aerr == nil && s > 0 {
				d = time.Duration(s) * time.Second
			} else {
				return cfg, false, fmt.Errorf("%s: %q is not a duration", EnvTimeout, v)
			}
		}
		cfg.Timeout = d
	}
	return cfg, true, cfg.check()
}

// withDefaults returns cfg with its zero values replaced by the defaults.
func (cfg Config) withDefaults() Config {
	if cfg.UpdateEndpoint == "" {
		cfg.UpdateEndpoint = cfg.QueryEndpoint
	}
	if cfg.Graph == "" {
		cfg.Graph = DefaultGraph
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.BatchTriples <= 0 {
		cfg.BatchTriples = DefaultBatchTriples
	}
	if cfg.BatchTriples > MaxBatchTriples {
		cfg.BatchTriples = MaxBatchTriples
	}
	return cfg
}

// check validates the endpoints and the graph IRI.
func (cfg Config) check() error {
	for _, e := range []struct{ name, v string }{{EnvEndpoint, cfg.QueryEndpoint}, {EnvUpdateEndpoint, cfg.UpdateEndpoint},
		{EnvGraphStore, cfg.GraphStoreEndpoint}} {
		if e.v == "" {
			continue
		}
		u, err := url.Parse(e.v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s must be an http or https URL", e.name)
		}
		if u.User != nil {
			return fmt.Errorf("%s must not carry credentials; use %s and %s", e.name, EnvUser, EnvPassword)
		}
	}
	if cfg.Graph != "" && !validIRI(cfg.Graph) {
		return fmt.Errorf("%s is not an absolute IRI", EnvGraph)
	}
	return nil
}

// String describes the configuration without its password.
func (cfg Config) String() string {
	auth := "none"
	if cfg.User != "" {
		auth = "user " + cfg.User
	}
	return fmt.Sprintf("sparql query=%s update=%s graph=%s auth=%s", cfg.QueryEndpoint, cfg.withDefaults().UpdateEndpoint,
		cfg.withDefaults().Graph, auth)
}
