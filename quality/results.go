package quality

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// AddResult records a result of the test case named by fqn, replacing one at the same
// timestamp, and returns the stored result. The result and its change event commit
// together. Errors: EInvalid (timestamp not in milliseconds, bad status or shape),
// ENotFound, EForbidden.
func AddResult(ctx context.Context, ents *store.Entities, p *meridian.Principal, fqn string, result meridian.Entity) (meridian.Entity, error) {
	r, ts, err := checkResult(result)
	if err != nil {
		return nil, err
	}
	err = ents.InTx(ctx, true, func(tx store.Tx) error {
		row, doc, err := ents.Load(ctx, tx, p, store.OpEdit, testCaseKind, store.ByFQN(fqn), store.IncludeNonDeleted)
		if err != nil {
			return err
		}
		r["testCaseFQN"] = row.FQN
		if id, _ := r["id"].(string); id == "" {
			r["id"] = uuid.NewString()
		}
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if err := PutPoint(ctx, tx.SQL(), Point{Series: SeriesTestCaseResult, EntityID: row.ID, Timestamp: ts, Doc: b}); err != nil {
			return err
		}
		return ents.RecordChange(ctx, tx, p, testCaseKind, doc, meridian.ChangeDescription{
			FieldsAdded: []meridian.FieldChange{}, FieldsDeleted: []meridian.FieldChange{},
			FieldsUpdated: []meridian.FieldChange{{Name: fieldResult, NewValue: string(b)}}})
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
	status, _ := r[fieldStatus].(string)
	if !slices.Contains(TestCaseStatuses, status) {
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

// ListResults returns the results of the test case named by fqn with startTs <=
// timestamp <= endTs (endTs 0: no upper bound), newest first. Errors: EInvalid (bad
// range), ENotFound, EForbidden.
func ListResults(ctx context.Context, ents *store.Entities, p *meridian.Principal, fqn string, startTs, endTs int64) ([]meridian.Entity, error) {
	if startTs < 0 || endTs < 0 || (endTs > 0 && endTs < startTs) {
		return nil, meridian.Errorf(meridian.EInvalid, "startTs must not be after endTs")
	}
	var out []meridian.Entity
	err := ents.InTx(ctx, false, func(tx store.Tx) error {
		row, _, err := ents.Load(ctx, tx, p, store.OpView, testCaseKind, store.ByFQN(fqn), store.IncludeNonDeleted)
		if err != nil {
			return err
		}
		pts, err := Points(ctx, tx.SQL(), PointQuery{Series: SeriesTestCaseResult, EntityID: row.ID, From: startTs, To: endTs})
		if err != nil {
			return err
		}
		out = make([]meridian.Entity, 0, len(pts))
		for _, pt := range pts {
			var e meridian.Entity
			if err := json.Unmarshal(pt.Doc, &e); err != nil {
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
// Entities without test cases are absent from the map. Test cases the caller may not
// View are left out. Errors: those of the store.
func TestCasesOf(ctx context.Context, ents *store.Entities, p *meridian.Principal, ids []string) (map[string][]TestCaseSummary, error) {
	out := map[string][]TestCaseSummary{}
	err := ents.InTx(ctx, false, func(tx store.Tx) error {
		for _, id := range ids {
			rels, err := tx.Relations(ctx, store.RelationQuery{FromID: id, Type: store.RelationContains})
			if err != nil {
				return err
			}
			for _, rel := range rels {
				if rel.ToKind != testCaseKind {
					continue
				}
				row, doc, err := ents.Load(ctx, tx, p, store.OpView, testCaseKind, store.ByID(rel.ToID), store.IncludeNonDeleted)
				switch meridian.ErrorCode(err) {
				case "":
				case meridian.ENotFound, meridian.EForbidden, meridian.EUnauthorized:
					continue
				default:
					return err
				}
				sum := TestCaseSummary{ID: row.ID, Name: row.Name, FQN: row.FQN, EntityLink: doc.String("entityLink"), Status: StatusNeverRun}
				if def, ok := doc["testDefinition"].(map[string]any); ok {
					sum.TestDefinition, _ = def["fullyQualifiedName"].(string)
				}
				r, ts, err := latestResult(ctx, tx.SQL(), row.ID)
				if err != nil {
					return err
				}
				if r != nil {
					sum.Result, sum.Timestamp = r, ts
					sum.Status, _ = r[fieldStatus].(string)
				}
				out[id] = append(out[id], sum)
			}
			sort.Slice(out[id], func(i, j int) bool { return out[id][i].FQN < out[id][j].FQN })
		}
		return nil
	})
	return out, err
}
