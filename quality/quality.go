// Package quality is Meridian's data-quality module: test case results kept as a time
// series in a table the module owns. Test definitions and test cases are entities,
// served by the engine, and their rules are kind rules (store); what is here is what
// happens beside them.
//
// The module (Module) declares the points table with migrations numbered alike on
// SQLite and PostgreSQL and reaches it through the transaction's SQL seam (points.go).
// It removes an entity's points when the entity is hard-deleted (store.Module.OnRemove,
// in the delete's transaction), and computes a test case's testCaseStatus and
// testCaseResult on every read (store.Module.Computed). Open the store with Module.
//
// Choices, where OpenMetadata leaves room:
//   - A test case result is a point in the "testCaseResult" series of the test case,
//     upserted on its timestamp. Adding one makes no new version of the test case, as
//     in OpenMetadata. The test case document does not store its latest result: reads
//     compute it. testCaseStatus (the latest result's status) is always shown once a
//     result exists; testCaseResult (the latest result) only when fields=testCaseResult
//     is asked for.
//   - Adding a result needs Edit on the test case, and records one entityUpdated change
//     event whose changeDescription has testCaseResult in fieldsUpdated, with the
//     version unchanged, so alerts can follow test failures. The point and the event
//     commit in one transaction.
//   - A hard delete of a test case (or of its table, recursively) removes its results.
package quality

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

// migrations holds sqlite/ and postgres/, as store.Module wants.
var migrations, _ = fs.Sub(migrationFiles, "migrations")

// testCaseKind is the kind whose results the module keeps.
const testCaseKind = "testCase"

// SeriesTestCaseResult is the time series of test case results.
const SeriesTestCaseResult = "testCaseResult"

// The computed fields of a test case.
const (
	fieldResult = "testCaseResult"
	fieldStatus = "testCaseStatus"
)

// TestCaseStatuses are the accepted testCaseStatus values.
var TestCaseStatuses = []string{"Success", "Failed", "Aborted", "Queued"}

// StatusNeverRun is the status reported for a test case without results.
const StatusNeverRun = "NeverRun"

// Module is the store module that owns the points table.
func Module() store.Module {
	return store.Module{
		Name:       "quality",
		Migrations: migrations,
		OnRemove: func(ctx context.Context, db store.SQL, entityID string) error {
			return DeletePoints(ctx, db, "", entityID)
		},
		Computed: map[string]store.ComputeFunc{testCaseKind: computeTestCase},
	}
}

// computeTestCase sets a test case's testCaseStatus from its latest result, and its
// testCaseResult when fields asks for it. Values stored in either field are dropped.
func computeTestCase(ctx context.Context, db store.SQL, e meridian.Entity, fields map[string]bool) error {
	delete(e, fieldResult)
	delete(e, fieldStatus)
	r, _, err := latestResult(ctx, db, e.ID())
	if err != nil || r == nil {
		return err
	}
	e[fieldStatus] = r[fieldStatus]
	if fields[fieldResult] {
		e[fieldResult] = r
	}
	return nil
}

// latestResult returns the newest result of a test case and its timestamp; nil when it
// has none.
func latestResult(ctx context.Context, db store.SQL, testCaseID string) (map[string]any, int64, error) {
	pt, err := LatestPoint(ctx, db, SeriesTestCaseResult, testCaseID)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var r map[string]any
	if err := json.Unmarshal(pt.Doc, &r); err != nil {
		return nil, 0, err
	}
	return r, pt.Timestamp, nil
}
