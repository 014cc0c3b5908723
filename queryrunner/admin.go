package queryrunner

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/store"
)

// adminConfig is a database service's admin config.
type adminConfig struct {
	ID                    string
	ServiceID             string
	ServiceName           string
	ServiceType           string
	Auth                  authConfig
	MaxResultSize         int
	Enabled               bool
	UserConfigurable      []string
	AllowAdminCredentials bool
	HostPort              string
	Options               map[string]string
	CreatedAt, UpdatedAt  int64
	UpdatedBy             string
}

// adminDoc is what the doc column holds of an admin config (no secret).
type adminDoc struct {
	ServiceType           string            `json:"serviceType"`
	AuthConfig            map[string]any    `json:"authConfig"`
	MaxResultSize         int               `json:"maxResultSize"`
	UserConfigurable      []string          `json:"userConfigurableFields"`
	AllowAdminCredentials bool              `json:"allowAdminCredentials"`
	HostPort              string            `json:"hostPort,omitempty"`
	Options               map[string]string `json:"connectionOptions,omitempty"`
	UpdatedBy             string            `json:"updatedBy"`
}

// View is the admin config as answered: secrets masked.
func (c adminConfig) View() map[string]any {
	v := map[string]any{
		"id":                     c.ID,
		"serviceId":              c.ServiceID,
		"serviceName":            c.ServiceName,
		"serviceType":            c.ServiceType,
		"authConfig":             c.Auth.view(),
		"querySettings":          map[string]any{"maxResultSize": c.MaxResultSize},
		"enabled":                c.Enabled,
		"userConfigurableFields": nonNil(c.UserConfigurable),
		"allowAdminCredentials":  c.AllowAdminCredentials,
		"createdAt":              c.CreatedAt,
		"updatedAt":              c.UpdatedAt,
		"updatedBy":              c.UpdatedBy,
	}
	if c.HostPort != "" {
		v["hostPort"] = c.HostPort
	}
	if len(c.Options) > 0 {
		v["connectionOptions"] = c.Options
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// configurable reports whether the admin lets users set field.
func (c adminConfig) configurable(field string) bool {
	return slices.Contains(c.UserConfigurable, field)
}

// Members of an admin config body.
var (
	adminMembers = []string{"serviceName", "serviceType", "authConfig", "querySettings", "enabled",
		"userConfigurableFields", "allowAdminCredentials", "hostPort", "connectionOptions"}
	adminReadOnly = []string{"id", "serviceId", "createdAt", "updatedAt", "updatedBy", "configured", "status"}
)

// parseAdmin reads an admin config body for svc. prev is the stored config a PUT
// updates (nil on create): members the body leaves out keep prev's values, and
// secrets sent back masked keep prev's secrets. Errors: EInvalid naming the member.
func parseAdmin(body map[string]any, svc serviceRef, prev *adminConfig) (adminConfig, error) {
	if err := checkMembers("An admin config", body, adminMembers, adminReadOnly); err != nil {
		return adminConfig{}, err
	}
	var c adminConfig
	if prev != nil {
		c = *prev
	} else {
		c = adminConfig{MaxResultSize: DefaultMaxResultSize}
	}
	c.ServiceID, c.ServiceName = svc.ID, svc.Name
	if name, ok, err := stringField(body, "serviceName"); err != nil {
		return c, err
	} else if ok && strings.TrimSpace(name) != svc.Name {
		return c, meridian.Errorf(meridian.EInvalid, "serviceName %q does not match the service %q the request names", clip(name), svc.Name)
	}
	if t, ok, err := stringField(body, "serviceType"); err != nil {
		return c, err
	} else if ok {
		c.ServiceType = strings.TrimSpace(t)
	}
	if c.ServiceType == "" {
		return c, meridian.Errorf(meridian.EInvalid, "serviceType is required (one of %s)", strings.Join(engine.Types(), ", "))
	}
	if _, known := engine.Lookup(c.ServiceType); !known {
		return c, meridian.Errorf(meridian.EInvalid, "serviceType %q is not a Query Runner engine (one of %s)", clip(c.ServiceType), strings.Join(engine.Types(), ", "))
	}
	if v, ok := body["authConfig"]; ok && v != nil {
		a, err := parseAuthConfig("authConfig", v, ownerAdmin, prevAuth(prev))
		if err != nil {
			return c, err
		}
		c.Auth = a
	} else if prev == nil {
		return c, meridian.Errorf(meridian.EInvalid, "authConfig is required")
	}
	if v, ok := body["querySettings"]; ok && v != nil {
		n, err := parseQuerySettings(v)
		if err != nil {
			return c, err
		}
		c.MaxResultSize = n
	}
	if b, ok, err := boolField(body, "enabled"); err != nil {
		return c, err
	} else if ok {
		c.Enabled = b
	}
	if b, ok, err := boolField(body, "allowAdminCredentials"); err != nil {
		return c, err
	} else if ok {
		c.AllowAdminCredentials = b
	}
	if v, ok := body["userConfigurableFields"]; ok {
		fields, err := parseConfigurable(v)
		if err != nil {
			return c, err
		}
		c.UserConfigurable = fields
	}
	if hp, ok, err := stringField(body, "hostPort"); err != nil {
		return c, err
	} else if ok {
		if c.HostPort, err = checkHostPort("hostPort", hp); err != nil {
			return c, err
		}
	}
	if v, ok := body["connectionOptions"]; ok {
		opts, err := parseOptions(v)
		if err != nil {
			return c, err
		}
		c.Options = opts
	}
	return c, nil
}

func prevAuth(prev *adminConfig) *authConfig {
	if prev == nil {
		return nil
	}
	return &prev.Auth
}

// parseQuerySettings reads {maxResultSize}: an integer from 1 to MaxMaxResultSize.
func parseQuerySettings(v any) (int, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return 0, meridian.Errorf(meridian.EInvalid, "querySettings must be an object {maxResultSize}")
	}
	for k := range m {
		if k != "maxResultSize" {
			return 0, meridian.Errorf(meridian.EInvalid, "querySettings has no member %q (allowed: maxResultSize)", clip(k))
		}
	}
	raw, ok := m["maxResultSize"]
	if !ok || raw == nil {
		return DefaultMaxResultSize, nil
	}
	f, isNum := raw.(float64)
	if !isNum || f != math.Trunc(f) || f < 1 || f > MaxMaxResultSize {
		return 0, meridian.Errorf(meridian.EInvalid, "querySettings.maxResultSize must be an integer from 1 to %d", MaxMaxResultSize)
	}
	return int(f), nil
}

// parseConfigurable reads userConfigurableFields: a subset of ConfigurableFields.
func parseConfigurable(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, meridian.Errorf(meridian.EInvalid, "userConfigurableFields must be an array of %s", strings.Join(ConfigurableFields, ", "))
	}
	var out []string
	for _, item := range list {
		s, _ := item.(string)
		if !slices.Contains(ConfigurableFields, s) {
			return nil, meridian.Errorf(meridian.EInvalid, "userConfigurableFields may hold only %s", strings.Join(ConfigurableFields, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkHostPort validates host[:port] ("" clears it; without a port the engine's
// default port is used).
func checkHostPort(field, hp string) (string, error) {
	hp = strings.TrimSpace(hp)
	if hp == "" {
		return "", nil
	}
	if _, _, err := splitHostPort(hp); err != nil || len(hp) > maxNameLen {
		return "", meridian.Errorf(meridian.EInvalid, "%s must be host or host:port with a port from 1 to 65535", field)
	}
	return hp, nil
}

// splitHostPort splits host[:port]; port 0 means the engine's default.
func splitHostPort(hp string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(hp)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			host, portStr = strings.Trim(hp, "[]"), ""
		} else {
			return "", 0, err
		}
	}
	port := 0
	if portStr != "" {
		n, perr := strconv.Atoi(portStr)
		if perr != nil || n < 1 || n > 65535 {
			return "", 0, strconv.ErrRange
		}
		port = n
	}
	if host == "" || strings.ContainsAny(host, "/@?# \\") {
		return "", 0, strconv.ErrSyntax
	}
	return host, port, nil
}

// parseOptions reads connectionOptions: an object of strings (sslmode, …), never
// secrets.
func parseOptions(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, meridian.Errorf(meridian.EInvalid, "connectionOptions must be an object of strings")
	}
	if len(m) > maxOptions {
		return nil, meridian.Errorf(meridian.EInvalid, "connectionOptions holds more than %d members", maxOptions)
	}
	out := map[string]string{}
	for k, x := range m {
		s, isStr := x.(string)
		if !isStr || len(k) > 64 || len(s) > maxNameLen || k == "" {
			return nil, meridian.Errorf(meridian.EInvalid, "connectionOptions members must be strings (names up to 64 bytes, values up to %d)", maxNameLen)
		}
		if namesSecret(k) {
			return nil, meridian.Errorf(meridian.EInvalid, "connectionOptions.%s looks like a secret: credentials go in authConfig", clip(k))
		}
		out[k] = s
	}
	return out, nil
}

// namesSecret reports whether an option name names a credential.
func namesSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"password", "passwd", "pwd", "secret", "token", "key", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

const adminColumns = "service_id, id, enabled, doc, secret, created_at, updated_at"

// scanAdmin reads an admin config row, opening its secrets; name is the service's.
func (s *Service) scanAdmin(sc store.Scanner, name string) (adminConfig, error) {
	var (
		c           adminConfig
		enabled     int64
		doc, secret string
		d           adminDoc
	)
	if err := sc.Scan(&c.ServiceID, &c.ID, &enabled, &doc, &secret, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return c, err
	}
	secrets, err := openSecrets(s.sealer, secret)
	if err != nil {
		return c, err
	}
	c.Enabled = enabled != 0
	c.ServiceName = name
	c.ServiceType, c.MaxResultSize, c.UserConfigurable = d.ServiceType, d.MaxResultSize, d.UserConfigurable
	c.AllowAdminCredentials, c.HostPort, c.Options, c.UpdatedBy = d.AllowAdminCredentials, d.HostPort, d.Options, d.UpdatedBy
	c.Auth = decodeAuth(d.AuthConfig, secrets)
	if c.MaxResultSize <= 0 {
		c.MaxResultSize = DefaultMaxResultSize
	}
	return c, nil
}

// loadAdmin reads, in tx, the admin config of svc. Errors: ENotFound.
func (s *Service) loadAdmin(ctx context.Context, tx store.Tx, svc serviceRef) (adminConfig, error) {
	c, err := s.scanAdmin(tx.SQL().QueryRow(ctx, "SELECT "+adminColumns+" FROM qr_admin_configs WHERE service_id = $1", svc.ID), svc.Name)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return c, meridian.Errorf(meridian.ENotFound, "Query Runner is not configured for service %s: an admin creates its config first", svc.Name)
	}
	return c, err
}

// saveAdmin writes c, inserting it when insert is set.
func (s *Service) saveAdmin(ctx context.Context, tx store.Tx, c adminConfig, insert bool) error {
	doc, err := json.Marshal(adminDoc{ServiceType: c.ServiceType, AuthConfig: c.Auth.plainJSON(), MaxResultSize: c.MaxResultSize,
		UserConfigurable: nonNil(c.UserConfigurable), AllowAdminCredentials: c.AllowAdminCredentials, HostPort: c.HostPort,
		Options: c.Options, UpdatedBy: c.UpdatedBy})
	if err != nil {
		return err
	}
	secret, err := sealSecrets(s.sealer, c.Auth.Secrets)
	if err != nil {
		return err
	}
	enabled := 0
	if c.Enabled {
		enabled = 1
	}
	if insert {
		_, err = tx.SQL().Exec(ctx, `INSERT INTO qr_admin_configs (service_id, id, enabled, doc, secret, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.ServiceID, c.ID, enabled, string(doc), secret, c.CreatedAt, c.UpdatedAt)
		return err
	}
	_, err = tx.SQL().Exec(ctx, "UPDATE qr_admin_configs SET enabled = $1, doc = $2, secret = $3, updated_at = $4 WHERE service_id = $5",
		enabled, string(doc), secret, c.UpdatedAt, c.ServiceID)
	return err
}

// TestConfigAPI is the health check of the config API: the module's tables answer.
// Admins only. Errors: EUnauthorized, EForbidden, EUnavailable.
func (s *Service) TestConfigAPI(ctx context.Context, p *meridian.Principal) (map[string]any, error) {
	if err := requireAdmin(p, "ViewQueryRunnerConfigs"); err != nil {
		return nil, err
	}
	var n int64
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		return tx.SQL().QueryRow(ctx, "SELECT COUNT(*) FROM qr_admin_configs").Scan(&n)
	})
	if err != nil {
		s.log.Error("query runner config store unreachable", "err", err)
		return nil, meridian.Errorf(meridian.EUnavailable, "Query Runner config storage is not reachable")
	}
	return map[string]any{"status": "healthy", "adminConfigs": n, "engines": engine.Types()}, nil
}

// Defaults answers the platform default row cap (QuerySettings). Admins only.
// Errors: EUnauthorized, EForbidden.
func (s *Service) Defaults(p *meridian.Principal) (map[string]any, error) {
	if err := requireAdmin(p, "ViewQueryRunnerConfigs"); err != nil {
		return nil, err
	}
	return map[string]any{"maxResultSize": DefaultMaxResultSize}, nil
}

// ServiceStatus is one database service of the admin list with its config status.
type ServiceStatus struct {
	ServiceID   string         `json:"serviceId"`
	ServiceName string         `json:"serviceName"`
	Configured  bool           `json:"configured"`
	Enabled     bool           `json:"enabled"`
	ServiceType string         `json:"serviceType,omitempty"`
	Config      map[string]any `json:"config"`
}

// AdminPage is one page of the admin list.
type AdminPage struct {
	Data   []ServiceStatus
	Before string
	After  string
	Total  int
}

// AdminConfigs lists one page of the database services (o pages them as the entity
// list does), each with its config status and its masked admin config (nil when it
// has none). Admins only. Errors: EUnauthorized, EForbidden, EInvalid (bad paging).
func (s *Service) AdminConfigs(ctx context.Context, p *meridian.Principal, o store.ListOptions) (AdminPage, error) {
	if err := requireAdmin(p, "ViewQueryRunnerConfigs"); err != nil {
		return AdminPage{}, err
	}
	o.Fields = ""
	page, err := s.ents.List(ctx, p, kindDatabaseService, o)
	if err != nil {
		return AdminPage{}, err
	}
	out := AdminPage{Data: []ServiceStatus{}, Before: page.Before, After: page.After, Total: page.Total}
	err = s.inTx(ctx, false, func(tx store.Tx) error {
		for _, e := range page.Data {
			st := ServiceStatus{ServiceID: e.ID(), ServiceName: e.FQN()}
			c, err := s.loadAdmin(ctx, tx, serviceRef{ID: e.ID(), Name: e.FQN()})
			switch meridian.ErrorCode(err) {
			case "":
				st.Configured, st.Enabled, st.ServiceType, st.Config = true, c.Enabled, c.ServiceType, c.View()
			case meridian.ENotFound:
			default:
				return err
			}
			out.Data = append(out.Data, st)
		}
		return nil
	})
	return out, err
}

// AdminConfig returns the masked admin config of a service. Admins only. Errors:
// EUnauthorized, EForbidden, EInvalid, ENotFound (no service, or no config).
func (s *Service) AdminConfig(ctx context.Context, p *meridian.Principal, service string) (map[string]any, error) {
	if err := requireAdmin(p, "ViewQueryRunnerConfigs"); err != nil {
		return nil, err
	}
	var view map[string]any
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		c, err := s.loadAdmin(ctx, tx, svc)
		view = c.View()
		return err
	})
	return view, err
}

// CreateAdminConfig creates the admin config of the service body.serviceName names.
// Admins only. Errors: EUnauthorized, EForbidden, EInvalid, ENotFound (no such
// service), EConflict (the service has a config: PUT updates it).
func (s *Service) CreateAdminConfig(ctx context.Context, p *meridian.Principal, body map[string]any) (map[string]any, error) {
	if err := requireAdmin(p, "CreateQueryRunnerConfig"); err != nil {
		return nil, err
	}
	name, _, err := stringField(body, "serviceName")
	if err != nil {
		return nil, err
	}
	view, created, err := s.putAdmin(ctx, p, name, body, false)
	if err == nil && !created {
		err = meridian.Errorf(meridian.EInternal, "admin config not created")
	}
	return view, err
}

// PutAdminConfig creates or updates the admin config of a service. Members the body
// leaves out keep their values; masked secrets keep the stored ones. When the
// credentials change, every user and team config of the service is marked
// RevalidationRequired. It reports whether the config was created. Admins only.
// Errors: EUnauthorized, EForbidden, EInvalid, ENotFound (no such service).
func (s *Service) PutAdminConfig(ctx context.Context, p *meridian.Principal, service string, body map[string]any) (map[string]any, bool, error) {
	if err := requireAdmin(p, "EditQueryRunnerConfig"); err != nil {
		return nil, false, err
	}
	return s.putAdmin(ctx, p, service, body, true)
}

func (s *Service) putAdmin(ctx context.Context, p *meridian.Principal, service string, body map[string]any, update bool) (map[string]any, bool, error) {
	var (
		view    map[string]any
		created bool
	)
	err := s.inTx(ctx, true, func(tx store.Tx) error {
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		prev, err := s.loadAdmin(ctx, tx, svc)
		var prevp *adminConfig
		switch meridian.ErrorCode(err) {
		case "":
			if !update {
				return meridian.Errorf(meridian.EConflict, "Service %s already has a Query Runner config: PUT /v1/queryRunner/configs?service=%s updates it", svc.Name, svc.Name)
			}
			prevp = &prev
		case meridian.ENotFound:
		default:
			return err
		}
		c, err := parseAdmin(body, svc, prevp)
		if err != nil {
			return err
		}
		now := s.millis()
		c.UpdatedAt, c.UpdatedBy = now, p.Name
		if prevp == nil {
			c.ID, c.CreatedAt, created = uuid.NewString(), now, true
		}
		if err := s.saveAdmin(ctx, tx, c, created); err != nil {
			return err
		}
		if prevp != nil && (credentialsDiffer(prev.Auth, c.Auth) || prev.ServiceType != c.ServiceType || prev.HostPort != c.HostPort) {
			st := encodeStatus(Status{Status: StatusRevalidationRequired, UpdatedAt: now,
				Message: "The service's admin credentials changed: test the connection again"})
			for _, table := range []string{"qr_user_configs", "qr_team_configs"} {
				if _, err := tx.SQL().Exec(ctx, "UPDATE "+table+" SET status = $1 WHERE service_id = $2", st, c.ServiceID); err != nil {
					return err
				}
			}
		}
		view = c.View()
		return nil
	})
	return view, created, err
}

// DeleteResult counts what an admin config delete removed.
type DeleteResult struct {
	ServiceName        string `json:"serviceName"`
	DeletedUserConfigs int64  `json:"deletedUserConfigs"`
	DeletedTeamConfigs int64  `json:"deletedTeamConfigs"`
}

// DeleteAdminConfig deletes the admin config of a service and, in the same
// transaction, every user config, team config and stored secret of the service.
// Admins only. Errors: EUnauthorized, EForbidden, EInvalid, ENotFound.
func (s *Service) DeleteAdminConfig(ctx context.Context, p *meridian.Principal, service string) (DeleteResult, error) {
	if err := requireAdmin(p, "DeleteQueryRunnerConfig"); err != nil {
		return DeleteResult{}, err
	}
	var res DeleteResult
	err := s.inTx(ctx, true, func(tx store.Tx) error {
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		res.ServiceName = svc.Name
		n, err := tx.SQL().Exec(ctx, "DELETE FROM qr_admin_configs WHERE service_id = $1", svc.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			return meridian.Errorf(meridian.ENotFound, "Query Runner is not configured for service %s", svc.Name)
		}
		if res.DeletedUserConfigs, err = tx.SQL().Exec(ctx, "DELETE FROM qr_user_configs WHERE service_id = $1", svc.ID); err != nil {
			return err
		}
		res.DeletedTeamConfigs, err = tx.SQL().Exec(ctx, "DELETE FROM qr_team_configs WHERE service_id = $1", svc.ID)
		return err
	})
	return res, err
}
