package queryrunner

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// scope says whose a credential config is: a user's or a team's. Both are stored
// alike, in their own table, keyed by (service, owner).
type scope struct {
	table    string // qr_user_configs or qr_team_configs
	ownerCol string // user_id or team_id
	noun     string // userConfig or teamConfig, in messages
}

var (
	userScope = scope{table: "qr_user_configs", ownerCol: "user_id", noun: "userConfig"}
	teamScope = scope{table: "qr_team_configs", ownerCol: "team_id", noun: "teamConfig"}
)

// credConfig is a user's or a team's config of a service.
type credConfig struct {
	ID          string
	ServiceID   string
	ServiceName string
	OwnerID     string // the user's or the team's id
	Auth        authConfig
	Status      Status
	CreatedAt   int64
	UpdatedAt   int64
	UpdatedBy   string
}

// credDoc is what the doc column holds (no secret).
type credDoc struct {
	AuthConfig map[string]any `json:"userAuthConfig"`
	UpdatedBy  string         `json:"updatedBy"`
}

// view is the config as answered: secrets masked.
func (c credConfig) view(sc scope) map[string]any {
	v := map[string]any{
		"id":               c.ID,
		"serviceId":        c.ServiceID,
		"serviceName":      c.ServiceName,
		"userAuthConfig":   c.Auth.view(),
		"connectionStatus": c.Status,
		"createdAt":        c.CreatedAt,
		"updatedAt":        c.UpdatedAt,
		"updatedBy":        c.UpdatedBy,
	}
	if sc == userScope {
		v["userId"] = c.OwnerID
	} else {
		v["teamId"] = c.OwnerID
	}
	return v
}

func (sc scope) columns() string {
	return "id, service_id, " + sc.ownerCol + ", doc, secret, status, created_at, updated_at"
}

// scan reads a config row, opening its secrets.
func (s *Service) scanCred(r store.Scanner) (credConfig, error) {
	var (
		c                   credConfig
		doc, secret, status string
		d                   credDoc
	)
	if err := r.Scan(&c.ID, &c.ServiceID, &c.OwnerID, &doc, &secret, &status, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return c, err
	}
	secrets, err := openSecrets(s.sealer, secret)
	if err != nil {
		return c, err
	}
	c.Auth, c.UpdatedBy, c.Status = decodeAuth(d.AuthConfig, secrets), d.UpdatedBy, decodeStatus(status)
	return c, nil
}

// loadCred reads, in tx, the config of owner on a service. Errors: ENotFound.
func (s *Service) loadCred(ctx context.Context, tx store.Tx, sc scope, svc serviceRef, ownerID string) (credConfig, error) {
	c, err := s.scanCred(tx.SQL().QueryRow(ctx, "SELECT "+sc.columns()+" FROM "+sc.table+" WHERE service_id = $1 AND "+sc.ownerCol+" = $2", svc.ID, ownerID))
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return c, meridian.Errorf(meridian.ENotFound, "%s instance for service %s not found", sc.noun, svc.Name)
	}
	c.ServiceName = svc.Name
	return c, err
}

// loadCredByID reads, in tx, a config by id. Errors: ENotFound.
func (s *Service) loadCredByID(ctx context.Context, tx store.Tx, sc scope, id string) (credConfig, error) {
	c, err := s.scanCred(tx.SQL().QueryRow(ctx, "SELECT "+sc.columns()+" FROM "+sc.table+" WHERE id = $1", id))
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return c, meridian.NotFound(sc.noun, id)
	}
	if err == nil {
		c.ServiceName = serviceName(ctx, tx, c.ServiceID)
	}
	return c, err
}

