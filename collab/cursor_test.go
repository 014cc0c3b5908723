package collab

import "testing"

func TestCursorRoundTripsAndRefusesWhatIsNotOne(t *testing.T) {
	good := Cursor{TS: 1767225600000, ID: "5d0b0a52-6a53-4b8f-8c1e-1d8b2b0c9a11"}
	if c, ok := ParseCursor(good.String()); !ok || c != good {
		t.Fatalf("ParseCursor(%q) = %+v, %v; want %+v", good.String(), c, ok, good)
	}
	long := make([]byte, MaxCursor+1)
	for i := range long {
		long[i] = 'A'
	}
	for name, s := range map[string]string{
		"empty":        "",
		"not base64":   "!!",
		"no colon":     "MTIz",                                                   // 123
		"ts not a int": "YWJjOjVkMGIwYTUyLTZhNTMtNGI4Zi04YzFlLTFkOGIyYjBjOWExMQ", // abc:<uuid>
		"id not uuid":  Cursor{TS: 1, ID: "nope"}.String(),
		"too long":     string(long),
	} {
		if c, ok := ParseCursor(s); ok {
			t.Errorf("%s: ParseCursor(%q) = %+v, want not ok", name, s, c)
		}
	}
}

func TestWhereNumbersPlaceholdersInOrder(t *testing.T) {
	cases := []struct {
		name  string
		add   func(w *Where)
		want  string
		nargs int
	}{
		{"empty", func(w *Where) {}, "", 0},
		{"nil cursor, empty filters", func(w *Where) { w.AddAfter(nil); w.AddIfSet("a = ?", ""); w.AddWindow(0, 0) }, "", 0},
		{"window", func(w *Where) { w.AddWindow(1, 2) }, " WHERE ts >= $1 AND ts <= $2", 2},
		{"no values", func(w *Where) { w.Add("deleted = 0") }, " WHERE deleted = 0", 0},
		{"several", func(w *Where) {
			w.Add("a = ?", 1)
			w.AddAfter(&Cursor{TS: 2, ID: "id"})
		}, " WHERE a = $1 AND (ts < $2 OR (ts = $3 AND id < $4))", 4},
	}
	for _, c := range cases {
		var w Where
		c.add(&w)
		if got := w.String(); got != c.want || len(w.Args) != c.nargs {
			t.Errorf("%s: %q with %d args, want %q with %d", c.name, got, len(w.Args), c.want, c.nargs)
		}
	}
}
