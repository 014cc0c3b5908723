package rest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestInvalidUTF8IsRefusedNamingTheField(t *testing.T) {
	for _, c := range []struct {
		body string
		want string
	}{
		{"{\"name\":\"bad\xff\"}", "name must be valid UTF-8"},
		{"{\"name\":\"ok\",\"columns\":[{\"name\":\"id\"},{\"name\":\"x\xc3\"}]}", "columns[1].name must be valid UTF-8"},
		{"{\"a\":{\"b\":[1,2,\"\xfe\"]}}", "a.b[2] must be valid UTF-8"},
		{"{\"k\xff\":1}", "k\ufffd must be valid UTF-8"},
		{"\"\xff\"", "Invalid request format: the body is not valid UTF-8 (byte offset 1)"},
		{"{\"a\": \xff}", "Invalid request format: the body is not valid UTF-8 (byte offset 6)"},
	} {
		err := checkUTF8([]byte(c.body))
		if meridian.ErrorCode(err) != meridian.EInvalid || meridian.ErrorMessage(err) != c.want {
			t.Errorf("checkUTF8(%q) = %v, want %q", c.body, err, c.want)
		}
	}
	if err := checkUTF8([]byte(`{"name":"café_数据"}`)); err != nil {
		t.Errorf("valid UTF-8 refused: %v", err)
	}
}

func TestCreateWithInvalidUTF8NameIs400(t *testing.T) {
	f := newFixture(t)
	r := f.call("POST", "/api/v1/services/databaseServices", "{\"name\":\"ware\xffhouse\",\"serviceType\":\"Mysql\"}")
	wantError(t, r, http.StatusBadRequest, "name must be valid UTF-8")
	r = f.call("POST", "/api/v1/services/databaseServices", "{\"name\":\"evil\u202Eexe\",\"serviceType\":\"Mysql\"}")
	wantError(t, r, http.StatusBadRequest, "name must not contain bidirectional formatting characters (U+202E)")
}

func TestAPathOrQueryHoldingANULIs400(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/v1/tables?database=a%00b"},
		{"GET", "/api/v1/tasks?about=a%00b"},
		{"GET", "/api/v1/tables/name/a%00b"},
		{"PATCH", "/api/v1/glossaries/name/g%00"},
		{"DELETE", "/api/v1/mcpExecutions/a%00b"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := f.call(tc.method, tc.path, "")
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "NUL") {
				t.Fatalf("%d %s, want 400 naming NUL", r.status, r.body)
			}
		})
	}
	if r := f.do("GET", "/api/v1/tables?database=a%00b", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("without a token: %d, want 401 first", r.status)
	}
}
