package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/meridian-catalog/meridian"
)

// Data quality: the built-in test definitions and the rules a test case and a test
// definition follow. Test case results are the quality module's (package quality).
//
// Choices, where OpenMetadata leaves room:
//   - The test case document does not store its latest result (the quality module
//     computes testCaseStatus and testCaseResult on reads); values a client writes into
//     either field are dropped.
//   - Test definitions with provider "system" are seeded at start (SeedTestDefinitions)
//     and cannot be deleted. Only the system principal (isSystem) may create one or
//     change one; others get EInvalid.

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
