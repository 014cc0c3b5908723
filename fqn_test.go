package meridian

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitFQNParsesQuotedParts(t *testing.T) {
	cases := []struct {
		fqn  string
		want []string
	}{
		{"svc", []string{"svc"}},
		{"svc.db.sch.tbl", []string{"svc", "db", "sch", "tbl"}},
		{`"prod.mysql".sales.public."order.items"`, []string{"prod.mysql", "sales", "public", "order.items"}},
		{`a."b.c"`, []string{"a", "b.c"}},
		{"a b.c-d", []string{"a b", "c-d"}},
		{"ünï.cödé", []string{"ünï", "cödé"}},
	}
	for _, c := range cases {
		got, err := SplitFQN(c.fqn)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitFQN(%q) = %q, %v; want %q", c.fqn, got, err, c.want)
		}
		if back := BuildFQN(got...); back != c.fqn {
			t.Errorf("BuildFQN(%q) = %q, want %q", got, back, c.fqn)
		}
	}
}

func TestSplitFQNRejectsMalformedNames(t *testing.T) {
	for _, fqn := range []string{"", ".", "a.", ".a", "a..b", `"a`, `a"b`, `"ab"`, `"a.b"c`, `"a.b".`, `a."b`,
		strings.Repeat("x", MaxFQNLength+1)} {
		if parts, err := SplitFQN(fqn); err == nil || ErrorCode(err) != EInvalid {
			t.Errorf("SplitFQN(%q) = %q, %v; want an invalid error", fqn, parts, err)
		}
	}
}

func TestNormalizeFQNDropsNeedlessQuotes(t *testing.T) {
	got, err := NormalizeFQN(`svc."db.x".t`)
	if err != nil || got != `svc."db.x".t` {
		t.Fatalf("NormalizeFQN = %q, %v", got, err)
	}
	if p, _ := ParentFQN(`svc."db.x".t`); p != `svc."db.x"` {
		t.Fatalf("ParentFQN = %q", p)
	}
}

func TestValidateNameRules(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
		msg  string
	}{
		{"orders", true, ""},
		{"order.items", true, ""},
		{"", false, "name must not be empty"},
		{"   ", false, "name must not be empty"},
		{"a::b", false, "name must not contain '::'"},
		{`a"b`, false, `Invalid name a"b`},
		{strings.Repeat("n", 256), true, ""},
		{strings.Repeat("n", 257), false, "name size must be between 1 and 256"},
		{"a\nb", false, "name must not contain control characters (U+000A)"},
		{"a\x00b", false, "name must not contain control characters (U+0000)"},
		{"tab\there", false, "name must not contain control characters (U+0009)"},
		{"del\x7f", false, "name must not contain control characters (U+007F)"},
		{"c1\u0085", false, "name must not contain control characters (U+0085)"},
		{"invoice\u202Efdp.exe", false, "name must not contain bidirectional formatting characters (U+202E)"},
		{"\u202Aleft", false, "name must not contain bidirectional formatting characters (U+202A)"},
		{"iso\u2066late\u2069", false, "name must not contain bidirectional formatting characters (U+2066)"},
		{"mark\u200F", false, "name must not contain bidirectional formatting characters (U+200F)"},
		{"bad\xffutf8", false, "name must be valid UTF-8"},
		{"caf\u00e9_\u6570\u636e", true, ""},
		{"emoji_\U0001F600", true, ""},
		{"replacement\uFFFD", true, ""},
	}
	for _, c := range cases {
		err := ValidateName("name", c.name)
		if (err == nil) != c.ok || (err != nil && ErrorMessage(err) != c.msg) {
			t.Errorf("ValidateName(%q) = %v, want ok=%v %q", c.name, err, c.ok, c.msg)
		}
	}
}

func FuzzSplitFQN(f *testing.F) {
	for _, s := range []string{"a.b.c", `"a.b".c`, `a."b.c"`, `""`, `"."`, "..", `"a`, "ü.ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := SplitFQN(s)
		if err != nil {
			if ErrorCode(err) != EInvalid {
				t.Fatalf("SplitFQN(%q) error code %q", s, ErrorCode(err))
			}
			return
		}
		if len(parts) == 0 {
			t.Fatalf("SplitFQN(%q) gave no parts", s)
		}
		again, err := SplitFQN(BuildFQN(parts...))
		if err != nil || !reflect.DeepEqual(again, parts) {
			t.Fatalf("round trip of %q: %q -> %q, %v", s, parts, again, err)
		}
	})
}
