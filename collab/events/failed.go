package events

import (
	"context"
	"encoding/json"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// FailedEvent is an event a subscription gave up, with why and when.
type FailedEvent struct {
	FailingSubscriptionID string          `json:"failingSubscriptionId"`
	ChangeEvent           json.RawMessage `json:"changeEvent"`
	Reason                string          `json:"reason"`
	Timestamp             int64           `json:"timestamp"`
}

// Bounds of FailedEvents.
const (
	DefaultFailedLimit = 50
	MaxFailedLimit     = MaxFailedEvents
)

// FailedEvents lists the events the subscription gave up, newest first, at most limit
// (0 means DefaultFailedLimit). Only admins may: the events hold entities. Errors:
// EUnauthorized, EForbidden (not an admin), EInvalid (bad id or limit), ENotFound (no
// such subscription).
func (s *Service) FailedEvents(ctx context.Context, p *meridian.Principal, id string, limit int) ([]FailedEvent, error) {
	if p == nil {
		return nil, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if !p.IsAdmin() {
		return nil, meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [ViewEvents] not allowed", p.Name)
	}
	if limit == 0 {
		limit = DefaultFailedLimit
	}
	if limit < 1 || limit > MaxFailedLimit {
		return nil, meridian.Errorf(meridian.EInvalid, "[query param limit must be between 1 and %d]", MaxFailedLimit)
	}
	out := []FailedEvent{}
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		if _, _, err := s.ents.Load(ctx, tx, p, store.OpView, meridian.KindEventSubscription, store.ByID(id), store.IncludeAll); err != nil {
			return err
		}
		rows, err := tx.SQL().Query(ctx, `SELECT event, reason, failed_at FROM event_subscription_failed
WHERE subscription_id = $1 ORDER BY seq DESC LIMIT $2`, id, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				f   FailedEvent
				raw string
			)
			if err := rows.Scan(&raw, &f.Reason, &f.Timestamp); err != nil {
				return err
			}
			f.FailingSubscriptionID = id
			if json.Valid([]byte(raw)) {
				f.ChangeEvent = json.RawMessage(raw)
			} else {
				f.ChangeEvent = json.RawMessage("null")
			}
			out = append(out, f)
		}
		return rows.Err()
	})
	return out, err
}
