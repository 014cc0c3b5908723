package migration

import (
	"fmt"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string // versions and names in order, or the error
	}{
		{"in version order, not name order", fstest.MapFS{
			"m/0010_ten.sql": {Data: []byte("B")}, "m/0002_two.sql": {Data: []byte("A")}, "m/README": {}},
			"2 0002_two.sql A|10 0010_ten.sql B|"},
		{"none", fstest.MapFS{}, ""},
		{"name without a number", fstest.MapFS{"m/init.sql": {}},
			"x: migration init.sql: name must start with a positive number and '_'"},
		{"version zero", fstest.MapFS{"m/0000_zero.sql": {}},
			"x: migration 0000_zero.sql: name must start with a positive number and '_'"},
		{"shared version", fstest.MapFS{"m/0001_a.sql": {}, "m/001_b.sql": {}},
			"x: migrations 0001_a.sql and 001_b.sql share version 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := Load(tt.files, "m", "x")
			got := ""
			if err != nil {
				got = err.Error()
			}
			for _, m := range ms {
				got += fmt.Sprintf("%d %s %s|", m.Version, m.Name, m.SQL)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLatestAndCheckCurrent(t *testing.T) {
	if v := Latest(nil); v != 0 {
		t.Errorf("Latest(nil) = %d", v)
	}
	if v := Latest([]File{{Version: 1}, {Version: 7}}); v != 7 {
		t.Errorf("Latest = %d, want 7", v)
	}
	for _, current := range []int{0, 6, 7} {
		if err := CheckCurrent("x", current, 7); err != nil {
			t.Errorf("CheckCurrent(%d, 7): %v", current, err)
		}
	}
	err := CheckCurrent("sqlite", 8, 7)
	if want := "sqlite: database schema version 8 is newer than this binary supports (7)"; err == nil || err.Error() != want {
		t.Errorf("CheckCurrent(8, 7): %v, want %q", err, want)
	}
}