// listCred reads, in tx, the configs matching one column (service_id, or the owner
// column), at most listCap.
func (s *Service) listCred(ctx context.Context, tx store.Tx, sc scope, col, value string) ([]credConfig, error) {
	rows, err := tx.SQL().Query(ctx, "SELECT "+sc.columns()+" FROM "+sc.table+" WHERE "+col+" = $1 ORDER BY created_at, id LIMIT $2", value, listCap)
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

// saveCred writes c, inserting it when insert is set.
func (s *Service) saveCred(ctx context.Context, tx store.Tx, sc scope, c credConfig, insert bool) error {
	doc, err := json.Marshal(credDoc{AuthConfig: c.Auth.plainJSON(), UpdatedBy: c.UpdatedBy})
	if err != nil {
		return err
	}
	secret, err := sealSecrets(s.sealer, c.Auth.Secrets)
	if err != nil {
		return err
	}
	if insert {
		_, err = tx.SQL().Exec(ctx, "INSERT INTO "+sc.table+" (id, service_id, "+sc.ownerCol+", doc, secret, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
			c.ID, c.ServiceID, c.OwnerID, string(doc), secret, encodeStatus(c.Status), c.CreatedAt, c.UpdatedAt)
		return err
	}
	_, err = tx.SQL().Exec(ctx, "UPDATE "+sc.table+" SET doc = $1, secret = $2, status = $3, updated_at = $4 WHERE id = $5",
		string(doc), secret, encodeStatus(c.Status), c.UpdatedAt, c.ID)
	return err
}

// setStatus records a connection status on a config.
func setStatus(ctx context.Context, tx store.Tx, sc scope, id string, st Status) error {
	_, err := tx.SQL().Exec(ctx, "UPDATE "+sc.table+" SET status = $1 WHERE id = $2", encodeStatus(st), id)
	return err
}

// Members of user and team config bodies.
var (
	userMembers  = []string{"serviceName", "userAuthConfig"}
	teamMembers  = []string{"serviceName", "teamId", "userAuthConfig"}
	credReadOnly = []string{"id", "serviceId", "userId", "connectionStatus", "createdAt", "updatedAt", "updatedBy"}
	userReadOnly = append([]string{"teamId"}, credReadOnly...)
	teamReadOnly = credReadOnly
)

// parseCred reads the userAuthConfig of a user or team config body against the
// service's admin config: the same auth type, and no field the admin did not make
// configurable. prev is the stored config it replaces (its masked secrets are
// restored before validation). Errors: EInvalid.
func parseCred(body map[string]any, admin adminConfig, prev *credConfig) (authConfig, error) {
	raw, ok := body["userAuthConfig"]
	if !ok || raw == nil {
		if prev != nil {
			return prev.Auth, nil
		}
		return authConfig{}, meridian.Errorf(meridian.EInvalid, "userAuthConfig is required")
	}
	var pa *authConfig
	if prev != nil {
		pa = &prev.Auth
	}
	m, isObj := raw.(map[string]any)
	if isObj {
		if _, has := m["authType"]; !has {
			m = cloneMap(m)
			m["authType"] = admin.Auth.Type
		}
		raw = m
	}
	a, err := parseAuthConfig("userAuthConfig", raw, ownerUser, pa)
	if err != nil {
		return a, err
	}
	if a.Type != admin.Auth.Type {
		return a, meridian.Errorf(meridian.EInvalid, "userAuthConfig.authType must be %s, the auth type of service %s", admin.Auth.Type, admin.ServiceName)
	}
	for _, f := range ConfigurableFields {
		if _, set := a.Plain[f]; set && !admin.configurable(f) {
			allowed := strings.Join(admin.UserConfigurable, ", ")
			if allowed == "" {
				allowed = "none"
			}
			return a, meridian.Errorf(meridian.EInvalid, "userAuthConfig.%s is not user-configurable on service %s (the admin allows: %s)", f, admin.ServiceName, allowed)
		}
	}
	return a, nil
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// activeAdmin reads the admin config of svc and checks that it is enabled. Errors:
// ENotFound (no config), EInvalid (disabled).
func (s *Service) activeAdmin(ctx context.Context, tx store.Tx, svc serviceRef) (adminConfig, error) {
	c, err := s.loadAdmin(ctx, tx, svc)
	if err != nil {
		return c, err
	}
	if !c.Enabled {
		return c, meridian.Errorf(meridian.EInvalid, "Query Runner is disabled for service %s: an admin enables it in the service's admin config", svc.Name)
	}
	return c, nil
}

// putCred creates (when missing and create is set) or updates the config of
// ownerID on the service body names, and reports whether it was created.
// The owner's id is read after authorize ran (a team's id is known once the team is
// read in the transaction).
func (s *Service) putCred(ctx context.Context, p *meridian.Principal, sc scope, service string, owner func() string, body map[string]any, create bool,
	authorize func(tx store.Tx) error) (map[string]any, bool, error) {
	var (
		view    map[string]any
		created bool
	)
	err := s.inTx(ctx, true, func(tx store.Tx) error {
		if authorize != nil {
			if err := authorize(tx); err != nil {
				return err
			}
		}
		ownerID := owner()
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		if name, ok, err := stringField(body, "serviceName"); err != nil {
			return err
		} else if ok && strings.TrimSpace(name) != svc.Name {
			return meridian.Errorf(meridian.EInvalid, "serviceName %q does not match the service %q the request names", clip(name), svc.Name)
		}
		admin, err := s.activeAdmin(ctx, tx, svc)
		if err != nil {
			return err
		}
		prev, err := s.loadCred(ctx, tx, sc, svc, ownerID)
		var prevp *credConfig
		switch meridian.ErrorCode(err) {
		case "":
			prevp = &prev
		case meridian.ENotFound:
			if !create {
				return err
			}
		default:
			return err
		}
		a, err := parseCred(body, admin, prevp)
		if err != nil {
			return err
		}
		now := s.millis()
		c := credConfig{ServiceID: svc.ID, ServiceName: svc.Name, OwnerID: ownerID, Auth: a, UpdatedAt: now, UpdatedBy: p.Name,
			Status: Status{Status: StatusUntested, UpdatedAt: now}}
		if prevp != nil {
			c.ID, c.CreatedAt = prev.ID, prev.CreatedAt
		} else {
			c.ID, c.CreatedAt, created = uuid.NewString(), now, true
		}
		if err := s.saveCred(ctx, tx, sc, c, created); err != nil {
			return err
		}
		view = c.view(sc)
		return nil
	})
	return view, created, err
}

// --- User configs ---------------------------------------------------------------------

// UserConfigByID returns the caller's own user config with that id; another user's is
// answered as not found (release 2.0.2 answers it: Meridian does not). Errors:
// EUnauthorized, EForbidden (no user), EInvalid (not a UUID), ENotFound.
func (s *Service) UserConfigByID(ctx context.Context, p *meridian.Principal, id string) (map[string]any, error) {
	if err := caller(p); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(id); err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid userConfigId %s: must be a UUID", clip(id))
	}
	var view map[string]any
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		c, err := s.loadCredByID(ctx, tx, userScope, id)
		if err != nil {
			return err
		}
		if c.OwnerID != p.ID {
			return meridian.NotFound(userScope.noun, id)
		}
		view = c.view(userScope)
		return nil
	})
	return view, err
}

