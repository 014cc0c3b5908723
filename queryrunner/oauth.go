package queryrunner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// tokenSlack is how long before its expiry an access token counts as stale.
const tokenSlack = 30 * time.Second

// tokenStale reports whether an OAuth config has no access token, or one that
// expires within tokenSlack.
func (s *Service) tokenStale(a authConfig) bool {
	if a.Secrets["accessToken"] == "" {
		return true
	}
	exp, _ := a.Plain["tokenExpiresAt"].(float64)
	if n, ok := a.Plain["tokenExpiresAt"].(int64); ok {
		exp = float64(n)
	}
	return exp > 0 && int64(exp) < s.now().Add(tokenSlack).UnixMilli()
}

// fetchToken asks the admin's OAuth client's token endpoint for an access token for
// creds: with creds' refresh token, or, for the admin's own credentials without one,
// with the client credentials grant. The endpoint's answer is never echoed: only its
// OAuth error code. Errors: EInvalid (no refresh token; the endpoint refused),
// EUnavailable (the endpoint cannot be reached or answered badly).
func (s *Service) fetchToken(ctx context.Context, admin adminConfig, creds authConfig, isAdmin bool) (*oauth2.Token, error) {
	client := admin.Auth
	if client.Type != AuthOAuth {
		return nil, meridian.Errorf(meridian.EInvalid, "Service %s does not use OAuth", admin.ServiceName)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, s.http)
	var (
		tok *oauth2.Token
		err error
	)
	rt := creds.Secrets["refreshToken"]
	switch {
	case rt != "":
		cfg := &oauth2.Config{ClientID: client.str("clientId"), ClientSecret: client.Secrets["clientSecret"],
			Endpoint: oauth2.Endpoint{TokenURL: client.str("tokenUrl")}, Scopes: client.scopes()}
		tok, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	case isAdmin:
		cfg := &clientcredentials.Config{ClientID: client.str("clientId"), ClientSecret: client.Secrets["clientSecret"],
			TokenURL: client.str("tokenUrl"), Scopes: client.scopes()}
		tok, err = cfg.Token(ctx)
	default:
		return nil, meridian.Errorf(meridian.EInvalid, "The OAuth config for service %s has no refreshToken: its access token cannot be refreshed; send a new one", admin.ServiceName)
	}
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			code := re.ErrorCode
			if code == "" {
				code = "HTTP " + strings.TrimSpace(strings.SplitN(re.Response.Status, " ", 2)[0])
			}
			return nil, meridian.Errorf(meridian.EInvalid, "The OAuth token endpoint of service %s refused the refresh (%s)", admin.ServiceName, clip(code))
		}
		s.log.Warn("oauth token endpoint unreachable", "service", admin.ServiceName, "err", err.Error())
		return nil, meridian.Errorf(meridian.EUnavailable, "The OAuth token endpoint of service %s cannot be reached or answered badly", admin.ServiceName)
	}
	if tok.AccessToken == "" || len(tok.AccessToken) > maxSecretLen || len(tok.RefreshToken) > maxSecretLen {
		return nil, meridian.Errorf(meridian.EUnavailable, "The OAuth token endpoint of service %s answered no usable access token", admin.ServiceName)
	}
	return tok, nil
}

// withToken returns a with the token's access token, expiry and (when the endpoint
// rotated it) refresh token.
func withToken(a authConfig, tok *oauth2.Token) authConfig {
	out := authConfig{Type: a.Type, Plain: map[string]any{}, Secrets: map[string]string{}}
	for k, v := range a.Plain {
		out.Plain[k] = v
	}
	for k, v := range a.Secrets {
		out.Secrets[k] = v
	}
	out.Secrets["accessToken"] = tok.AccessToken
	if tok.RefreshToken != "" {
		out.Secrets["refreshToken"] = tok.RefreshToken
	}
	delete(out.Plain, "tokenExpiresAt")
	if !tok.Expiry.IsZero() {
		out.Plain["tokenExpiresAt"] = float64(tok.Expiry.UnixMilli())
	}
	return out
}

// refresh gets a new access token for a picked layer and stores it (sealed) in the
// layer's config. Errors: those of fetchToken, and ENotFound when the config went
// away meanwhile.
func (s *Service) refresh(ctx context.Context, admin adminConfig, lc layerConfig) (authConfig, error) {
	tok, err := s.fetchToken(ctx, admin, lc.auth, lc.layer == LayerAdmin)
	if err != nil {
		return authConfig{}, err
	}
	var out authConfig
	err = s.inTx(ctx, true, func(tx store.Tx) error {
		if lc.layer == LayerAdmin {
			c, err := s.scanAdmin(tx.SQL().QueryRow(ctx, "SELECT "+adminColumns+" FROM qr_admin_configs WHERE id = $1", lc.id), admin.ServiceName)
			if err != nil {
				return err
			}
			c.Auth = withToken(c.Auth, tok)
			out = c.Auth
			return s.saveAdmin(ctx, tx, c, false)
		}
		c, err := s.loadCredByID(ctx, tx, lc.scope, lc.id)
		if err != nil {
			return err
		}
		c.Auth = withToken(c.Auth, tok)
		out = c.Auth
		secret, err := sealSecrets(s.sealer, c.Auth.Secrets)
		if err != nil {
			return err
		}
		doc, err := credDocJSON(c)
		if err != nil {
			return err
		}
		_, err = tx.SQL().Exec(ctx, "UPDATE "+lc.scope.table+" SET doc = $1, secret = $2, updated_at = $3 WHERE id = $4", doc, secret, s.millis(), c.ID)
		return err
	})
	return out, err
}

// RefreshToken forces an OAuth token refresh of the caller's config of a service (or,
// with team, of that team's config, which needs the team's owner or an admin) and
// returns the masked config with its new expiry. A Basic config has no token:
// EInvalid says so. Errors: EUnauthorized, EForbidden, EInvalid, ENotFound,
// EUnavailable (the token endpoint cannot be reached).
func (s *Service) RefreshToken(ctx context.Context, p *meridian.Principal, service, team string) (map[string]any, error) {
	if err := caller(p); err != nil {
		return nil, err
	}
	var (
		admin adminConfig
		c     credConfig
		sc    = userScope
	)
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		owner := p.ID
		if strings.TrimSpace(team) != "" {
			t, err := s.managedTeam(ctx, tx, p, team)
			if err != nil {
				return err
			}
			owner, sc = t.ID, teamScope
		}
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		if admin, err = s.activeAdmin(ctx, tx, svc); err != nil {
			return err
		}
		c, err = s.loadCred(ctx, tx, sc, svc, owner)
		return err
	})
	if err != nil {
		return nil, err
	}
	if c.Auth.Type != AuthOAuth {
		return nil, meridian.Errorf(meridian.EInvalid, "The %s for service %s uses %s authentication (username and password): only OAuth configs have a token to refresh", sc.noun, c.ServiceName, c.Auth.Type)
	}
	layer := LayerUser
	if sc == teamScope {
		layer = LayerTeam
	}
	a, err := s.refresh(ctx, admin, layerConfig{layer: layer, scope: sc, id: c.ID, auth: c.Auth})
	if err != nil {
		return nil, err
	}
	c.Auth = a
	return c.view(sc), nil
}

func credDocJSON(c credConfig) (string, error) {
	b, err := json.Marshal(credDoc{AuthConfig: c.Auth.plainJSON(), UpdatedBy: c.UpdatedBy})
	return string(b), err
}
