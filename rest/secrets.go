package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/store"
)

// secretsRoutes serve a bot's secrets access: whether the bot receives secrets in
// plaintext. Granting it gives the bot's user the role auth.RoleSecretsReader, which the
// policy honours for bots only; only admins grant or revoke it.
func (s *server) secretsRoutes() []route {
	ok := obj{"200": resp("The bot's secrets access.", schemaRef("SecretsAccess"))}
	var rs []route
	for _, at := range []struct {
		path, suffix string
		param        obj
	}{
		{"/{id}", "", pathParamSpec("id", "The bot's id.", schemaRef("uuid"))},
		{"/name/{name}", "ByName", pathParamSpec("name", "The bot's name.", obj{"type": "string", "minLength": 1})},
	} {
		p := apiPrefix + "/v1/bots" + at.path + "/secretsAccess"
		params := []any{at.param}
		rs = append(rs,
			route{method: http.MethodGet, path: p, handler: s.h(s.getSecretsAccess), id: "getBotSecretsAccess" + at.suffix, tag: "security",
				summary: "Tell whether a bot receives secrets in plaintext", params: params, responses: responses(ok, 400, 403, 404)},
			route{method: http.MethodPut, path: p, handler: s.h(s.setSecretsAccess(true)), id: "grantBotSecretsAccess" + at.suffix, tag: "security",
				summary:     "Let a bot receive secrets in plaintext (admins only)",
				description: "Every other caller, admins included, sees secrets masked as *********.",
				params:      params, responses: responses(ok, 400, 403, 404)},
			route{method: http.MethodDelete, path: p, handler: s.h(s.setSecretsAccess(false)), id: "revokeBotSecretsAccess" + at.suffix, tag: "security",
				summary: "Stop a bot receiving secrets in plaintext (admins only)", params: params, responses: responses(ok, 400, 403, 404)})
	}
	return rs
}

// getSecretsAccess answers a bot's secrets access to anyone who may view the bot.
func (s *server) getSecretsAccess(w http.ResponseWriter, r *http.Request) error {
	bot, user, err := s.botUser(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, secretsAccess(bot, user))
	return nil
}

// setSecretsAccess grants (or revokes) a bot's secrets access. Admins only: EForbidden
// otherwise; ENotFound for an unknown bot.
func (s *server) setSecretsAccess(grant bool) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := principal(r)
		if !p.IsAdmin() {
			return meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [EditSecretsAccess] not allowed", p.Name)
		}
		bot, user, err := s.botUser(r)
		if err != nil {
			return err
		}
		res, err := s.ents.Edit(r.Context(), p, meridian.KindUser, store.ByID(user.ID()), "", func(u meridian.Entity) (meridian.Entity, error) {
			roles := make([]any, 0, len(UserRoles(u))+1)
			for _, role := range UserRoles(u) {
				if role != auth.RoleSecretsReader {
					roles = append(roles, role)
				}
			}
			if grant {
				roles = append(roles, auth.RoleSecretsReader)
			}
			u["roles"] = roles
			return u, nil
		})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, secretsAccess(bot, res.Entity))
		return nil
	}
}

// botUser reads the bot named by the path (by id or by name) and its user.
func (s *server) botUser(r *http.Request) (bot, user meridian.Entity, err error) {
	key := store.Key{}
	if chi.URLParam(r, "id") != "" {
		key.ID, err = uuidParam(r, "id")
	} else {
		key.FQN, err = pathParam(r, "name")
	}
	if err != nil {
		return nil, nil, err
	}
	p := principal(r)
	bot, err = s.ents.Get(r.Context(), p, "bot", key, store.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	ref, _ := bot["botUser"].(map[string]any)
	userID, _ := ref["id"].(string)
	if userID == "" {
		return nil, nil, meridian.Errorf(meridian.ENotFound, "bot %s has no bot user", bot.Name())
	}
	user, err = s.ents.Get(r.Context(), p, meridian.KindUser, store.ByID(userID), store.GetOptions{Fields: "roles"})
	return bot, user, err
}

func secretsAccess(bot, user meridian.Entity) map[string]any {
	granted := false
	for _, role := range UserRoles(user) {
		granted = granted || role == auth.RoleSecretsReader
	}
	return map[string]any{"bot": entityRef(bot, "bot"), "botUser": entityRef(user, meridian.KindUser), "secretsAccess": granted}
}

func entityRef(e meridian.Entity, kind string) map[string]any {
	return meridian.EntityRef{ID: e.ID(), Type: kind, Name: e.Name(), FullyQualifiedName: e.FQN()}.Map()
}