// ServiceEntry is a service the caller may run queries on, with the caller's own
// config of it (nil when they have none).
type ServiceEntry struct {
	ServiceName            string         `json:"serviceName"`
	ServiceType            string         `json:"serviceType"`
	AuthType               string         `json:"authType"`
	UserConfigurableFields []string       `json:"userConfigurableFields"`
	AllowAdminCredentials  bool           `json:"allowAdminCredentials"`
	Status                 string         `json:"status"`
	UserConfig             map[string]any `json:"userConfig"`
}

// StatusNotConfigured is the status of a service entry whose caller has no config.
const StatusNotConfigured = "NotConfigured"

func (s *Service) entry(admin adminConfig, c *credConfig) ServiceEntry {
	e := ServiceEntry{ServiceName: admin.ServiceName, ServiceType: admin.ServiceType, AuthType: admin.Auth.Type,
		UserConfigurableFields: nonNil(admin.UserConfigurable), AllowAdminCredentials: admin.AllowAdminCredentials, Status: StatusNotConfigured}
	if c != nil {
		e.UserConfig, e.Status = c.view(userScope), c.Status.Status
	}
	return e
}

// UserServiceConfig returns the caller's entry for one service: the service's Query
// Runner settings, the caller's config (nil when none) and its status. Errors:
// EUnauthorized, EForbidden, EInvalid (bad name, or Query Runner disabled), ENotFound
// (no service, or no admin config).
func (s *Service) UserServiceConfig(ctx context.Context, p *meridian.Principal, service string) (ServiceEntry, error) {
	if err := caller(p); err != nil {
		return ServiceEntry{}, err
	}
	var e ServiceEntry
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		admin, err := s.activeAdmin(ctx, tx, svc)
		if err != nil {
			return err
		}
		c, err := s.loadCred(ctx, tx, userScope, svc, p.ID)
		switch meridian.ErrorCode(err) {
		case "":
			e = s.entry(admin, &c)
		case meridian.ENotFound:
			e = s.entry(admin, nil)
		default:
			return err
		}
		return nil
	})
	return e, err
}

