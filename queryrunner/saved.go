package queryrunner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/queryrunner/sqlcheck"
	"github.com/meridian-catalog/meridian/store"
)

// Bounds of saved queries.
const (
	MaxQueryText      = 65536 // bytes of a saved query's queryText
	DefaultSavedLimit = 50
	MaxSavedLimit     = 100
	savedQueryNoun    = "savedQuery"
	savedQueryColumns = "id, owner_id, service_name, name, query_text, created_at, updated_at"
	triggerPath       = "/api/v1/platform/apps/queryRunner/trigger"
)

// SavedQuery is a user's saved query. Only its owner sees or changes it.
type SavedQuery struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	ServiceName string         `json:"serviceName"`
	QueryText   string         `json:"queryText"`
	Owner       map[string]any `json:"owner"`
	CreatedAt   int64          `json:"createdAt"`
	UpdatedAt   int64          `json:"updatedAt"`
	ownerID     string
}

func scanSaved(r store.Scanner) (SavedQuery, error) {
	var q SavedQuery
	err := r.Scan(&q.ID, &q.ownerID, &q.ServiceName, &q.Name, &q.QueryText, &q.CreatedAt, &q.UpdatedAt)
	return q, err
}

func (q *SavedQuery) ownedBy(p *meridian.Principal) {
	q.Owner = map[string]any{"id": q.ownerID, "type": meridian.KindUser, "name": p.Name}
}

// savedFields reads name and queryText of a body; required says both must be there.
func savedFields(body map[string]any, required bool) (name, text *string, err error) {
	if err := checkMembers("A saved query", body, []string{"serviceName", "name", "queryText"}, []string{"id", "owner", "createdAt", "updatedAt"}); err != nil {
		return nil, nil, err
	}
	if v, ok, err := stringField(body, "name"); err != nil {
		return nil, nil, err
	} else if ok {
		v = strings.TrimSpace(v)
		if v == "" || len(v) > maxNameLen || strings.ContainsAny(v, "\x00\r\n") || !utf8.ValidString(v) {
			return nil, nil, meridian.Errorf(meridian.EInvalid, "name must be 1 to %d bytes on one line", maxNameLen)
		}
		name = &v
	}
	if v, ok, err := stringField(body, "queryText"); err != nil {
		return nil, nil, err
	} else if ok {
		if strings.TrimSpace(v) == "" || len(v) > MaxQueryText || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return nil, nil, meridian.Errorf(meridian.EInvalid, "queryText must be 1 to %d bytes of text", MaxQueryText)
		}
		text = &v
	}
	if required && name == nil {
		return nil, nil, meridian.Errorf(meridian.EInvalid, "name is required")
	}
	if required && text == nil {
		return nil, nil, meridian.Errorf(meridian.EInvalid, "queryText is required")
	}
	return name, text, nil
}

// CreateSavedQuery saves a query of the caller (serviceName, name and queryText,
// all required; serviceName names an existing database service). Errors:
// EUnauthorized, EForbidden (no user), EInvalid, ENotFound (no such service).
func (s *Service) CreateSavedQuery(ctx context.Context, p *meridian.Principal, body map[string]any) (SavedQuery, error) {
	if err := caller(p); err != nil {
		return SavedQuery{}, err
	}
	name, text, err := savedFields(body, true)
	if err != nil {
		return SavedQuery{}, err
	}
	service, _, err := stringField(body, "serviceName")
	if err != nil {
		return SavedQuery{}, err
	}
	var q SavedQuery
	err = s.inTx(ctx, true, func(tx store.Tx) error {
		svc, err := s.service(ctx, tx, p, service)
		if err != nil {
			return err
		}
		now := s.millis()
		q = SavedQuery{ID: uuid.NewString(), Name: *name, ServiceName: svc.Name, QueryText: *text, CreatedAt: now, UpdatedAt: now, ownerID: p.ID}
		_, err = tx.SQL().Exec(ctx, "INSERT INTO qr_saved_queries ("+savedQueryColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7)",
			q.ID, q.ownerID, q.ServiceName, q.Name, q.QueryText, q.CreatedAt, q.UpdatedAt)
		return err
	})
	q.ownedBy(p)
	return q, err
}

// SavedPage is one page of the caller's saved queries, oldest first.
type SavedPage struct {
	Data  []SavedQuery
	After string
	Total int
}

