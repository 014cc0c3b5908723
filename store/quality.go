package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/meridian-catalog/meridian"
)

// Data quality: the built-in test definitions, the rules a test case must follow, and
// test case results kept as time-series points.
//
// Choices, where OpenMetadata leaves room:
//   - A test case result is a point in the "testCaseResult" series of the test case
//     (Tx.PutPoint), upserted on its timestamp. Adding one makes no new version of the
//     test case, as in OpenMetadata. The test case document does not store its latest
//     result: reads compute it. testCaseStatus (the latest result's status) is always
//     shown once a result exists; testCaseResult (the latest result) only when
//     fields=testCaseResult is asked for. Values a client writes into either field are
//     ignored.
//   - Adding a result needs Edit on the test case, and records one entityUpdated change
//     event whose changeDescription has testCaseResult in fieldsUpdated, with the
//     version unchanged, so alerts can follow test failures.
//   - A hard delete of a test case (or of its table, recursively) removes its results.
//   - Test definitions with provider "system" are seeded at start (SeedTestDefinitions)
//     and cannot be deleted. Only the system principal (isSystem) may create one or
//     change one; others get EInvalid.

// SeriesTestCaseResult is the time series of test case results.
const SeriesTestCaseResult = "testCaseResult"

// TestCaseStatuses are the accepted testCaseStatus values.
var TestCaseStatuses = []string{"Success", "Failed", "Aborted", "Queued"}

// StatusNeverRun is the status reported for a test case without results.
const StatusNeverRun = "NeverRun"

//go:embed seed/testDefinitions.json
var seedTestDefinitions []byte

// SeedTestDefinitions creates OpenMetadata's built-in table and column test
// definitions that are missing, and brings changed ones back to the built-in
// definition. An unchanged definition gets no new version, so seeding again is a
// no-op. It returns how many definitions it created or updated.
func (s *Entities) SeedTestDefinitions(ctx context.Context) (int, error) {
	var defs []meridian.Entity
	if err := json.Unmarshal(seedTestDefinitions, &defs); err != nil {
		return 0, fmt.Errorf("seed test definitions: %w", err)
	}
	n := 0
	for _, d := range defs {
		res, err := s.CreateOrUpdate(ctx, meridian.System, "testDefinition", d)
		if err != nil {
			return n, fmt.Errorf("seed test definition %s: %w", d.Name(), err)
		}
		if res.Change != meridian.EventEntityNoChange {
			n++
		}
	}
	return n, nil
}

// decorate adds the computed fields of a read document: for a test case, the latest
// result's testCaseStatus and, when asked for, testCaseResult.
func (s *Entities) decorate(ctx context.Context, tx Tx, k *meridian.Kind, e meridian.Entity, fields map[string]bool) error {
	if k.Name != "testCase" {
		return nil
	}
	delete(e, "testCaseResult")
	delete(e, "testCaseStatus")
	pt, err := tx.LatestPoint(ctx, SeriesTestCaseResult, e.ID())
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil
	}
	if err != nil {
		return err
	}
	var r map[string]any
	if err := json.Unmarshal(pt.Doc, &r); err != nil {
		return err
	}
	e["testCaseStatus"] = r["testCaseStatus"]
	if fields[SeriesTestCaseResult] {
		e["testCaseResult"] = r
	}
	return nil
}

