package rest

import (
	"net/http"
	"runtime/debug"
	"time"
)

// systemVersion is OpenMetadata's answer to GET /v1/system/version, which its clients
// call when they connect: the server's version, and the source revision and build time
// when the binary records them (Go's VCS stamping).
type systemVersion struct {
	Version   string `json:"version"`
	Revision  string `json:"revision"`
	Timestamp int64  `json:"timestamp"`
}

// buildVersion returns the version answer of a server of this version.
func buildVersion(version string) systemVersion {
	v := systemVersion{Version: version, Revision: "unknown"}
	if v.Version == "" {
		v.Version = "dev"
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					v.Timestamp = t.UnixMilli()
				}
			}
		}
	}
	return v
}

// systemRoutes are OpenMetadata's system endpoints Meridian answers.
func (s *server) systemRoutes() []route {
	v := buildVersion(s.serverVersion)
	return []route{{method: http.MethodGet, path: apiPrefix + "/v1/system/version",
		handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, v) }),
		id:      "getSystemVersion", tag: "meta", summary: "Get the server version",
		description: "Public, as in OpenMetadata, whose clients call it when they connect: no token is needed.",
		public:      true,
		responses: obj{"200": resp("The server's version, source revision and build time (epoch milliseconds, 0 when unknown).",
			obj{"type": "object", "required": []any{"version"}, "properties": obj{
				"version":   obj{"type": "string"},
				"revision":  obj{"type": "string"},
				"timestamp": obj{"type": "integer", "format": "int64"},
			}})}}}
}
