package queryrunner

import (
	"context"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/store"
)

// layerConfig is the config a resolution picked: its layer, its id and its
// credentials.
type layerConfig struct {
	layer string
	scope scope // userScope or teamScope; unused for the admin layer
	id    string
	auth  authConfig
}

// Resolve finds the credentials a query of p on a service runs with:
//
//   - teamID given: that team's config; p must belong to the team (EForbidden).
//   - preferTeam: the config of the team p belongs to (EInvalid when several of p's
//     teams have one: name it with teamId), else the admin config when the service
//     allows running with it.
//   - otherwise p's own user config, else the admin config when the service allows
//     running with it (allowAdminCredentials).
//
// Fields the admin did not make user-configurable (role, database, schema, warehouse,
// dataset) come from the admin config; so do the host and the options. An OAuth
// config whose access token is missing or expired is refreshed first. The resolution
// holds the secret in Conn: never answer or log it. Errors: EUnauthorized,
// EForbidden, EInvalid (bad name or team id, Query Runner disabled for the service, no
// credentials for the caller, no host), ENotFound (no service, team, admin config or
// team config), EUnavailable (an OAuth token endpoint cannot be reached).
func (s *Service) Resolve(ctx context.Context, p *meridian.Principal, serviceName, teamID string, preferTeam bool) (Resolution, error) {
	if err := caller(p); err != nil {
		return Resolution{}, err
	}
	var (
		admin adminConfig
		lc    layerConfig
		svc   serviceRef
	)
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		var err error
		if svc, err = s.service(ctx, tx, p, serviceName); err != nil {
			return err
		}
		if admin, err = s.activeAdmin(ctx, tx, svc); err != nil {
			return err
		}
		lc, err = s.pick(ctx, tx, p, svc, admin, teamID, preferTeam)
		return err
	})
	if err != nil {
		return Resolution{}, err
	}
	return s.resolution(ctx, p, svc, admin, lc)
}

// resolution builds the connection of a picked layer, refreshing an OAuth token
// first when needed.
func (s *Service) resolution(ctx context.Context, p *meridian.Principal, svc serviceRef, admin adminConfig, lc layerConfig) (Resolution, error) {
	if lc.auth.Type == AuthOAuth && s.tokenStale(lc.auth) {
		a, err := s.refresh(ctx, admin, lc)
		if err != nil {
			return Resolution{}, err
		}
		lc.auth = a
	}
	conn, err := connFor(svc, admin, lc)
	if err != nil {
		return Resolution{}, err
	}
	return Resolution{Conn: conn, Layer: lc.layer, ConfigID: lc.id, UserID: p.ID, ServiceName: svc.Name,
		ConnectionType: admin.ServiceType, AuthType: strings.ToLower(lc.auth.Type), MaxResultSize: admin.MaxResultSize}, nil
}