// UserServices lists the services the caller may view whose admin config is enabled
// (at most 1000), each with the caller's config or nil; disabled services are left
// out. Errors: EUnauthorized, EForbidden.
func (s *Service) UserServices(ctx context.Context, p *meridian.Principal) ([]ServiceEntry, error) {
	if err := caller(p); err != nil {
		return nil, err
	}
	out := []ServiceEntry{}
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		rows, err := tx.SQL().Query(ctx, "SELECT service_id FROM qr_admin_configs WHERE enabled = 1 ORDER BY service_id LIMIT $1", listCap)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			row, _, err := s.ents.Load(ctx, tx, p, store.OpView, kindDatabaseService, store.ByID(id), store.IncludeNonDeleted)
			switch meridian.ErrorCode(err) {
			case "":
			case meridian.ENotFound, meridian.EForbidden:
				continue
			default:
				return err
			}
			svc := serviceRef{ID: row.ID, Name: row.FQN}
			admin, err := s.loadAdmin(ctx, tx, svc)
			if err != nil {
				return err
			}
			c, err := s.loadCred(ctx, tx, userScope, svc, p.ID)
			switch meridian.ErrorCode(err) {
			case "":
				out = append(out, s.entry(admin, &c))
			case meridian.ENotFound:
				out = append(out, s.entry(admin, nil))
			default:
				return err
			}
		}
		return nil
	})
	return out, err
}

// PutUserConfig creates (when create is set and it is missing) or updates the
// caller's config of a service. The service's admin config must be enabled; the
// userAuthConfig has the admin's auth type and only fields the admin made
// configurable; masked secrets keep the stored ones. A saved config is Untested until
// its connection is tested. It reports whether the config was created. Errors:
// EUnauthorized, EForbidden, EInvalid, ENotFound (no service, no admin config, or on
// update no config).
func (s *Service) PutUserConfig(ctx context.Context, p *meridian.Principal, service string, body map[string]any, create bool) (map[string]any, bool, error) {
	if err := caller(p); err != nil {
		return nil, false, err
	}
	if err := checkMembers("A user config", body, userMembers, userReadOnly); err != nil {
		return nil, false, err
	}
	if service == "" {
		name, _, err := stringField(body, "serviceName")
		if err != nil {
			return nil, false, err
		}
		service = name
	}
	return s.putCred(ctx, p, userScope, service, func() string { return p.ID }, body, create, nil)
}

// DeleteUserConfig deletes the caller's config of a service. Errors: EUnauthorized,
// EForbidden, EInvalid, ENotFound.
func (s *Service) DeleteUserConfig(ctx context.Context, p *meridian.Principal, service string) error {
	if err := caller(p); err != nil {
		return err
	}
	return s.inTx(ctx, true, func(tx store.Tx) error {
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		n, err := tx.SQL().Exec(ctx, "DELETE FROM qr_user_configs WHERE service_id = $1 AND user_id = $2", svc.ID, p.ID)
		if err == nil && n == 0 {
			err = meridian.Errorf(meridian.ENotFound, "userConfig instance for service %s not found", svc.Name)
		}
		return err
	})
}
