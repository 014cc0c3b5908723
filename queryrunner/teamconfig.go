package queryrunner

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// teamRef is a team with who owns it and who belongs to it.
type teamRef struct {
	ID      string
	Name    string
	owners  []string // user ids
	members []string // user ids
}

// owns reports whether p owns the team; admins count as owners.
func (t teamRef) managedBy(p *meridian.Principal) bool {
	return p.IsAdmin() || contains(t.owners, p.ID)
}

// hasMember reports whether p belongs to the team (its owners included).
func (t teamRef) hasMember(p *meridian.Principal) bool {
	return contains(t.members, p.ID) || contains(t.owners, p.ID)
}

// refIDs returns the ids of the references of kind in a relationship field, leaving
// out deleted entities.
func refIDs(v any, kind string) []string {
	var out []string
	list, _ := v.([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		id, _ := m["id"].(string)
		typ, _ := m["type"].(string)
		deleted, _ := m["deleted"].(bool)
		if id != "" && !deleted && (typ == "" || typ == kind) {
			out = append(out, id)
		}
	}
	return out
}

// team reads, in tx, a team by id. Errors: EInvalid (not a UUID), ENotFound.
func (s *Service) team(ctx context.Context, tx store.Tx, p *meridian.Principal, id string) (teamRef, error) {
	u, err := uuid.Parse(strings.TrimSpace(id))
	if err != nil {
		return teamRef{}, meridian.Errorf(meridian.EInvalid, "Invalid teamId %s: must be a UUID", clip(id))
	}
	row, doc, err := s.ents.Load(ctx, tx, p, store.OpView, meridian.KindTeam, store.ByID(u.String()), store.IncludeNonDeleted)
	if err != nil {
		return teamRef{}, err
	}
	return teamRef{ID: row.ID, Name: row.FQN, owners: refIDs(doc["owners"], meridian.KindUser), members: refIDs(doc["users"], meridian.KindUser)}, nil
}

// managedTeam reads a team that p owns (or p is an admin). Errors: EInvalid,
// ENotFound, EForbidden.
func (s *Service) managedTeam(ctx context.Context, tx store.Tx, p *meridian.Principal, id string) (teamRef, error) {
	t, err := s.team(ctx, tx, p, id)
	if err != nil {
		return t, err
	}
	if !t.managedBy(p) {
		return t, meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [EditTeamQueryRunnerConfig] not allowed: team configs need the team's owner or a workspace admin", p.Name)
	}
	return t, nil
}

// TeamConfigQuery selects team configs: by TeamConfigID; by Service and Team; by
// Service alone; by Team alone; or, with nothing, every config the caller manages.
type TeamConfigQuery struct {
	TeamConfigID string
	Service      string
	Team         string
}

// TeamConfigs answers a team config lookup: one config (TeamConfigID, or Service with
// Team) or a list (at most 1000). A team config is shown to the team's owners and to
// admins: a config looked up by id that the caller may not see is not found; a team
// the caller does not own is EForbidden; lists leave out the teams the caller does not
// own. Errors: EUnauthorized, EForbidden, EInvalid, ENotFound.
func (s *Service) TeamConfigs(ctx context.Context, p *meridian.Principal, q TeamConfigQuery) (one map[string]any, list []map[string]any, err error) {
	if err := caller(p); err != nil {
		return nil, nil, err
	}
	err = s.inTx(ctx, false, func(tx store.Tx) error {
		switch {
		case q.TeamConfigID != "":
			if _, err := uuid.Parse(q.TeamConfigID); err != nil {
				return meridian.Errorf(meridian.EInvalid, "Invalid teamConfigId %s: must be a UUID", clip(q.TeamConfigID))
			}
			c, err := s.loadCredByID(ctx, tx, teamScope, q.TeamConfigID)
			if err != nil {
				return err
			}
			t, err := s.team(ctx, tx, p, c.OwnerID)
			if err != nil || !t.managedBy(p) {
				return meridian.NotFound(teamScope.noun, q.TeamConfigID)
			}
			one = c.view(teamScope)
		case q.Service != "" && q.Team != "":
			t, err := s.managedTeam(ctx, tx, p, q.Team)
			if err != nil {
				return err
			}
			svc, err := s.service(ctx, tx, p, q.Service)
			if err != nil {
				return err
			}
			c, err := s.loadCred(ctx, tx, teamScope, svc, t.ID)
			if err != nil {
				return err
			}
			one = c.view(teamScope)
		case q.Team != "":
			t, err := s.managedTeam(ctx, tx, p, q.Team)
			if err != nil {
				return err
			}
			cs, err := s.listCred(ctx, tx, teamScope, "team_id", t.ID)
			if err != nil {
				return err
			}
			list = views(cs)
		default:
			var (
				cs  []credConfig
				err error
			)
			if q.Service != "" {
				svc, serr := s.service(ctx, tx, p, q.Service)
				if serr != nil {
					return serr
				}
				cs, err = s.listCred(ctx, tx, teamScope, "service_id", svc.ID)
			} else {
				cs, err = s.allTeamConfigs(ctx, tx)
			}
			if err != nil {
				return err
			}
			managed := map[string]bool{}
			list = []map[string]any{}
			for _, c := range cs {
				ok, seen := managed[c.OwnerID]
				if !seen {
					t, terr := s.team(ctx, tx, p, c.OwnerID)
					ok = terr == nil && t.managedBy(p)
					managed[c.OwnerID] = ok
				}
				if ok {
					list = append(list, c.view(teamScope))
				}
			}
		}
		return nil
	})
	return one, list, err
}

// allTeamConfigs reads the team configs of every service, at most listCap.
func (s *Service) allTeamConfigs(ctx context.Context, tx store.Tx) ([]credConfig, error) {
	rows, err := tx.SQL().Query(ctx, "SELECT "+teamScope.columns()+" FROM qr_team_configs ORDER BY created_at, id LIMIT $1", listCap)
	if err != nil {
		return nil, err
	}
	var out []credConfig
	for rows.Next() {
		c, err := s.scanCred(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].ServiceName = serviceName(ctx, tx, out[i].ServiceID)
	}
	return out, nil
}

func views(cs []credConfig) []map[string]any {
	out := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.view(teamScope))
	}
	return out
}

