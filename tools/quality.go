package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/store"
)

// Data quality: test definitions and test cases.

const (
	defaultDefinitionsLimit = 10
	maxDefinitionsLimit     = 50
)

// testPlatforms are OpenMetadata's test platforms.
var testPlatforms = []string{"OpenMetadata", "GreatExpectations", "DBT", "Deequ", "Soda", "Other"}

// definitionSummary keeps what a model needs to pick a test and fill its parameters.
func definitionSummary(d meridian.Entity) map[string]any {
	m := map[string]any{}
	for _, f := range []string{"name", "displayName", "fullyQualifiedName", "description", "entityType", "testPlatforms",
		"supportedDataTypes", "parameterDefinition", "provider", "dataQualityDimension"} {
		if v, ok := d[f]; ok {
			m[f] = v
		}
	}
	return m
}

func getTestDefinitions(env *Env) *Tool {
	return &Tool{
		Name:  "get_test_definitions",
		Title: "Get test definitions",
		Description: "List the data-quality test definitions (tableRowCountToBeBetween, columnValuesToBeNotNull, …) with " +
			"their parameters, to choose one for create_test_case. entityType TABLE (default) or COLUMN; testPlatform " +
			"filters by platform. Paged: pass nextCursor back as cursor (or after).",
		Input: Object(Props{
			"entityType":        Enum("Level of the tests: TABLE or COLUMN.", "TABLE", "COLUMN").Default("TABLE"),
			"testPlatform":      Enum("Only tests of this platform.", testPlatforms...),
			"supportedDataType": String("Only column tests that support this column data type, e.g. VARCHAR."),
			"limit":             Integer("Definitions per page (1 to 50; larger values are clamped).").Min(1).Max(maxDefinitionsLimit).Default(defaultDefinitionsLimit),
			"cursor":            Cursor(),
		}),
		Output: OpenObject("One page of test definitions.", pageProps(Props{
			"data": Array("Test definitions.", OpenObject("A test definition.", Props{
				"name":                String("Name, to pass as create_test_case's testDefinitionName."),
				"entityType":          String("TABLE or COLUMN."),
				"parameterDefinition": Array("Parameters: name, dataType, required.", OpenObject("", nil)),
			})),
		})),
		Aliases: map[string]string{"size": "limit"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			offset, err := offsetOf(a, "")
			if err != nil {
				return nil, err
			}
			filters := map[string]string{"entityType": a.String("entityType")}
			if v := a.String("testPlatform"); v != "" {
				filters["testPlatform"] = v
			}
			if v := strings.ToUpper(strings.TrimSpace(a.String("supportedDataType"))); v != "" {
				filters["supportedDataType"] = v
			}
			page, err := env.Entities.List(ctx, p, "testDefinition", store.ListOptions{Limit: store.MaxListLimit, Filters: filters})
			if err != nil {
				return nil, err
			}
			rows := []any{}
			for i := offset; i < len(page.Data) && len(rows) < a.Int("limit"); i++ {
				rows = append(rows, definitionSummary(page.Data[i]))
			}
			Trim(rows)
			n := fitRows(rows, env.Budget-1000)
			out := map[string]any{"data": rows[:n]}
			setPage(out, offset, n, len(page.Data))
			return out, nil
		},
	}
}