// AddTestCaseResult records a result of the test case named by fqn, replacing one at
// the same timestamp, and returns the stored result. Errors: EInvalid (timestamp not in
// milliseconds, bad status or shape), ENotFound, EForbidden.
func (s *Entities) AddTestCaseResult(ctx context.Context, p *meridian.Principal, fqn string, result meridian.Entity) (meridian.Entity, error) {
	k, err := s.reg.MustKind("testCase")
	if err != nil {
		return nil, err
	}
	r, ts, err := checkResult(result)
	if err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx Tx) error {
		row, err := getRow(ctx, tx, k, ByName(fqn), IncludeNonDeleted)
		if err != nil {
			return err
		}
		doc, err := s.full(ctx, tx, k, row, nil)
		if err != nil {
			return err
		}
		if err := s.authorizeOwned(ctx, tx, p, OpEdit, k, doc); err != nil {
			return err
		}
		r["testCaseFQN"] = row.FQN
		if id, _ := r["id"].(string); id == "" {
			r["id"] = uuid.NewString()
		}
		if err := tx.PutPoint(ctx, Point{Series: SeriesTestCaseResult, EntityID: row.ID, Timestamp: ts, Doc: encode(r)}); err != nil {
			return err
		}
		cd := meridian.ChangeDescription{FieldsAdded: []meridian.FieldChange{}, FieldsDeleted: []meridian.FieldChange{},
			FieldsUpdated:   []meridian.FieldChange{{Name: SeriesTestCaseResult, NewValue: encodeChange(map[string]any(r))}},
			PreviousVersion: row.Version.Float()}
		snap, err := s.sealed(k, doc)
		if err != nil {
			return err
		}
		return tx.AppendEvent(ctx, s.event(p, meridian.EventEntityUpdated, k, snap, &cd))
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// checkResult validates a test case result (OpenMetadata's testCaseResult) and returns
// a copy and its timestamp.
func checkResult(in meridian.Entity) (meridian.Entity, int64, error) {
	if in == nil {
		return nil, 0, meridian.Errorf(meridian.EInvalid, "Invalid request format: the body must be a JSON object")
	}
	r := in.Clone()
	tsv, ok := r["timestamp"]
	if !ok || tsv == nil {
		return nil, 0, meridian.Errorf(meridian.EInvalid, "timestamp is required")
	}
	f, ok := tsv.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1e17 {
		return nil, 0, meridian.Errorf(meridian.EInvalid, "Timestamp %v is not valid, it should be in milliseconds since epoch", tsv)
	}
	ts := int64(f)
	if len(fmt.Sprint(ts)) < 12 || ts < 0 {
		return nil, 0, meridian.Errorf(meridian.EInvalid, "Timestamp %d is not valid, it should be in milliseconds since epoch", ts)
	}
	status, _ := r["testCaseStatus"].(string)
	if !contains(TestCaseStatuses, status) {
		return nil, 0, meridian.Errorf(meridian.EInvalid, "testCaseStatus must be one of %s", strings.Join(TestCaseStatuses, ", "))
	}
	for _, f := range []string{"id", "result", "sampleData", "incidentId", "testCaseFailureStatus"} {
		if v, ok := r[f]; ok && v != nil {
			if _, isStr := v.(string); !isStr && f != "testCaseFailureStatus" {
				return nil, 0, meridian.Errorf(meridian.EInvalid, "%s must be a string", f)
			}
		}
	}
	for _, f := range []string{"passedRows", "failedRows"} {
		if v, ok := r[f]; ok && v != nil {
			n, isNum := v.(float64)
			if !isNum || n != math.Trunc(n) || n < 0 {
				return nil, 0, meridian.Errorf(meridian.EInvalid, "%s must be a non-negative integer", f)
			}
		}
	}
	for _, f := range []string{"passedRowsPercentage", "failedRowsPercentage", "minBound", "maxBound"} {
		if v, ok := r[f]; ok && v != nil {
			if _, isNum := v.(float64); !isNum {
				return nil, 0, meridian.Errorf(meridian.EInvalid, "%s must be a number", f)
			}
		}
	}
	if v, ok := r["testResultValue"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			return nil, 0, meridian.Errorf(meridian.EInvalid, "testResultValue must be an array of {name, value}")
		}
		for i, item := range list {
			m, isObj := item.(map[string]any)
			if !isObj {
				return nil, 0, meridian.Errorf(meridian.EInvalid, "testResultValue[%d] must be an object {name, value}", i)
			}
			for _, f := range []string{"name", "value", "predictedValue"} {
				if x, ok := m[f]; ok && x != nil {
					if _, isStr := x.(string); !isStr {
						return nil, 0, meridian.Errorf(meridian.EInvalid, "testResultValue[%d].%s must be a string", i, f)
					}
				}
			}
		}
	}
	return r, ts, nil
}