// SavedQueries lists the caller's saved queries, oldest first, optionally of one
// service; limit (0: 50, at most 100) and after (a cursor from the previous page)
// page them. Errors: EUnauthorized, EForbidden, EInvalid (bad limit or cursor).
func (s *Service) SavedQueries(ctx context.Context, p *meridian.Principal, service string, limit int, after string) (SavedPage, error) {
	if err := caller(p); err != nil {
		return SavedPage{}, err
	}
	if service != "" {
		var err error
		if service, err = checkServiceName(service); err != nil {
			return SavedPage{}, err
		}
	}
	if limit == 0 {
		limit = DefaultSavedLimit
	}
	if limit < 1 || limit > MaxSavedLimit {
		return SavedPage{}, meridian.Errorf(meridian.EInvalid, "limit must be from 1 to %d", MaxSavedLimit)
	}
	var cur struct {
		At int64  `json:"t"`
		ID string `json:"i"`
	}
	if after != "" {
		b, err := base64.RawURLEncoding.DecodeString(after)
		if err != nil || json.Unmarshal(b, &cur) != nil || len(after) > 256 {
			return SavedPage{}, meridian.Errorf(meridian.EInvalid, "Invalid after cursor")
		}
	} else {
		cur.At = -1
	}
	page := SavedPage{Data: []SavedQuery{}}
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		where := "owner_id = $1"
		args := []any{p.ID}
		if service != "" {
			where += " AND service_name = $2"
			args = append(args, service)
		}
		if err := tx.SQL().QueryRow(ctx, "SELECT COUNT(*) FROM qr_saved_queries WHERE "+where, args...).Scan(&page.Total); err != nil {
			return err
		}
		n := len(args)
		q := "SELECT " + savedQueryColumns + " FROM qr_saved_queries WHERE " + where +
			" AND (created_at > $" + strconv.Itoa(n+1) + " OR (created_at = $" + strconv.Itoa(n+1) + " AND id > $" + strconv.Itoa(n+2) + "))" +
			" ORDER BY created_at, id LIMIT $" + strconv.Itoa(n+3)
		rows, err := tx.SQL().Query(ctx, q, append(args, cur.At, cur.ID, limit+1)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			sq, err := scanSaved(rows)
			if err != nil {
				return err
			}
			sq.ownedBy(p)
			page.Data = append(page.Data, sq)
		}
		return rows.Err()
	})
	if err != nil {
		return SavedPage{}, err
	}
	if len(page.Data) > limit {
		page.Data = page.Data[:limit]
		last := page.Data[limit-1]
		b, _ := json.Marshal(map[string]any{"t": last.CreatedAt, "i": last.ID})
		page.After = base64.RawURLEncoding.EncodeToString(b)
	}
	return page, nil
}

// ownSaved reads, in tx, the caller's saved query with id. Another user's query is
// answered as not found, so saved-query ids leak nothing (release 2.0.2 lets anyone
// execute it: Meridian does not). Errors: EInvalid (not a UUID), ENotFound.
func ownSaved(ctx context.Context, tx store.Tx, p *meridian.Principal, id string) (SavedQuery, error) {
	if _, err := uuid.Parse(id); err != nil {
		return SavedQuery{}, meridian.Errorf(meridian.EInvalid, "Invalid id %s: must be a UUID", clip(id))
	}
	q, err := scanSaved(tx.SQL().QueryRow(ctx, "SELECT "+savedQueryColumns+" FROM qr_saved_queries WHERE id = $1 AND owner_id = $2", id, p.ID))
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return q, meridian.NotFound(savedQueryNoun, id)
	}
	q.ownedBy(p)
	return q, err
}

// SavedQuery returns the caller's saved query. Errors: EUnauthorized, EForbidden,
// EInvalid, ENotFound (none, or another user's).
func (s *Service) SavedQuery(ctx context.Context, p *meridian.Principal, id string) (SavedQuery, error) {
	if err := caller(p); err != nil {
		return SavedQuery{}, err
	}
	var q SavedQuery
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		var err error
		q, err = ownSaved(ctx, tx, p, id)
		return err
	})
	return q, err
}

// UpdateSavedQuery changes the name and/or queryText of the caller's saved query.
// Errors: EUnauthorized, EForbidden, EInvalid (nothing to change, bad values, or a
// serviceName other than the query's), ENotFound (none, or another user's).
func (s *Service) UpdateSavedQuery(ctx context.Context, p *meridian.Principal, id string, body map[string]any) (SavedQuery, error) {
	if err := caller(p); err != nil {
		return SavedQuery{}, err
	}
	name, text, err := savedFields(body, false)
	if err != nil {
		return SavedQuery{}, err
	}
	if name == nil && text == nil {
		return SavedQuery{}, meridian.Errorf(meridian.EInvalid, "Send name and/or queryText to update a saved query")
	}
	var q SavedQuery
	err = s.inTx(ctx, true, func(tx store.Tx) error {
		var err error
		if q, err = ownSaved(ctx, tx, p, id); err != nil {
			return err
		}
		if svc, ok, _ := stringField(body, "serviceName"); ok && strings.TrimSpace(svc) != q.ServiceName {
			return meridian.Errorf(meridian.EInvalid, "A saved query's serviceName cannot change (it is %s)", q.ServiceName)
		}
		if name != nil {
			q.Name = *name
		}
		if text != nil {
			q.QueryText = *text
		}
		q.UpdatedAt = s.millis()
		_, err = tx.SQL().Exec(ctx, "UPDATE qr_saved_queries SET name = $1, query_text = $2, updated_at = $3 WHERE id = $4 AND owner_id = $5",
			q.Name, q.QueryText, q.UpdatedAt, q.ID, p.ID)
		return err
	})
	return q, err
}