// PutTeamConfig creates (when create is set and it is missing) or updates a team's
// config of a service. service and team come from the query (PUT) or the body
// (POST: serviceName and teamId, both required). The caller owns the team or is an
// admin. It reports whether the config was created. Errors: EUnauthorized,
// EForbidden, EInvalid, ENotFound.
func (s *Service) PutTeamConfig(ctx context.Context, p *meridian.Principal, service, team string, body map[string]any, create bool) (map[string]any, bool, error) {
	if err := caller(p); err != nil {
		return nil, false, err
	}
	if err := checkMembers("A team config", body, teamMembers, teamReadOnly); err != nil {
		return nil, false, err
	}
	bodyTeam, hasTeam, err := stringField(body, "teamId")
	if err != nil {
		return nil, false, err
	}
	if team == "" {
		if !hasTeam || strings.TrimSpace(bodyTeam) == "" {
			return nil, false, meridian.Errorf(meridian.EInvalid, "teamId is required")
		}
		team = bodyTeam
	} else if hasTeam && !strings.EqualFold(strings.TrimSpace(bodyTeam), strings.TrimSpace(team)) {
		return nil, false, meridian.Errorf(meridian.EInvalid, "teamId %q does not match the team %q the request names", clip(bodyTeam), clip(team))
	}
	if service == "" {
		if service, _, err = stringField(body, "serviceName"); err != nil {
			return nil, false, err
		}
	}
	var teamID string
	authorize := func(tx store.Tx) error {
		t, err := s.managedTeam(ctx, tx, p, team)
		teamID = t.ID
		return err
	}
	return s.putCred(ctx, p, teamScope, service, func() string { return teamID }, body, create, authorize)
}

// DeleteTeamConfig deletes a team's config of a service. The caller owns the team or
// is an admin. Errors: EUnauthorized, EForbidden, EInvalid, ENotFound.
func (s *Service) DeleteTeamConfig(ctx context.Context, p *meridian.Principal, service, team string) error {
	if err := caller(p); err != nil {
		return err
	}
	return s.inTx(ctx, true, func(tx store.Tx) error {
		t, err := s.managedTeam(ctx, tx, p, team)
		if err != nil {
			return err
		}
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		n, err := tx.SQL().Exec(ctx, "DELETE FROM qr_team_configs WHERE service_id = $1 AND team_id = $2", svc.ID, t.ID)
		if err == nil && n == 0 {
			err = meridian.Errorf(meridian.ENotFound, "teamConfig instance for service %s and team %s not found", svc.Name, t.Name)
		}
		return err
	})
}
