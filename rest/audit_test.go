package rest

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestTopLevelStringsReadsACutBody(t *testing.T) {
	cases := []struct {
		body string
		want map[string]string
	}{
		{`{"columns":[{"id":"x"}],"id":"abc","fullyQualifiedName":"a.b"}`, map[string]string{"id": "abc", "fullyQualifiedName": "a.b"}},
		{`{"id":"abc","nested":{"fullyQualifiedName":"no"`, map[string]string{"id": "abc"}},
		{`{"code":403,"message":"Principal: x not allowed"}`, map[string]string{"message": "Principal: x not allowed"}},
		{`{"id":{"a":1},"message":"m"}`, map[string]string{"message": "m"}},
		{`[1,2]`, map[string]string{}},
		{``, map[string]string{}},
	}
	for _, c := range cases {
		got := topLevelStrings([]byte(c.body), "id", "fullyQualifiedName", "message")
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.body, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.body, k, got[k], v)
			}
		}
	}
}

func TestAuditWriterTakesTheTargetFromAnObjectAnswer(t *testing.T) {
	cases := []struct {
		name         string
		status       int
		answer       any
		noted        bool
		id, fqn      string
		keepsTheBody bool
	}{
		{"an entity", 201, meridian.Entity{"id": "i1", "fullyQualifiedName": "s.d.t", "columns": []any{}}, true, "i1", "s.d.t", false},
		{"an object without a name", 200, map[string]any{"id": "i2"}, true, "i2", "", false},
		{"a typed answer", 200, struct {
			ID string `json:"id"`
		}{"i3"}, false, "", "", true},
		{"an error", 404, map[string]any{"code": 404, "message": "gone"}, false, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			aw := &auditWriter{ResponseWriter: httptest.NewRecorder(), capture: auditCapture}
			// Wrapped again, as absoluteHrefs does between the audit middleware and a handler.
			writeJSON(&hrefWriter{ResponseWriter: aw, base: "http://x"}, c.status, c.answer)
			if aw.noted != c.noted || aw.id != c.id || aw.fqn != c.fqn {
				t.Errorf("noted %v %q %q, want %v %q %q", aw.noted, aw.id, aw.fqn, c.noted, c.id, c.fqn)
			}
			if kept := aw.body.Len() > 0; kept != c.keepsTheBody {
				t.Errorf("kept the body: %v, want %v", kept, c.keepsTheBody)
			}
		})
	}
}

func FuzzTopLevelStrings(f *testing.F) {
	f.Add([]byte(`{"id":"abc","fullyQualifiedName":"a.b","message":"m"}`))
	f.Add([]byte(`{"a":[{"b":[1,{"c":"d"}]}],"id":"x"`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got := topLevelStrings(body, "id", "fullyQualifiedName", "message")
		if len(got) > 3 {
			t.Fatalf("more keys than asked: %v", got)
		}
	})
}

func FuzzActivitySettings(f *testing.F) {
	f.Add([]byte(`{"retentionDays":30,"domains":[{"domain":"Finance","retentionDays":7}]}`))
	f.Add([]byte(`{"retentionDays":1e300,"domains":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			return
		}
		set, err := settingsFrom(meridian.Entity(m))
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("error %v is not invalid", err)
			}
			return
		}
		if set.RetentionDays > 1e9 || set.RetentionDays < -1e9 {
			t.Fatalf("unbounded days %d", set.RetentionDays)
		}
	})
}

// FuzzCollabRequestsNeverFailInternally sends arbitrary requests to the activity, audit
// and execution routes: every answer is below 500.
func FuzzCollabRequestsNeverFailInternally(f *testing.F) {
	fx := newFixture(f)
	h := fx.srv.Config.Handler
	for _, s := range []struct{ method, path, body string }{
		{"GET", "/api/v1/activity?limit=5&after=abc&startTs=1&endTs=2&entityType=table", ""},
		{"GET", "/api/v1/activity/entity/table/name/a.b%00c", ""},
		{"GET", "/api/v1/activity/user/%00", ""},
		{"PUT", "/api/v1/activity/settings", `{"retentionDays":7,"domains":[{"domain":"x","retentionDays":1}]}`},
		{"GET", "/api/v1/audit/logs?q=%25_%5C&userName=a&kind=write&startTs=5&endTs=1", ""},
		{"GET", "/api/v1/audit/logs/export?format=json&q=x", ""},
		{"POST", "/api/v1/mcpExecutions", `{"server":{"type":"mcpServer"},"serverId":"0b6f7f4e-58a8-4f0e-9d0e-2c1f4c5a6b7d","timestamp":1767225600000,"status":"Running"}`},
		{"GET", "/api/v1/mcpExecutions?serverId=x&startTs=1", ""},
		{"DELETE", "/api/v1/agentExecutions/0b6f7f4e-58a8-4f0e-9d0e-2c1f4c5a6b7d/99999999999999999999", ""},
		{"GET", "/api/v1/agentExecutions/0b6f7f4e-58a8-4f0e-9d0e-2c1f4c5a6b7d?include=all", ""},
	} {
		f.Add(s.method, s.path, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
		default:
			return
		}
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		fuzzJSONRequest(t, h, fx.admin, method, "http://meridian"+path, body)
	})
}