// DeleteSavedQuery deletes the caller's saved query. Errors: EUnauthorized,
// EForbidden, EInvalid, ENotFound (none, or another user's).
func (s *Service) DeleteSavedQuery(ctx context.Context, p *meridian.Principal, id string) error {
	if err := caller(p); err != nil {
		return err
	}
	if _, err := uuid.Parse(id); err != nil {
		return meridian.Errorf(meridian.EInvalid, "Invalid id %s: must be a UUID", clip(id))
	}
	return s.inTx(ctx, true, func(tx store.Tx) error {
		n, err := tx.SQL().Exec(ctx, "DELETE FROM qr_saved_queries WHERE id = $1 AND owner_id = $2", id, p.ID)
		if err == nil && n == 0 {
			err = meridian.NotFound(savedQueryNoun, id)
		}
		return err
	})
}

// Execution is what execute answers: the saved query, classified read-only, ready to
// send to the trigger endpoint. Nothing has run.
type Execution struct {
	SavedQueryID  string         `json:"savedQueryId"`
	Name          string         `json:"name"`
	ServiceName   string         `json:"serviceName"`
	ServiceType   string         `json:"serviceType,omitempty"`
	QueryText     string         `json:"queryText"`
	Dialect       string         `json:"dialect"`
	StatementType string         `json:"statementType"`
	ReadOnly      bool           `json:"readOnly"`
	Executed      bool           `json:"executed"`
	Trigger       map[string]any `json:"trigger"`
}

// ExecuteSavedQuery checks that the caller owns the saved query (release 2.0.2 does
// not) and that it is one read-only statement in its service's dialect, and returns
// the execution metadata with its SQL text. It does not run the query: send its
// queryText to the trigger endpoint. Errors: EUnauthorized, EForbidden, EInvalid (not
// read-only, naming why), ENotFound (none, or another user's).
func (s *Service) ExecuteSavedQuery(ctx context.Context, p *meridian.Principal, id string) (Execution, error) {
	if err := caller(p); err != nil {
		return Execution{}, err
	}
	var (
		q           SavedQuery
		serviceType string
	)
	err := s.inTx(ctx, false, func(tx store.Tx) error {
		var err error
		if q, err = ownSaved(ctx, tx, p, id); err != nil {
			return err
		}
		row, doc, err := s.ents.Load(ctx, tx, p, store.OpView, kindDatabaseService, store.ByFQN(q.ServiceName), store.IncludeNonDeleted)
		if err != nil {
			if meridian.ErrorCode(err) == meridian.ENotFound {
				return meridian.Errorf(meridian.ENotFound, "The service %s of saved query %s no longer exists", q.ServiceName, q.ID)
			}
			return err
		}
		if admin, err := s.loadAdmin(ctx, tx, serviceRef{ID: row.ID, Name: row.FQN}); err == nil {
			serviceType = admin.ServiceType
		} else if meridian.ErrorCode(err) != meridian.ENotFound {
			return err
		} else {
			serviceType = doc.String("serviceType")
		}
		return nil
	})
	if err != nil {
		return Execution{}, err
	}
	dialect := sqlcheck.ANSI
	if eng, ok := engine.Lookup(serviceType); ok {
		dialect = eng.Dialect()
	}
	res, err := sqlcheck.Check(dialect, q.QueryText)
	if err != nil {
		return Execution{}, err
	}
	return Execution{SavedQueryID: q.ID, Name: q.Name, ServiceName: q.ServiceName, ServiceType: serviceType, QueryText: q.QueryText,
		Dialect: res.Dialect, StatementType: string(res.Kind), ReadOnly: true, Executed: false,
		Trigger: map[string]any{"method": "POST", "path": triggerPath,
			"body": map[string]any{"query": q.QueryText, "serviceName": q.ServiceName, "workflowName": q.Name}}}, nil
}
