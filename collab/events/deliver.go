package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

// Run delivers the subscriptions' queues until ctx ends: every Poll, and at once when
// the consumer queued events, it starts a worker for each subscription whose next event
// is due (at most Workers at once). It returns when ctx ends and the workers stopped.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		if err := s.startWorkers(ctx, &wg); err != nil && ctx.Err() == nil {
			s.log.Warn("event delivery: looking for due events failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// Deliver delivers every due event now, in the caller's goroutine, subscription after
// subscription; tests and tools use it instead of Run.
func (s *Service) Deliver(ctx context.Context) error {
	ids, err := s.dueSubscriptions(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.deliverQueue(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// startWorkers starts a worker for each due subscription not already delivering.
func (s *Service) startWorkers(ctx context.Context, wg *sync.WaitGroup) error {
	ids, err := s.dueSubscriptions(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.running[id] || len(s.running) >= s.cfg.Workers {
			continue
		}
		s.running[id] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.running, id)
				s.mu.Unlock()
			}()
			if err := s.deliverQueue(ctx, id); err != nil && ctx.Err() == nil {
				s.log.Warn("event delivery failed; will retry", "subscription", id, "err", err)
			}
		}()
	}
	return nil
}

// subscriptionReload is how long a worker trusts the subscription it read (its
// destinations, secrets and enabled flag) before it reads it again.
const subscriptionReload = time.Second

// maxDueScan bounds the subscriptions one scan starts.
const maxDueScan = 1000

// dueSubscriptions lists the subscriptions whose oldest queued event is due.
func (s *Service) dueSubscriptions(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		// One row per subscription, each with one index lookup of its queue's head.
		rows, err := tx.SQL().Query(ctx, `SELECT s.subscription_id FROM event_subscription_state s
WHERE (SELECT q.next_attempt_at FROM event_subscription_queue q WHERE q.subscription_id = s.subscription_id
ORDER BY q.seq LIMIT 1) <= $1 ORDER BY s.subscription_id LIMIT $2`, s.now(), maxDueScan)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	return ids, err
}

// queued is the head of a subscription's queue.
type queued struct {
	seq           int64
	event         meridian.ChangeEvent
	attempts      int
	firstAttempt  int64
	nextAttempt   int64
	deliveredTo   map[string]bool
	deliveredList string
	unreadable    error // the stored event does not decode
	raw           string
}

// deliverQueue delivers one subscription's queue, in order, until it is empty, its head
// waits for a retry, or another process holds its lease.
func (s *Service) deliverQueue(ctx context.Context, id string) error {
	defer s.release(context.WithoutCancel(ctx), id)
	var (
		renewAt int64 // the lease is renewed once half of it has passed
		sub     *Subscription
		loaded  time.Time
	)
	for ctx.Err() == nil {
		if now := s.now(); now >= renewAt {
			ok, err := s.lease(ctx, id)
			if err != nil || !ok {
				return err
			}
			renewAt = now + leaseDuration.Milliseconds()/2
		}
		head, err := s.head(ctx, id)
		if err != nil || head == nil || head.nextAttempt > s.now() {
			return err
		}
		if sub == nil || time.Since(loaded) > subscriptionReload {
			if sub, err = s.load(ctx, id); err != nil {
				return err
			}
			loaded = time.Now()
		}
		if sub == nil || !sub.Live() {
			return s.purge(ctx, id, sub)
		}
		if err := s.attempt(ctx, sub, head); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// lease takes or renews this process's lease on the subscription's delivery.
func (s *Service) lease(ctx context.Context, id string) (bool, error) {
	now := s.now()
	var n int64
	err := s.write(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.SQL().Exec(ctx, `UPDATE event_subscription_state SET lease_owner = $2, lease_until = $3
WHERE subscription_id = $1 AND (lease_owner = $2 OR lease_until < $4)`, id, s.cfg.Node, now+leaseDuration.Milliseconds(), now)
		return err
	})
	return n > 0, err
}

// release gives the lease up so another process may deliver at once.
func (s *Service) release(ctx context.Context, id string) {
	err := s.write(ctx, func(tx store.Tx) error {
		_, err := tx.SQL().Exec(ctx, `UPDATE event_subscription_state SET lease_owner = '', lease_until = 0
WHERE subscription_id = $1 AND lease_owner = $2`, id, s.cfg.Node)
		return err
	})
	if err != nil {
		s.log.Warn("event delivery: releasing the lease failed", "subscription", id, "err", err)
	}
}

func (s *Service) head(ctx context.Context, id string) (*queued, error) {
	var (
		q   queued
		raw string
	)
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		return tx.SQL().QueryRow(ctx, `SELECT seq, event, attempts, first_attempt_at, next_attempt_at, delivered_to
FROM event_subscription_queue WHERE subscription_id = $1 ORDER BY seq LIMIT 1`, id).
			Scan(&q.seq, &raw, &q.attempts, &q.firstAttempt, &q.nextAttempt, &q.deliveredList)
	})
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(raw), &q.event); err != nil {
		// Unreadable: no retry can send it; give it up so the queue goes on.
		q.event = meridian.ChangeEvent{}
		q.unreadable = err
	}
	q.event.Seq = q.seq
	q.raw = raw
	q.deliveredTo = map[string]bool{}
	for _, d := range strings.Split(q.deliveredList, ",") {
		if d != "" {
			q.deliveredTo[d] = true
		}
	}
	return &q, nil
}

