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

// systemPrincipal writes seeded data.
var systemPrincipal = &meridian.Principal{Name: "system", Roles: []string{meridian.RoleAdmin}}

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
		res, err := s.CreateOrUpdate(ctx, systemPrincipal, "testDefinition", d)
		if err != nil {
			return n, fmt.Errorf("seed test definition %s: %w", d.Name(), err)
		}
		if res.Change != meridian.EventEntityNoChange {
			n++
		}
	}
	return n, nil
}

// isSystem reports whether p is the engine's own principal, which seeds the built-in
// test definitions and makes the binary's bootstrap writes: named "system" and bound to
// no user entity (a user named "system" has an id). A nil principal is an internal call.
func isSystem(p *meridian.Principal) bool {
	return p == nil || (p.Name == systemPrincipal.Name && p.ID == "")
}

// checkSystemDefinition keeps the system test definitions to the system principal:
// another caller may neither change one (even its provider) nor create or turn a
// definition into one. EInvalid, as OpenMetadata answers for system entities.
func checkSystemDefinition(p *meridian.Principal, k *meridian.Kind, old, next meridian.Entity) error {
	if k.Name != "testDefinition" || isSystem(p) {
		return nil
	}
	if old != nil && old.String("provider") == "system" {
		return meridian.Errorf(meridian.EInvalid, "System entity [%s] of type testDefinition can not be modified.", old.Name())
	}
	if next.String("provider") == "system" {
		return meridian.Errorf(meridian.EInvalid, "Test definition [%s] can't have provider system: only the built-in test definitions are system ones. Use provider user.", next.Name())
	}
	return nil
}

// checkDeletable refuses to delete a system entity: a seeded test definition.
func checkDeletable(k *meridian.Kind, e meridian.Entity) error {
	if k.Name == "testDefinition" && e.String("provider") == "system" {
		return meridian.Errorf(meridian.EInvalid, "System entity [%s] of type testDefinition can not be deleted.", e.Name())
	}
	return nil
}

// prepareTestCase checks a test case draft against its test definition and its
// table: the parameter values must be the definition's parameters (the required ones
// present), a column test must link to an existing column, and a TABLE definition
// needs a table link, a COLUMN definition a column link. The derived fields
// testCaseResult and testCaseStatus are dropped.
func (s *Entities) prepareTestCase(ctx context.Context, tx Tx, k *meridian.Kind, e, table meridian.Entity) error {
	if k.Name != "testCase" {
		return nil
	}
	delete(e, "testCaseResult")
	delete(e, "testCaseStatus")
	ref, _ := e["testDefinition"].(map[string]any)
	id, _ := ref["id"].(string)
	if id == "" {
		return nil
	}
	row, err := tx.Get(ctx, "testDefinition", id)
	if err != nil {
		return err
	}
	def, err := decode(row.Doc)
	if err != nil {
		return err
	}
	link, err := meridian.ParseEntityLink(e.String("entityLink"))
	if err != nil {
		return err
	}
	column := link.Field == "columns"
	if column && table != nil {
		found := false
		for _, c := range asList(table["columns"]) {
			m, _ := c.(map[string]any)
			if m["name"] == link.ArrayField {
				found = true
				break
			}
		}
		if !found {
			return meridian.Errorf(meridian.ENotFound, "Column %s not found in table %s", link.ArrayField, link.FQN)
		}
	}
	switch def.String("entityType") {
	case "COLUMN":
		if !column {
			return meridian.Errorf(meridian.EInvalid, "Test definition %s tests a column: link the test case to a column (<#E::table::<fqn>::columns::<column>>)", def.Name())
		}
	case "TABLE":
		if column {
			return meridian.Errorf(meridian.EInvalid, "Test definition %s tests a table: link the test case to the table, not to a column", def.Name())
		}
	}
	return checkParameters(def, e["parameterValues"])
}

// checkParameters checks parameter values against a definition's parameterDefinition.
func checkParameters(def meridian.Entity, values any) error {
	defined := map[string]bool{}
	var names []string
	for _, p := range asList(def["parameterDefinition"]) {
		m, _ := p.(map[string]any)
		if name, _ := m["name"].(string); name != "" {
			defined[name] = true
			names = append(names, name)
		}
	}
	given := map[string]bool{}
	for i, v := range asList(values) {
		m, ok := v.(map[string]any)
		if !ok {
			return meridian.Errorf(meridian.EInvalid, "parameterValues[%d] must be an object {name, value}", i)
		}
		name, _ := m["name"].(string)
		if !defined[name] {
			known := "it has no parameters"
			if len(names) > 0 {
				known = "its parameters are " + strings.Join(names, ", ")
			}
			return meridian.Errorf(meridian.EInvalid, "Parameter '%s' is not defined by test definition %s: %s", name, def.Name(), known)
		}
		if given[name] {
			return meridian.Errorf(meridian.EInvalid, "Parameter '%s' is given twice", name)
		}
		given[name] = true
	}
	for _, p := range asList(def["parameterDefinition"]) {
		m, _ := p.(map[string]any)
		name, _ := m["name"].(string)
		if req, _ := m["required"].(bool); req && !given[name] {
			return meridian.Errorf(meridian.EInvalid, "Required parameter '%s' of test definition %s is missing from parameterValues", name, def.Name())
		}
	}
	return nil
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
