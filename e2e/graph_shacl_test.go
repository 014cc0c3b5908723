package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// shaclTitled requires a display name on every table.
const shaclTitled = `@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix mer: <https://meridian-catalog.github.io/ontology#> .
@prefix dct: <http://purl.org/dc/terms/> .
<urn:shape:TableTitle> a sh:NodeShape ; sh:targetClass mer:Table ;
  sh:property [ sh:path dct:title ; sh:minCount 1 ; sh:message "a table needs a display name" ] .`

func TestShaclShapesAndValidationEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	reader, _, mart := graphFixture(t, s)
	c := s.admin

	// Stored shapes are a kind with the standard operations.
	r := c.do("POST", "/api/v1/shaclShapes", map[string]any{"name": "broken", "shapes": "@prefix sh: <"}, nil)
	expectError(t, r, http.StatusBadRequest, "Turtle")
	shape := c.must(http.StatusCreated, "POST", "/api/v1/shaclShapes", map[string]any{"name": "titled", "shapes": shaclTitled})
	got := c.must(http.StatusOK, "GET", "/api/v1/shaclShapes/name/titled", nil)
	if got["id"] != shape["id"] || !strings.Contains(str(got["shapes"]), "sh:minCount") {
		t.Fatalf("GET by name: %v", got)
	}
	if n := len(list(c.must(http.StatusOK, "GET", "/api/v1/shaclShapes", nil)["data"])); n != 1 {
		t.Fatalf("list: %d shapes", n)
	}

	focus := map[string]any{"shapeName": "titled", "entityType": "table", "fqn": mart["fullyQualifiedName"]}
	eventually(t, 5*time.Second, "a violation is found", func() bool {
		out, isErr := mcpTool(t, reader.c, "shacl_validate", focus)
		return !isErr && out["conforms"] == false && strings.Contains(str(list(out["results"])[0].(map[string]any)["message"]), "display name")
	})
	c.must(http.StatusOK, "PATCH", "/api/v1/tables/name/"+str(mart["fullyQualifiedName"]),
		[]any{map[string]any{"op": "add", "path": "/displayName", "value": "Orders mart"}})
	eventually(t, 5*time.Second, "the fixed table conforms", func() bool {
		out, isErr := mcpTool(t, reader.c, "shacl_validate", focus)
		return !isErr && out["conforms"] == true
	})
	out, isErr := mcpTool(t, reader.c, "shacl_validate", map[string]any{"shapes": "not turtle {", "class": "mer:Table"})
	if !isErr || out["statusCode"] != float64(400) {
		t.Fatalf("bad shapes: %v", out)
	}
	c.must(http.StatusOK, "DELETE", "/api/v1/shaclShapes/name/titled?hardDelete=true", nil)
	out, isErr = mcpTool(t, reader.c, "shacl_validate", focus)
	if !isErr || out["statusCode"] != float64(404) {
		t.Fatalf("deleted shape: %v", out)
	}
}
