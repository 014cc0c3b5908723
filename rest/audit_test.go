package rest

import (
	"encoding/json"
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
