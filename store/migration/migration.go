// Package migration reads a driver's embedded schema migrations: numbered SQL files
// applied in order. Each driver applies them itself, under its own lock and in its own
// dialect; this package only loads them and names a schema too new to open.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
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