// load reads the subscription with its secrets opened; nil when it no longer exists.
func (s *Service) load(ctx context.Context, id string) (*Subscription, error) {
	var sub Subscription
	err := s.ents.InTx(ctx, false, func(tx store.Tx) error {
		_, e, err := s.ents.Load(ctx, tx, meridian.System, store.OpView, meridian.KindEventSubscription, store.ByID(id), store.IncludeAll)
		if err != nil {
			return err
		}
		sub, err = ParseSubscription(e)
		return err
	})
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &sub, nil
}

// purge drops the queue of a subscription that is gone, deleted or disabled: what was
// written meanwhile is not delivered when it comes back.
func (s *Service) purge(ctx context.Context, id string, sub *Subscription) error {
	status := StatusDisabled
	if sub == nil || sub.Deleted {
		status = StatusActive
	}
	return s.write(ctx, func(tx store.Tx) error {
		if _, err := tx.SQL().Exec(ctx, `DELETE FROM event_subscription_queue WHERE subscription_id = $1`, id); err != nil {
			return err
		}
		_, err := tx.SQL().Exec(ctx, `UPDATE event_subscription_state SET queued = 0, status = $2, updated_at = $3
WHERE subscription_id = $1`, id, status, s.now())
		return err
	})
}

// backoff is the pause after the n-th failed attempt.
func (s *Service) backoff(n int) time.Duration {
	d := s.cfg.MinBackoff
	for i := 1; i < n && d < s.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.cfg.MaxBackoff)
}

