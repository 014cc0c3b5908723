package events

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

var _ store.EntityChooser = (*Service)(nil)

// Name is the outbox consumer's name.
func (s *Service) Name() string { return ConsumerName }

// Handle queues the event for every enabled subscription it matches. A subscription
// receives the events that follow its creation: the creation event itself opens its
// state, and an event at or before the last one queued for it (a replay) is skipped, so
// Handle is idempotent. Errors: those of the driver; the dispatcher retries the event.
func (s *Service) Handle(ctx context.Context, e meridian.ChangeEvent) error {
	isSub := e.EntityType == meridian.KindEventSubscription
	if isSub {
		s.invalidate()
	}
	subs, err := s.subscriptions(ctx)
	if err != nil {
		return err
	}
	var matched []Subscription
	for _, sub := range subs {
		if sub.Live() && sub.Matches(e) {
			matched = append(matched, sub)
		}
	}
	opens := isSub && e.EventType == meridian.EventEntityCreated
	if len(matched) == 0 && !opens {
		return nil
	}
	payload, err := json.Marshal(e)
	if err != nil {
		return err
	}
	now := s.now()
	queued := false
	err = s.write(ctx, func(tx store.Tx) error {
		queued = false // fn may run again
		db := tx.SQL()
		if opens {
			if _, err := db.Exec(ctx, `INSERT INTO event_subscription_state (subscription_id, last_seq, updated_at)
VALUES ($1, $2, $3) ON CONFLICT (subscription_id) DO NOTHING`, e.EntityID, e.Seq, now); err != nil {
				return err
			}
		}
		for _, sub := range matched {
			var lastSeq, n int64
			err := db.QueryRow(ctx, `SELECT last_seq, queued FROM event_subscription_state WHERE subscription_id = $1`, sub.ID).Scan(&lastSeq, &n)
			if meridian.ErrorCode(err) == meridian.ENotFound {
				continue // not seen created yet: it gets the events after its creation
			}
			if err != nil {
				return err
			}
			if e.Seq <= lastSeq {
				continue
			}
			if n >= int64(s.cfg.MaxQueue) {
				msg := fmt.Sprintf("queue full (%d events wait): event %s dropped", s.cfg.MaxQueue, e.ID)
				if _, err := db.Exec(ctx, `UPDATE event_subscription_state SET dropped = dropped + 1, last_seq = $2,
last_error = $3, last_failed_at = $4, updated_at = $4 WHERE subscription_id = $1`, sub.ID, e.Seq, msg, now); err != nil {
					return err
				}
				continue
			}
			inserted, err := db.Exec(ctx, `INSERT INTO event_subscription_queue (subscription_id, seq, event) VALUES ($1, $2, $3)
ON CONFLICT (subscription_id, seq) DO NOTHING`, sub.ID, e.Seq, string(payload))
			if err != nil {
				return err
			}
			// Counted only when inserted: another process may have queued it meanwhile.
			if _, err := db.Exec(ctx, `UPDATE event_subscription_state SET queued = queued + $4,
last_seq = CASE WHEN last_seq < $2 THEN $2 ELSE last_seq END, updated_at = $3 WHERE subscription_id = $1`, sub.ID, e.Seq, now, inserted); err != nil {
				return err
			}
			queued = true
		}
		return nil
	})
	if err == nil && queued {
		s.poke()
	}
	return err
}

// WantsEventEntities reports whether an enabled subscription exists: without one, no
// event is queued, and the consumer reads the events without their entity documents.
// Handle invalidates the subscriptions when it sees one change, so the answer turns
// true right after the event that creates or enables one. Errors: those of the driver.
func (s *Service) WantsEventEntities(ctx context.Context) (bool, error) {
	subs, err := s.subscriptions(ctx)
	if err != nil {
		return false, err
	}
	for _, sub := range subs {
		if sub.Live() {
			return true, nil
		}
	}
	return false, nil
}

// invalidate makes the next match reload the subscriptions.
func (s *Service) invalidate() {
	s.mu.Lock()
	s.valid = false
	s.mu.Unlock()
}

// subscriptions returns every live subscription, from a cache reloaded after a
// subscription changes (the consumer sees its event) and at least every cacheTTL.
func (s *Service) subscriptions(ctx context.Context) ([]Subscription, error) {
	s.mu.Lock()
	if s.valid && s.cfg.Now().Sub(s.loadedAt) < cacheTTL {
		subs := s.subs
		s.mu.Unlock()
		return subs, nil
	}
	s.mu.Unlock()
	var subs []Subscription
	after := ""
	for {
		page, err := s.ents.List(ctx, meridian.System, meridian.KindEventSubscription,
			store.ListOptions{Limit: store.MaxListLimit, After: after, Include: store.IncludeNonDeleted})
		if err != nil {
			return nil, err
		}
		for _, e := range page.Data {
			sub, err := ParseSubscription(e)
			if err != nil {
				s.log.Warn("an event subscription cannot be read; it receives nothing", "subscription", e.ID(), "err", err)
				continue
			}
			subs = append(subs, sub)
		}
		if page.After == "" || len(page.Data) == 0 {
			break
		}
		after = page.After
	}
	s.mu.Lock()
	s.subs, s.loadedAt, s.valid = subs, s.cfg.Now(), true
	s.mu.Unlock()
	return subs, nil
}