// ListTestCaseResults returns the results of a test case with startTs <= timestamp <=
// endTs (endTs 0: no upper bound), newest first. Errors: EInvalid (bad range),
// ENotFound, EForbidden.
func (s *Entities) ListTestCaseResults(ctx context.Context, p *meridian.Principal, fqn string, startTs, endTs int64) ([]meridian.Entity, error) {
	k, err := s.reg.MustKind("testCase")
	if err != nil {
		return nil, err
	}
	if startTs < 0 || endTs < 0 || (endTs > 0 && endTs < startTs) {
		return nil, meridian.Errorf(meridian.EInvalid, "startTs must not be after endTs")
	}
	var out []meridian.Entity
	err = s.inReadTx(ctx, func(tx Tx) error {
		row, err := getRow(ctx, tx, k, ByName(fqn), IncludeNonDeleted)
		if err != nil {
			return err
		}
		doc, err := s.full(ctx, tx, k, row, map[string]bool{"owners": true})
		if err != nil {
			return err
		}
		if err := s.authorize(p, OpView, k, doc, ownersOf(doc)); err != nil {
			return err
		}
		pts, err := tx.Points(ctx, PointQuery{Series: SeriesTestCaseResult, EntityID: row.ID, From: startTs, To: endTs})
		if err != nil {
			return err
		}
		out = make([]meridian.Entity, 0, len(pts))
		for _, pt := range pts {
			e, err := decode(pt.Doc)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// TestCaseSummary is one test case of an entity with its latest result.
type TestCaseSummary struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	FQN            string         `json:"fullyQualifiedName"`
	EntityLink     string         `json:"entityLink,omitempty"`
	TestDefinition string         `json:"testDefinition,omitempty"`
	Status         string         `json:"testCaseStatus"`
	Timestamp      int64          `json:"timestamp,omitempty"`
	Result         map[string]any `json:"testCaseResult,omitempty"`
}

// TestCasesOf returns the active test cases of each entity (by id; a table's own and
// its columns'), each with its latest result or status NeverRun, ordered by FQN.
// Entities without test cases are absent from the map. It checks View on each test
// case; those the caller may not see are left out.
func (s *Entities) TestCasesOf(ctx context.Context, p *meridian.Principal, ids []string) (map[string][]TestCaseSummary, error) {
	k, err := s.reg.MustKind("testCase")
	if err != nil {
		return nil, err
	}
	out := map[string][]TestCaseSummary{}
	err = s.inReadTx(ctx, func(tx Tx) error {
		for _, id := range ids {
			rels, err := tx.Relations(ctx, RelationQuery{FromID: id, Type: relationTypeContains})
			if err != nil {
				return err
			}
			for _, rel := range rels {
				if rel.ToKind != "testCase" {
					continue
				}
				row, err := tx.Get(ctx, "testCase", rel.ToID)
				if meridian.ErrorCode(err) == meridian.ENotFound {
					continue
				}
				if err != nil {
					return err
				}
				if row.Deleted {
					continue
				}
				doc, err := decode(row.Doc)
				if err != nil {
					return err
				}
				if s.authorize(p, OpView, k, doc, nil) != nil {
					continue
				}
				sum := TestCaseSummary{ID: row.ID, Name: row.Name, FQN: row.FQN, EntityLink: doc.String("entityLink"), Status: StatusNeverRun}
				if def, ok := doc["testDefinition"].(map[string]any); ok {
					sum.TestDefinition, _ = def["fullyQualifiedName"].(string)
				}
				pt, err := tx.LatestPoint(ctx, SeriesTestCaseResult, row.ID)
				switch {
				case err == nil:
					var r map[string]any
					if err := json.Unmarshal(pt.Doc, &r); err != nil {
						return err
					}
					sum.Result, sum.Timestamp = r, pt.Timestamp
					sum.Status, _ = r["testCaseStatus"].(string)
				case meridian.ErrorCode(err) != meridian.ENotFound:
					return err
				}
				out[id] = append(out[id], sum)
			}
			sort.Slice(out[id], func(i, j int) bool { return out[id][i].FQN < out[id][j].FQN })
		}
		return nil
	})
	return out, err
}
