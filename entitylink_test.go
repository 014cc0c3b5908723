package meridian

import "testing"

func TestParseEntityLinkAcceptsTableAndColumnLinks(t *testing.T) {
	cases := []struct {
		link     string
		want     EntityLink
		fieldFQN string
	}{
		{"<#E::table::svc.db.sch.tbl>", EntityLink{EntityType: "table", FQN: "svc.db.sch.tbl"}, "svc.db.sch.tbl"},
		{"<#E::table::svc.db.sch.tbl::columns::zip>", EntityLink{EntityType: "table", FQN: "svc.db.sch.tbl", Field: "columns", ArrayField: "zip"}, "svc.db.sch.tbl.zip"},
		{`<#E::table::"a.b".db.sch.tbl::columns::c.d>`, EntityLink{EntityType: "table", FQN: `"a.b".db.sch.tbl`, Field: "columns", ArrayField: "c.d"}, `"a.b".db.sch.tbl."c.d"`},
		{"<#E::glossaryTerm::g.t::description>", EntityLink{EntityType: "glossaryTerm", FQN: "g.t", Field: "description"}, "g.t"},
		{"<#E::table::s.d.c.t::columns::a:b::description>", EntityLink{EntityType: "table", FQN: "s.d.c.t", Field: "columns", ArrayField: "a:b", ArrayValue: "description"}, "s.d.c.t.a:b"},
	}
	for _, c := range cases {
		got, err := ParseEntityLink(c.link)
		if err != nil || got != c.want {
			t.Errorf("ParseEntityLink(%q) = %+v, %v; want %+v", c.link, got, err, c.want)
			continue
		}
		if got.String() != c.link {
			t.Errorf("String() = %q, want %q", got.String(), c.link)
		}
		if got.FieldFQN() != c.fieldFQN {
			t.Errorf("FieldFQN() = %q, want %q", got.FieldFQN(), c.fieldFQN)
		}
	}
}

func TestParseEntityLinkRejectsMalformedLinks(t *testing.T) {
	for _, s := range []string{"", "table::x", "<#E::table>", "<#E::table::>", "<#E::::x>", "<#E::table::a..b>",
		"<#E::table::x::columns>", "<#E::ta ble::x>", "<#E::table::x|y>", "<#E::table::x<y>", "<#E::table:::x>",
		"<#E::table::x::tags::t>", "<#E::table::x::a::b::c::d>", "<#E::table::x", "#E::table::x>"} {
		if l, err := ParseEntityLink(s); err == nil || ErrorCode(err) != EInvalid {
			t.Errorf("ParseEntityLink(%q) = %+v, %v; want an invalid error", s, l, err)
		}
	}
}

func FuzzParseEntityLink(f *testing.F) {
	for _, s := range []string{"<#E::table::a.b.c.d>", "<#E::table::a.b.c.d::columns::x>", "<#E::t::\"a.b\"::f::g::h>", "<#E::::>", "<#E:::>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseEntityLink(s)
		if err != nil {
			if ErrorCode(err) != EInvalid {
				t.Fatalf("ParseEntityLink(%q) error code %q", s, ErrorCode(err))
			}
			return
		}
		again, err := ParseEntityLink(l.String())
		if err != nil || again != l {
			t.Fatalf("round trip of %q: %+v -> %+v, %v", s, l, again, err)
		}
	})
}