// pick chooses the layer of a resolution, in tx.
func (s *Service) pick(ctx context.Context, tx store.Tx, p *meridian.Principal, svc serviceRef, admin adminConfig, teamID string, preferTeam bool) (layerConfig, error) {
	adminLayer := func(why string) (layerConfig, error) {
		if !admin.AllowAdminCredentials {
			return layerConfig{}, meridian.Errorf(meridian.EInvalid, "%s, and service %s does not let queries run with the admin's credentials", why, svc.Name)
		}
		return layerConfig{layer: LayerAdmin, id: admin.ID, auth: admin.Auth}, nil
	}
	if strings.TrimSpace(teamID) != "" {
		t, err := s.team(ctx, tx, p, teamID)
		if err != nil {
			return layerConfig{}, err
		}
		if !t.hasMember(p) {
			return layerConfig{}, meridian.Errorf(meridian.EForbidden, "Principal %s is not a member of team %s: only its members run queries with its credentials", p.Name, t.Name)
		}
		c, err := s.loadCred(ctx, tx, teamScope, svc, t.ID)
		if err != nil {
			if meridian.ErrorCode(err) == meridian.ENotFound {
				return layerConfig{}, meridian.Errorf(meridian.ENotFound, "Team %s has no Query Runner config for service %s", t.Name, svc.Name)
			}
			return layerConfig{}, err
		}
		return layerConfig{layer: LayerTeam, scope: teamScope, id: c.ID, auth: c.Auth}, nil
	}
	if preferTeam {
		cs, err := s.callerTeamConfigs(ctx, tx, p, svc)
		if err != nil {
			return layerConfig{}, err
		}
		switch len(cs) {
		case 0:
			return adminLayer("None of your teams has a Query Runner config for service " + svc.Name)
		case 1:
			return layerConfig{layer: LayerTeam, scope: teamScope, id: cs[0].ID, auth: cs[0].Auth}, nil
		}
		ids := make([]string, len(cs))
		for i, c := range cs {
			ids[i] = c.OwnerID
		}
		return layerConfig{}, meridian.Errorf(meridian.EInvalid, "Several of your teams have a Query Runner config for service %s: name one with teamId (%s)", svc.Name, strings.Join(ids, ", "))
	}
	c, err := s.loadCred(ctx, tx, userScope, svc, p.ID)
	switch meridian.ErrorCode(err) {
	case "":
		return layerConfig{layer: LayerUser, scope: userScope, id: c.ID, auth: c.Auth}, nil
	case meridian.ENotFound:
		return adminLayer("You have no Query Runner config for service " + svc.Name + " (POST /v1/queryRunner/user-configs creates one)")
	}
	return layerConfig{}, err
}

// callerTeamConfigs reads the configs of svc of the teams p belongs to.
func (s *Service) callerTeamConfigs(ctx context.Context, tx store.Tx, p *meridian.Principal, svc serviceRef) ([]credConfig, error) {
	_, doc, err := s.ents.Load(ctx, tx, p, store.OpView, meridian.KindUser, store.ByID(p.ID), store.IncludeNonDeleted)
	if err != nil {
		return nil, err
	}
	var out []credConfig
	for _, id := range refIDs(doc["teams"], meridian.KindTeam) {
		c, err := s.loadCred(ctx, tx, teamScope, svc, id)
		switch meridian.ErrorCode(err) {
		case "":
			out = append(out, c)
		case meridian.ENotFound:
		default:
			return nil, err
		}
	}
	return out, nil
}

// connFor builds the connection of a layer: its credentials, the configurable fields
// it may set, and the admin's everything else.
func connFor(svc serviceRef, admin adminConfig, lc layerConfig) (engine.Conn, error) {
	hp := admin.HostPort
	if hp == "" {
		hp = serviceHostPort(svc.Doc)
	}
	if hp == "" {
		return engine.Conn{}, meridian.Errorf(meridian.EInvalid, "Service %s has no host: set hostPort in its Query Runner admin config", svc.Name)
	}
	host, port, err := splitHostPort(hp)
	if err != nil {
		return engine.Conn{}, meridian.Errorf(meridian.EInvalid, "Service %s's hostPort must be host or host:port", svc.Name)
	}
	a := lc.auth
	c := engine.Conn{Type: admin.ServiceType, AuthType: strings.ToLower(a.Type), Host: host, Port: port,
		Username: a.str("username"), Password: a.Secrets["password"], Token: a.Secrets["accessToken"], Options: admin.Options}
	field := func(name string) string {
		if lc.layer != LayerAdmin && admin.configurable(name) {
			if v := a.str(name); v != "" {
				return v
			}
		}
		return admin.Auth.str(name)
	}
	c.Role, c.Database, c.Schema = field(FieldRole), field(FieldDatabase), field(FieldSchema)
	c.Warehouse, c.Dataset = field(FieldWarehouse), field(FieldDataset)
	return c, nil
}

// serviceHostPort reads connection.config.hostPort of a database service document.
func serviceHostPort(doc map[string]any) string {
	conn, _ := doc["connection"].(map[string]any)
	cfg, _ := conn["config"].(map[string]any)
	hp, _ := cfg["hostPort"].(string)
	return strings.TrimSpace(hp)
}
