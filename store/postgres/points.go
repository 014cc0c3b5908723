package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	_, err := t.tx.Exec(ctx, `INSERT INTO points (series, entity_id, ts, doc) VALUES ($1, $2, $3, $4)
ON CONFLICT (series, entity_id, ts) DO UPDATE SET doc = excluded.doc`,
		p.Series, p.EntityID, p.Timestamp, string(p.Doc))
	if err != nil {
		return fmt.Errorf("postgres: put point: %w", err)
	}
	return nil
}

// Points lists the points of one entity in one series within [From, To], newest
// first. To 0 means no upper bound; a Limit of 0 or less means no limit.
func (t *tx) Points(ctx context.Context, q store.PointQuery) ([]store.Point, error) {
	var args params
	query := "SELECT " + rowscan.PointColumns + " FROM points WHERE series = " + args.add(q.Series) +
		" AND entity_id = " + args.add(q.EntityID) + " AND ts >= " + args.add(q.From)
	if q.To > 0 {
		query += " AND ts <= " + args.add(q.To)
	}
	query += " ORDER BY ts DESC"
	if q.Limit > 0 {
		query += " LIMIT " + args.add(q.Limit)
	}
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: points: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Point)
	if err != nil {
		return nil, fmt.Errorf("postgres: points: %w", err)
	}
	return out, nil
}

// LatestPoint returns the newest point of an entity in a series.
func (t *tx) LatestPoint(ctx context.Context, series, entityID string) (store.Point, error) {
	p, err := rowscan.Point(t.tx.QueryRow(ctx, `SELECT `+rowscan.PointColumns+` FROM points
WHERE series = $1 AND entity_id = $2 ORDER BY ts DESC LIMIT 1`, series, entityID))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Point{}, meridian.Errorf(meridian.ENotFound, "no %s point for %s", series, entityID)
	}
	if err != nil {
		return store.Point{}, fmt.Errorf("postgres: latest point: %w", err)
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
		_, err = t.tx.Exec(ctx, "DELETE FROM points WHERE entity_id = $1", entityID)
	} else {
		_, err = t.tx.Exec(ctx, "DELETE FROM points WHERE series = $1 AND entity_id = $2", series, entityID)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete points: %w", err)
	}
	return nil
}