// paramValue turns a parameter value argument into the string OpenMetadata stores.
func paramValue(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func createTestCase(env *Env) *Tool {
	return &Tool{
		Name:  "create_test_case",
		Title: "Create test case",
		Description: "Create a data-quality test case on a table, or on one of its columns with columnName, from a test " +
			"definition (see get_test_definitions) and its parameter values, e.g. testDefinitionName " +
			"tableRowCountToBeBetween with parameterValues [{name: minValue, value: \"10\"}]. The parameters must be the " +
			"definition's, and its required ones present. An existing test case of that name is updated." + confirmFirst,
		Input: Object(Props{
			"name":               String("Test case name (no \"::\")."),
			"fqn":                String("Fully qualified name of the table to test."),
			"testDefinitionName": String("Test definition name, e.g. tableRowCountToBeBetween or columnValuesToBeNotNull."),
			"parameterValues": Array("Parameter values; each value is a string.", Object(Props{
				"name":  String("Parameter name, from the definition's parameterDefinition."),
				"value": String("Value, as a string (e.g. \"10\", or a JSON array for ARRAY parameters)."),
			}, "name")),
			"columnName":  String("Column to test, for column-level definitions."),
			"entityType":  String("Type of the tested entity; only table is supported.").Default("table"),
			"description": String("Description.").Default("Test case created by MCP tool"),
		}, "name", "fqn", "testDefinitionName"),
		Output: writeOutput("testCase"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if t := strings.TrimSpace(a.String("entityType")); t != "" && !strings.EqualFold(t, "table") {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Test cases can be created on tables and their columns, not on %s", t),
					"Pass the table's fqn, and columnName for a column test")
			}
			fqn := strings.TrimSpace(a.String("fqn"))
			link := meridian.EntityLink{EntityType: "table", FQN: fqn}
			if col := strings.TrimSpace(a.String("columnName")); col != "" {
				link.Field, link.ArrayField = "columns", col
			}
			params := []any{}
			for i, v := range asList(a["parameterValues"]) {
				m, ok := v.(map[string]any)
				name, _ := m["name"].(string)
				if !ok || strings.TrimSpace(name) == "" {
					return nil, withHint(meridian.Errorf(meridian.EInvalid, "parameterValues[%d] must be {name, value}", i),
						`Pass parameterValues as [{"name": "minValue", "value": "10"}]`)
				}
				params = append(params, map[string]any{"name": name, "value": paramValue(m["value"])})
			}
			body := meridian.Entity{"name": a.String("name"), "displayName": a.String("name"),
				"description": a.String("description"), "testDefinition": strings.TrimSpace(a.String("testDefinitionName")),
				"entityLink": link.String(), "parameterValues": params,
				"computePassedFailedRowCount": false, "useDynamicAssertion": false}
			res, err := env.Entities.CreateOrUpdate(ctx, p, "testCase", body)
			if err != nil {
				msg := meridian.ErrorMessage(err)
				switch {
				case strings.Contains(msg, "testDefinition"):
					return nil, withHint(err, "get_test_definitions lists the test definitions and their parameters")
				case strings.Contains(msg, "Column"):
					return nil, withHint(err, "get_entity_details lists the table's columns")
				case strings.Contains(msg, "arameter"):
					return nil, withHint(err, "get_test_definitions shows the definition's parameterDefinition")
				case meridian.ErrorCode(err) == meridian.ENotFound:
					return nil, withHint(err, fmt.Sprintf("No table has the fullyQualifiedName %q; use search_metadata with entityType table to find it", fqn))
				}
				return nil, err
			}
			return written("testCase", res), nil
		},
	}
}

// qualitySection is get_entity_details' include quality: the entity's test cases (a
// table's own and its columns') with their latest status, counted by status.
func qualitySection(ctx context.Context, env *Env, p *meridian.Principal, k *meridian.Kind, e meridian.Entity) (map[string]any, error) {
	sums, err := quality.TestCasesOf(ctx, env.Entities, p, []string{e.ID()})
	if err != nil {
		return nil, err
	}
	list := sums[e.ID()]
	counts := map[string]int{}
	tests := []any{}
	for _, t := range list {
		counts[t.Status]++
		if len(tests) >= sectionLimit {
			continue
		}
		m := map[string]any{"name": t.Name, "fqn": t.FQN, "testCaseStatus": t.Status}
		if t.TestDefinition != "" {
			m["testDefinition"] = t.TestDefinition
		}
		if link, err := meridian.ParseEntityLink(t.EntityLink); err == nil && link.Field == "columns" {
			m["column"] = link.ArrayField
		}
		if t.Timestamp > 0 {
			m["timestamp"] = t.Timestamp
		}
		if r, ok := t.Result["result"].(string); ok && r != "" {
			m["result"] = r
			TrimText(m, "result", lineageSQLLimit)
		}
		tests = append(tests, m)
	}
	status := "none"
	switch {
	case counts["Failed"] > 0:
		status = "failed"
	case counts["Success"] > 0:
		status = "success"
	}
	return map[string]any{"status": status, "total": len(list), "success": counts["Success"], "failed": counts["Failed"],
		"aborted": counts["Aborted"], "queued": counts["Queued"], "neverRun": counts[quality.StatusNeverRun],
		"tests": tests, "testsTruncated": len(tests) < len(list)}, nil
}
