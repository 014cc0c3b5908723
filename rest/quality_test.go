package rest

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

func TestTestCaseResultsAPI(t *testing.T) {
	f := newFixture(t)
	if _, err := f.ents.SeedTestDefinitions(context.Background()); err != nil {
		t.Fatal(err)
	}
	lineageCatalog(t, f)
	r := f.call(http.MethodGet, "/api/v1/dataQuality/testDefinitions?entityType=COLUMN&limit=100", "")
	if r.status != http.StatusOK || r.json(t)["paging"].(map[string]any)["total"] != float64(16) {
		t.Fatalf("column definitions: %d %s", r.status, r.body)
	}
	r = f.call(http.MethodPost, "/api/v1/dataQuality/testCases", `{"name":"rows","entityLink":"<#E::table::svc.db.sch.a>",
		"testDefinition":"tableRowCountToBeBetween","parameterValues":[{"name":"minValue","value":"1"}]}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create test case: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	fqn := "svc.db.sch.a.rows"

	r = f.call(http.MethodPut, "/api/v1/dataQuality/testCases/"+url.PathEscape(fqn)+"/testCaseResult",
		`{"timestamp":1735689600000,"testCaseStatus":"Failed","result":"Found 0 rows","testResultValue":[{"name":"rowCount","value":"0"}]}`)
	if r.status != http.StatusOK || r.json(t)["testCaseFQN"] != fqn {
		t.Fatalf("put result: %d %s", r.status, r.body)
	}
	r = f.call(http.MethodPost, "/api/v1/dataQuality/testCases/testCaseResults/"+fqn, `{"timestamp":1735776000000,"testCaseStatus":"Success"}`)
	if r.status != http.StatusOK {
		t.Fatalf("post result: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/api/v1/dataQuality/testCases/testCaseResults/" + fqn, "/api/v1/dataQuality/testCases/" + fqn + "/testCaseResult"} {
		r = f.call(http.MethodGet, path+"?startTs=1735689600000&endTs=1735776000000", "")
		body := r.json(t)
		data := body["data"].([]any)
		if r.status != http.StatusOK || len(data) != 2 || data[0].(map[string]any)["testCaseStatus"] != "Success" ||
			body["paging"].(map[string]any)["total"] != float64(2) {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	r = f.call(http.MethodGet, "/api/v1/dataQuality/testCases/testCaseResults/"+fqn+"?startTs=1735700000000", "")
	if len(r.json(t)["data"].([]any)) != 1 {
		t.Fatalf("startTs: %s", r.body)
	}

	r = f.call(http.MethodGet, "/api/v1/dataQuality/testCases/"+id+"?fields=testCaseResult", "")
	got := r.json(t)
	if got["testCaseResult"].(map[string]any)["testCaseStatus"] != "Success" || got["version"] != 0.1 {
		t.Fatalf("with fields: %s", r.body)
	}
	r = f.call(http.MethodGet, "/api/v1/dataQuality/testCases/name/"+fqn, "")
	if got := r.json(t); got["testCaseResult"] != nil || got["testCaseStatus"] != "Success" {
		t.Fatalf("without fields: %s", r.body)
	}

	for _, c := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{http.MethodPut, "/api/v1/dataQuality/testCases/" + fqn + "/testCaseResult", `{"timestamp":1735689600,"testCaseStatus":"Success"}`, 400,
			"Timestamp 1735689600 is not valid, it should be in milliseconds since epoch"},
		{http.MethodPut, "/api/v1/dataQuality/testCases/" + fqn + "/testCaseResult", `{"timestamp":1735689600000,"testCaseStatus":"Done"}`, 400,
			"testCaseStatus must be one of Success, Failed, Aborted, Queued"},
		{http.MethodPost, "/api/v1/dataQuality/testCases/testCaseResults/svc.db.sch.a.nope", `{"timestamp":1735689600000,"testCaseStatus":"Success"}`, 404, ""},
		{http.MethodGet, "/api/v1/dataQuality/testCases/testCaseResults/" + fqn + "?startTs=yesterday", "", 400, ""},
		{http.MethodPost, "/api/v1/dataQuality/testCases", `{"name":"bad","entityLink":"<#E::table::svc.db.sch.a>","testDefinition":"tableRowCountToBeBetween","parameterValues":[{"name":"rows","value":"1"}]}`, 400, ""},
		{http.MethodDelete, "/api/v1/dataQuality/testDefinitions/name/columnValuesToBeUnique?hardDelete=true", "", 400,
			"System entity [columnValuesToBeUnique] of type testDefinition can not be deleted."},
	} {
		wantError(t, f.call(c.method, c.path, c.body), c.status, c.msg)
	}
	// Hard-deleting the table takes the test case and its results.
	if r := f.call(http.MethodDelete, "/api/v1/tables/name/svc.db.sch.a?hardDelete=true&recursive=true", ""); r.status != http.StatusNoContent {
		t.Fatalf("delete table: %d %s", r.status, r.body)
	}
	wantError(t, f.call(http.MethodGet, "/api/v1/dataQuality/testCases/testCaseResults/"+fqn, ""), 404, "")
}
