package store

import (
	"encoding/base64"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/meridian-catalog/meridian"
)

func checkInclude(i Include) (Include, error) {
	switch i {
	case "":
		return IncludeNonDeleted, nil
	case IncludeAll, IncludeDeleted, IncludeNonDeleted:
		return i, nil
	}
	return "", meridian.Errorf(meridian.EInvalid, "include must be one of all, deleted, non-deleted")
}

func checkID(id string) error {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return meridian.Errorf(meridian.EInvalid, "Invalid id %q: must be a UUID", id)
	}
	return nil
}

// conditions turns list filters into driver conditions.
func conditions(k *meridian.Kind, filters map[string]string, anyOf map[string][]string) ([]Condition, error) {
	var out []Condition
	for _, f := range k.Filters {
		if vs, ok := anyOf[f.Param]; ok && !f.Prefix {
			if len(vs) > MaxAnyOf {
				return nil, meridian.Errorf(meridian.EInvalid, "%s: at most %d values", f.Param, MaxAnyOf)
			}
			out = append(out, Condition{Field: f.Field, AnyOf: append([]string{}, vs...)})
		}
		v, ok := filters[f.Param]
		if !ok || v == "" {
			continue
		}
		if f.Prefix {
			fqn, err := meridian.NormalizeFQN(v)
			if err != nil {
				return nil, meridian.Errorf(meridian.EInvalid, "%s: %s", f.Param, meridian.ErrorMessage(err))
			}
			out = append(out, Condition{Prefix: true, Value: fqn})
			continue
		}
		out = append(out, Condition{Field: f.Field, Value: v})
	}
	return out, nil
}

// CursorAfter is the list cursor (ListOptions.After) of the position just after e in
// a list ordered by name then id, for a service that filters the engine's pages.
func CursorAfter(e meridian.Entity) string { return encodeCursor(Row{Name: e.Name(), ID: e.ID()}) }

func encodeCursor(r Row) string {
	b, _ := json.Marshal(Cursor{Name: r.Name, ID: r.ID})
	return base64.URLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawURLEncoding.DecodeString(s)
	}
	var c Cursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid cursor %q", s)
	}
	return &c, nil
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
