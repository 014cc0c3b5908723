package quality

import (
	"context"
	"strconv"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Point is one time-series point: a JSON document recorded for an entity at a
// timestamp (epoch ms) in a named series, such as testCaseResult.
type Point struct {
	Series    string
	EntityID  string
	Timestamp int64
	Doc       []byte
}

// PointQuery selects the points of one entity in one series with From <= timestamp
// <= To (0 for To means no upper bound), newest first. Limit 0 or less means no limit.
type PointQuery struct {
	Series   string
	EntityID string
	From     int64
	To       int64
	Limit    int
}

// The points table, reached through a transaction's module seam (store.Tx.SQL).

const pointColumns = "series, entity_id, ts, doc"

func scanPoint(s store.Scanner) (Point, error) {
	var p Point
	err := s.Scan(&p.Series, &p.EntityID, &p.Timestamp, &p.Doc)
	return p, err
}

// PutPoint records a point; a point already at (series, entity, timestamp) is
// replaced.
func PutPoint(ctx context.Context, db store.SQL, p Point) error {
	_, err := db.Exec(ctx, "INSERT INTO points ("+pointColumns+`) VALUES ($1, $2, $3, $4)
ON CONFLICT (series, entity_id, ts) DO UPDATE SET doc = excluded.doc`,
		p.Series, p.EntityID, p.Timestamp, string(p.Doc))
	return err
}

// Points lists the points q selects, newest first; never nil.
func Points(ctx context.Context, db store.SQL, q PointQuery) ([]Point, error) {
	args := []any{q.Series, q.EntityID, q.From}
	query := "SELECT " + pointColumns + " FROM points WHERE series = $1 AND entity_id = $2 AND ts >= $3"
	if q.To > 0 {
		args = append(args, q.To)
		query += " AND ts <= $" + strconv.Itoa(len(args))
	}
	query += " ORDER BY ts DESC"
	if q.Limit > 0 {
		args = append(args, q.Limit)
		query += " LIMIT $" + strconv.Itoa(len(args))
	}
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Point{}
	for rows.Next() {
		p, err := scanPoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// LatestPoint returns the newest point of an entity in a series. Errors: ENotFound
// when there is none.
func LatestPoint(ctx context.Context, db store.SQL, series, entityID string) (Point, error) {
	p, err := scanPoint(db.QueryRow(ctx, "SELECT "+pointColumns+` FROM points
WHERE series = $1 AND entity_id = $2 ORDER BY ts DESC LIMIT 1`, series, entityID))
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return Point{}, meridian.Errorf(meridian.ENotFound, "no %s point for %s", series, entityID)
	}
	return p, err
}

// DeletePoints removes an entity's points in a series, or in every series when series
// is "".
func DeletePoints(ctx context.Context, db store.SQL, series, entityID string) error {
	var err error
	if series == "" {
		_, err = db.Exec(ctx, "DELETE FROM points WHERE entity_id = $1", entityID)
	} else {
		_, err = db.Exec(ctx, "DELETE FROM points WHERE series = $1 AND entity_id = $2", series, entityID)
	}
	return err
}
