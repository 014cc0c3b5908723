package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// PutPoint records a time-series point, replacing the one at the same (series,
// entity, timestamp).
func (t *tx) PutPoint(ctx context.Context, p store.Point) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.exec(ctx, stmtPutPoint,
		p.Series, p.EntityID, p.Timestamp, string(p.Doc))
	if err != nil {
		return fmt.Errorf("sqlite: put point: %w", err)
	}
	return nil
}

// Points lists the points of one entity in one series within [From, To], newest
// first. To 0 means no upper bound; a Limit of 0 or less means no limit.
func (t *tx) Points(ctx context.Context, q store.PointQuery) ([]store.Point, error) {
	args := []any{q.Series, q.EntityID, q.From}
	mask := 0
	if q.To > 0 {
		mask |= pointsTo
		args = append(args, q.To)
	}
	if q.Limit > 0 {
		mask |= pointsLimit
		args = append(args, q.Limit)
	}
	rows, err := t.query(ctx, stmtPoints+stmtID(mask), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: points: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Point)
	if err != nil {
		return nil, fmt.Errorf("sqlite: points: %w", err)
	}
	return out, nil
}

// LatestPoint returns the newest point of an entity in a series.
func (t *tx) LatestPoint(ctx context.Context, series, entityID string) (store.Point, error) {
	p, err := rowscan.Point(t.queryRow(ctx, stmtLatestPoint, series, entityID))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Point{}, meridian.Errorf(meridian.ENotFound, "no %s point for %s", series, entityID)
	}
	if err != nil {
		return store.Point{}, fmt.Errorf("sqlite: latest point: %w", err)
	}
	return p, nil
}

// DeletePoints removes an entity's points in a series, or in all series for "".
func (t *tx) DeletePoints(ctx context.Context, series, entityID string) error {
	if err := t.write(); err != nil {
		return err
	}
	var err error
	if series == "" {
		_, err = t.exec(ctx, stmtRemovePoints, entityID)
	} else {
		_, err = t.exec(ctx, stmtDeleteSeriesPoints, series, entityID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete points: %w", err)
	}
	return nil
}
