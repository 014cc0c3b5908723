package queryrunner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// FuzzConfigBodies feeds arbitrary JSON to the parsers of admin, user and team config
// bodies and saved-query bodies: they never panic, every refusal is EInvalid, and an
// accepted config answers no secret in clear text and keeps its values within bounds.
func FuzzConfigBodies(f *testing.F) {
	for _, seed := range []string{
		`{"serviceName":"svc","serviceType":"Postgres","authConfig":{"username":"u","password":"p"},"enabled":true}`,
		`{"serviceName":"svc","serviceType":"Mysql","authConfig":{"authType":"OAuth","clientId":"c","clientSecret":"s","tokenUrl":"https://idp/t","scopes":"a b"},"userConfigurableFields":["role","database"]}`,
		`{"serviceType":"Redshift","hostPort":"[::1]:5439","connectionOptions":{"sslmode":"require"},"querySettings":{"maxResultSize":1e6}}`,
		`{"userAuthConfig":{"username":"u","password":"*********","database":"d"}}`,
		`{"name":"q","queryText":"SELECT 1","serviceName":"svc"}`,
		`{"authConfig":{"authType":7}}`, `{"authConfig":[]}`, `{"querySettings":{"maxResultSize":-1}}`, `{}`,
	} {
		f.Add(seed)
	}
	svc := serviceRef{ID: "00000000-0000-0000-0000-000000000001", Name: "svc"}
	prev := &authConfig{Type: AuthBasic, Plain: map[string]any{"username": "old"}, Secrets: map[string]string{"password": "stored-secret"}}
	f.Fuzz(func(t *testing.T, body string) {
		var m map[string]any
		if json.Unmarshal([]byte(body), &m) != nil || m == nil {
			return
		}
		check := func(err error) {
			if err != nil && meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("refusal with code %s: %v", meridian.ErrorCode(err), err)
			}
		}
		noSecret := func(a authConfig) {
			b, _ := json.Marshal(a.view())
			for k, s := range a.Secrets {
				if s == "" || len(s) > maxSecretLen {
					t.Fatalf("secret %s out of bounds", k)
				}
				if len(s) > 3 && strings.Contains(string(b), s) && !strings.Contains(store.Mask, s) {
					t.Fatalf("view shows secret %s: %s", k, b)
				}
			}
		}
		c, err := parseAdmin(m, svc, nil)
		check(err)
		if err == nil {
			noSecret(c.Auth)
			if c.MaxResultSize < 1 || c.MaxResultSize > MaxMaxResultSize {
				t.Fatalf("maxResultSize %d", c.MaxResultSize)
			}
		}
		if raw, ok := m["userAuthConfig"]; ok {
			a, err := parseAuthConfig("userAuthConfig", raw, ownerUser, prev)
			check(err)
			if err == nil {
				noSecret(a)
			}
		}
		_, _, err = savedFields(m, false)
		check(err)
	})
}
