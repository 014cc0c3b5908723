// Package queryrunner is Query Runner's service: admin, team and user configs with
// layered credentials, and the resolution of the credentials a query runs with.
package queryrunner

import "github.com/meridian-catalog/meridian/queryrunner/engine"

// Layers a resolution can come from.
const (
	LayerTeam  = "team"
	LayerUser  = "user"
	LayerAdmin = "admin"
)

// Resolution is what a query runs with: the connection (holding the secret; never
// returned to a client or logged) and the facts the trigger answer reports.
type Resolution struct {
	Conn engine.Conn
	// Layer is LayerTeam, LayerUser or LayerAdmin: which config supplied the credentials.
	Layer string
	// ConfigID is the id of the config of that layer.
	ConfigID string
	// UserID is the caller's user id.
	UserID string
	// ServiceName and ConnectionType (the service type) of the database service.
	ServiceName    string
	ConnectionType string
	// AuthType is "basic" or "oauth".
	AuthType string
	// MaxResultSize is the row cap: the admin config's querySettings.maxResultSize,
	// else the platform default.
	MaxResultSize int
}
