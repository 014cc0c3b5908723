package meridian

import (
	"context"
	"strings"
)

// BasicTestSuiteName is the name of a table's basic test suite, as OpenMetadata names
// it: the table's FQN plus ".testSuite".
func BasicTestSuiteName(tableFQN string) string { return tableFQN + ".testSuite" }

// BasicTestSuite is the create body of a table's basic test suite, which holds the test
// cases linked to the table and its columns.
func BasicTestSuite(table Entity) Entity {
	return Entity{"name": BasicTestSuiteName(table.String("fullyQualifiedName")), "basic": true,
		"description":          "The basic test suite of " + table.String("fullyQualifiedName") + ".",
		"basicEntityReference": map[string]any{"id": table.ID(), "type": "table"}}
}

// validateTestDefinition keeps the system test definitions to the system principal:
// another caller may neither change one (even its provider) nor create or turn a
// definition into one. EInvalid, as OpenMetadata answers for system entities.
func validateTestDefinition(_ context.Context, _ Catalog, w *Write) error {
	if w.Principal.IsSystem() {
		return nil
	}
	if w.Old != nil && w.Old.String("provider") == "system" {
		return Errorf(EInvalid, "System entity [%s] of type testDefinition can not be modified.", w.Old.Name())
	}
	if w.New.String("provider") == "system" {
		return Errorf(EInvalid, "Test definition [%s] can't have provider system: only the built-in test definitions are system ones. Use provider user.", w.New.Name())
	}
	return nil
}

// deletableTestDefinition refuses to delete a seeded (system) test definition.
func deletableTestDefinition(_ *Principal, e Entity) error {
	if e.String("provider") == "system" {
		return Errorf(EInvalid, "System entity [%s] of type testDefinition can not be deleted.", e.Name())
	}
	return nil
}

// validateTestCase checks a test case against its test definition and its table: the
// parameter values must be the definition's parameters (the required ones present), a
// column test must link to an existing column of the table, and a TABLE definition
// needs a table link, a COLUMN definition a column link.
func validateTestCase(ctx context.Context, c Catalog, w *Write) error {
	e := w.New
	ref, _ := e["testDefinition"].(map[string]any)
	id, _ := ref["id"].(string)
	if id == "" {
		return nil
	}
	def, err := c.Get(ctx, "testDefinition", id)
	if err != nil {
		return err
	}
	link, err := ParseEntityLink(e.String("entityLink"))
	if err != nil {
		return err
	}
	column := link.Field == "columns"
	if table := w.Parent; column && table != nil {
		found := false
		for _, col := range listOf(table["columns"]) {
			m, _ := col.(map[string]any)
			if m["name"] == link.ArrayField {
				found = true
				break
			}
		}
		if !found {
			return Errorf(ENotFound, "Column %s not found in table %s", link.ArrayField, link.FQN)
		}
	}
	switch def.String("entityType") {
	case "COLUMN":
		if !column {
			return Errorf(EInvalid, "Test definition %s tests a column: link the test case to a column (<#E::table::<fqn>::columns::<column>>)", def.Name())
		}
	case "TABLE":
		if column {
			return Errorf(EInvalid, "Test definition %s tests a table: link the test case to the table, not to a column", def.Name())
		}
	}
	return checkParameters(def, e["parameterValues"])
}

// checkParameters checks parameter values against a definition's parameterDefinition.
func checkParameters(def Entity, values any) error {
	defined := map[string]bool{}
	var names []string
	for _, p := range listOf(def["parameterDefinition"]) {
		m, _ := p.(map[string]any)
		if name, _ := m["name"].(string); name != "" {
			defined[name] = true
			names = append(names, name)
		}
	}
	given := map[string]bool{}
	for i, v := range listOf(values) {
		m, ok := v.(map[string]any)
		if !ok {
			return Errorf(EInvalid, "parameterValues[%d] must be an object {name, value}", i)
		}
		name, _ := m["name"].(string)
		if !defined[name] {
			known := "it has no parameters"
			if len(names) > 0 {
				known = "its parameters are " + strings.Join(names, ", ")
			}
			return Errorf(EInvalid, "Parameter '%s' is not defined by test definition %s: %s", name, def.Name(), known)
		}
		if given[name] {
			return Errorf(EInvalid, "Parameter '%s' is given twice", name)
		}
		given[name] = true
	}
	for _, p := range listOf(def["parameterDefinition"]) {
		m, _ := p.(map[string]any)
		name, _ := m["name"].(string)
		if req, _ := m["required"].(bool); req && !given[name] {
			return Errorf(EInvalid, "Required parameter '%s' of test definition %s is missing from parameterValues", name, def.Name())
		}
	}
	return nil
}

// listOf returns v as a list, or nil when it is not one.
func listOf(v any) []any { l, _ := v.([]any); return l }
