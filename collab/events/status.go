package events

import (
	"context"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// StatusField is the computed field that shows a subscription's delivery.
const StatusField = "statusDetails"

// computeStatus sets a subscription's statusDetails from its delivery state: status
// (active, awaitingRetry, failed, or disabled when the subscription is), the last
// error with its time and HTTP status, the last success, and the counters of pending,
// delivered, failed (given up) and dropped (queue full) events.
func computeStatus(ctx context.Context, db store.SQL, e meridian.Entity, _ map[string]bool) error {
	delete(e, StatusField)
	var (
		status, lastErr                    string
		code                               int
		queued, delivered, failed, dropped int64
		lastFailed, lastSuccess, updated   int64
	)
	err := db.QueryRow(ctx, `SELECT status, last_error, last_status_code, queued, delivered, failed, dropped,
last_failed_at, last_success_at, updated_at FROM event_subscription_state WHERE subscription_id = $1`, e.ID()).
		Scan(&status, &lastErr, &code, &queued, &delivered, &failed, &dropped, &lastFailed, &lastSuccess, &updated)
	if err != nil && meridian.ErrorCode(err) != meridian.ENotFound {
		return err
	}
	if status == "" {
		status = StatusActive
	}
	if enabled, ok := e["enabled"].(bool); ok && !enabled {
		status = StatusDisabled
	}
	d := map[string]any{"status": status, "pendingEvents": queued, "deliveredEvents": delivered,
		"failedEvents": failed, "droppedEvents": dropped}
	if lastErr != "" {
		d["lastError"] = lastErr
	}
	if code != 0 {
		d["lastFailedStatusCode"] = code
	}
	if lastFailed != 0 {
		d["lastFailedAt"] = lastFailed
	}
	if lastSuccess != 0 {
		d["lastSuccessfulAt"] = lastSuccess
	}
	if updated != 0 {
		d["timestamp"] = updated
	}
	e[StatusField] = d
	return nil
}