// attempt sends the head event to each enabled destination that has not received it,
// then records the outcome in one transaction: removed from the queue when every
// destination has it (or gave it up), otherwise kept for a retry after the backoff, or
// given up after the retry horizon.
func (s *Service) attempt(ctx context.Context, sub *Subscription, q *queued) error {
	msg := collab.Message{Subject: summary(q.event), Body: q.event}
	var (
		okCount    int
		lastErr    string
		lastStatus int
		permanent  int
		transient  int
		permErr    string // why a destination gave the event up
	)
	done := q.deliveredTo
	if q.unreadable != nil {
		permanent, lastErr = 1, fmt.Sprintf("queued event %d cannot be read: %v", q.seq, q.unreadable)
	}
	for _, d := range sub.Destinations {
		if q.unreadable != nil {
			break
		}
		if d.Enabled != nil && !*d.Enabled {
			continue
		}
		if done[d.ID] {
			continue
		}
		delivery, err := s.notifier.Notify(ctx, d, msg)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case err == nil:
			okCount++
			done[d.ID] = true
		case errors.Is(err, ErrPermanent):
			permanent++
			done[d.ID] = true
			lastErr, lastStatus = destinationError(d, delivery, err), delivery.StatusCode
			permErr = lastErr
		default:
			transient++
			lastErr, lastStatus = destinationError(d, delivery, err), delivery.StatusCode
		}
	}
	now := s.now()
	first := q.firstAttempt
	if first == 0 {
		first = now
	}
	expired := transient > 0 && time.Duration(now-first)*time.Millisecond >= s.cfg.RetryHorizon
	if transient > 0 && !expired {
		next := now + s.backoff(q.attempts+1).Milliseconds()
		s.log.Info("event delivery failed; will retry", "subscription", sub.ID, "seq", q.seq,
			"attempt", q.attempts+1, "retryInMs", next-now, "err", lastErr)
		return s.write(ctx, func(tx store.Tx) error {
			db := tx.SQL()
			if permanent > 0 { // one destination gave the event up; the others retry it
				if err := keepFailed(ctx, db, sub.ID, q, permErr, now); err != nil {
					return err
				}
			}
			if _, err := db.Exec(ctx, `UPDATE event_subscription_queue SET attempts = attempts + 1, first_attempt_at = $3,
next_attempt_at = $4, delivered_to = $5 WHERE subscription_id = $1 AND seq = $2`, sub.ID, q.seq, first, next, joinIDs(done)); err != nil {
				return err
			}
			_, err := db.Exec(ctx, `UPDATE event_subscription_state SET status = $2, last_error = $3, last_status_code = $4,
last_failed_at = $5, failed = failed + $6, updated_at = $5 WHERE subscription_id = $1`,
				sub.ID, StatusAwaitingRetry, lastErr, lastStatus, now, permanent)
			return err
		})
	}
	failed := permanent
	if expired {
		failed += transient
		s.log.Warn("event delivery given up after the retry horizon", "subscription", sub.ID, "seq", q.seq, "err", lastErr)
	}
	return s.write(ctx, func(tx store.Tx) error {
		db := tx.SQL()
		n, err := db.Exec(ctx, `DELETE FROM event_subscription_queue WHERE subscription_id = $1 AND seq = $2`, sub.ID, q.seq)
		if err != nil {
			return err
		}
		if failed > 0 {
			if err := keepFailed(ctx, db, sub.ID, q, lastErr, now); err != nil {
				return err
			}
			_, err = db.Exec(ctx, `UPDATE event_subscription_state SET queued = queued - $2, status = $3, last_error = $4,
last_status_code = $5, last_failed_at = $6, failed = failed + $7, delivered = delivered + $8, updated_at = $6
WHERE subscription_id = $1`, sub.ID, n, StatusFailed, lastErr, lastStatus, now, failed, min(okCount, 1))
			return err
		}
		if okCount == 0 { // nothing to send to: every destination disabled
			_, err = db.Exec(ctx, `UPDATE event_subscription_state SET queued = queued - $2, status = $3, updated_at = $4
WHERE subscription_id = $1`, sub.ID, n, StatusActive, now)
			return err
		}
		_, err = db.Exec(ctx, `UPDATE event_subscription_state SET queued = queued - $2, status = $3,
delivered = delivered + 1, last_success_at = $4, updated_at = $4 WHERE subscription_id = $1`, sub.ID, n, StatusActive, now)
		return err
	})
}

// destinationError names the destination that failed by its type and, for a webhook,
// its scheme and host only (a path or query may hold a token), then says what happened.
func destinationError(d collab.Destination, delivery collab.Delivery, err error) string {
	where := d.Type
	if d.Type == collab.DestinationWebhook {
		if u, perr := url.Parse(d.Config.Endpoint); perr == nil && u.Host != "" {
			where += " " + u.Scheme + "://" + u.Host
		}
	}
	msg := delivery.Error
	if msg == "" {
		msg = err.Error()
	}
	return where + ": " + msg
}

func joinIDs(m map[string]bool) string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	return strings.Join(ids, ",")
}

// MaxFailedEvents bounds the failed events kept per subscription; older ones go.
const MaxFailedEvents = 1000

// keepFailed records an event given up, and drops the oldest beyond MaxFailedEvents.
func keepFailed(ctx context.Context, db store.SQL, id string, q *queued, reason string, now int64) error {
	if _, err := db.Exec(ctx, `INSERT INTO event_subscription_failed (subscription_id, seq, event, reason, failed_at)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (subscription_id, seq) DO NOTHING`, id, q.seq, q.raw, reason, now); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM event_subscription_failed WHERE subscription_id = $1 AND seq <=
(SELECT f.seq FROM event_subscription_failed f WHERE f.subscription_id = $1 ORDER BY f.seq DESC LIMIT 1 OFFSET $2)`, id, MaxFailedEvents)
	return err
}
