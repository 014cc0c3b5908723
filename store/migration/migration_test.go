package migration

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/meridian-catalog/meridian/store"
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

func TestPlan(t *testing.T) {
	sql := &fstest.MapFile{Data: []byte("SELECT 1;")}
	module := func(name string, files fstest.MapFS) store.Module { return store.Module{Name: name, Migrations: files} }
	good := fstest.MapFS{"sqlite/0001_a.sql": sql, "sqlite/0002_b.sql": sql, "postgres/0001_a.sql": sql, "postgres/0002_b.sql": sql}
	tests := []struct {
		name    string
		modules []store.Module
		want    string // the sets in order, or the error
	}{
		{"the engine first, then each module in order", []store.Module{module("b", good), module("a", good)},
			"store [7]|b [1 2]|a [1 2]|"},
		{"no name", []store.Module{module(" ", good)}, "sqlite: a module has no name"},
		{"a taken name", []store.Module{module("a", good), module("a", good)}, `sqlite: module name "a" is taken`},
		{"the engine's name", []store.Module{module(store.CoreModule, good)}, `sqlite: module name "store" is taken`},
		{"no migrations", []store.Module{{Name: "a"}}, "sqlite: module a: no migrations"},
		{"one driver only", []store.Module{module("a", fstest.MapFS{"sqlite/0001_a.sql": sql})},
			"sqlite: module a: no postgres/NNNN_description.sql migrations"},
		{"numbered unalike", []store.Module{module("a", fstest.MapFS{"sqlite/0001_a.sql": sql, "postgres/0002_a.sql": sql})},
			"sqlite: module a: postgres migrations are versions [2] but sqlite ones are [1]; number them alike"},
		{"a bad name", []store.Module{module("a", fstest.MapFS{"sqlite/a.sql": sql, "postgres/0001_a.sql": sql})},
			"sqlite: module a: migration a.sql: name must start with a positive number and '_'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sets, err := Plan("sqlite", []File{{Version: 7}}, tt.modules)
			got := ""
			if err != nil {
				got = err.Error()
			}
			for _, s := range sets {
				got += fmt.Sprintf("%s %v|", s.Module, Versions(s.Files))
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
