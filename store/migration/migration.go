// Package migration reads schema migrations: numbered SQL files applied in order, the
// engine's own (embedded in each driver) and each store.Module's. Each driver applies
// them itself, under its own lock and in its own dialect, and records them per module;
// this package only loads and checks them and names a schema too new to open.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian/store"
)

// File is one migration, read from a file named NNNN_description.sql.
type File struct {
	Version int
	Name    string // the file name
	SQL     string
}

// Load returns the migrations dir/*.sql of fsys in version order. A name must start
// with a positive number and '_', and no two files may share a number. Errors start
// with driver ("sqlite", "postgres").
func Load(fsys fs.FS, dir, driver string) ([]File, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []File
	seen := map[int]string{}
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("%s: migration %s: name must start with a positive number and '_'", driver, base)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("%s: migrations %s and %s share version %d", driver, other, base, v)
		}
		seen[v] = base
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, File{Version: v, Name: base, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// Latest returns the newest version in ms, which Load sorted; 0 when there is none.
func Latest(ms []File) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// CheckCurrent refuses a database whose schema version is newer than the newest
// migration this binary has.
func CheckCurrent(driver string, current, latest int) error {
	if current > latest {
		return fmt.Errorf("%s: database schema version %d is newer than this binary supports (%d)", driver, current, latest)
	}
	return nil
}

// Versions returns the version numbers of ms, in order.
func Versions(ms []File) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Version
	}
	return out
}

// Drivers are the dialect directories of a module's migrations.
var Drivers = []string{string(store.DialectSQLite), string(store.DialectPostgres)}

// ForModule returns the migrations of m for driver (a directory of Drivers), after
// checking that m has both sequences and that they have the same numbers.
func ForModule(m store.Module, driver string) ([]File, error) {
	what := driver + ": module " + m.Name
	if !slices.Contains(Drivers, driver) {
		return nil, fmt.Errorf("%s: unknown driver", what)
	}
	if m.Migrations == nil {
		return nil, fmt.Errorf("%s: no migrations", what)
	}
	var want []File
	var first []int
	for i, d := range Drivers {
		ms, err := Load(m.Migrations, d, what)
		if err != nil {
			return nil, err
		}
		if len(ms) == 0 {
			return nil, fmt.Errorf("%s: no %s/NNNN_description.sql migrations", what, d)
		}
		if i == 0 {
			first = Versions(ms)
		} else if v := Versions(ms); !slices.Equal(v, first) {
			return nil, fmt.Errorf("%s: %s migrations are versions %v but %s ones are %v; number them alike", what, d, v, Drivers[0], first)
		}
		if d == driver {
			want = ms
		}
	}
	return want, nil
}

// CheckNames refuses modules with an empty or repeated name, or the engine's own
// (store.CoreModule).
func CheckNames(driver string, modules []store.Module) error {
	seen := map[string]bool{store.CoreModule: true}
	for _, m := range modules {
		if strings.TrimSpace(m.Name) == "" {
			return fmt.Errorf("%s: a module has no name", driver)
		}
		if seen[m.Name] {
			return fmt.Errorf("%s: module name %q is taken", driver, m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

// Set is the migrations of one module, in version order.
type Set struct {
	Module string
	Files  []File
}

// Plan returns the migrations a driver applies, in order: the engine's own (core, under
// store.CoreModule), then each module's for driver, after CheckNames and ForModule.
func Plan(driver string, core []File, modules []store.Module) ([]Set, error) {
	if err := CheckNames(driver, modules); err != nil {
		return nil, err
	}
	sets := []Set{{Module: store.CoreModule, Files: core}}
	for _, m := range modules {
		ms, err := ForModule(m, driver)
		if err != nil {
			return nil, err
		}
		sets = append(sets, Set{Module: m.Name, Files: ms})
	}
	return sets, nil
}
