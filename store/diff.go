package store

import (
	"encoding/json"
	"reflect"
	"sort"

	"github.com/meridian-catalog/meridian"
)

// untracked fields never appear in a changeDescription: the engine sets them, or they
// change without a new version.
var untracked = map[string]bool{
	"id": true, "version": true, "updatedAt": true, "updatedBy": true, "href": true,
	"changeDescription": true, "incrementalChangeDescription": true, "followers": true,
	"votes": true, "fullyQualifiedName": true,
}

// Diff compares two full documents of one entity and returns what changed, and whether
// the change is breaking (a major version bump): a column removed, a column's type
// changed, or its length, precision or scale reduced.
//
// Scalars are recorded as raw values; lists and objects as JSON strings holding only
// the items that changed. Columns and extension properties are recorded per field
// ("columns.<name>.description", "extension.<property>").
func Diff(old, new meridian.Entity) (cd meridian.ChangeDescription, major bool) {
	d := differ{}
	for _, key := range unionKeys(old, new) {
		if untracked[key] {
			continue
		}
		switch key {
		case "columns":
			d.columns(asList(old[key]), asList(new[key]))
		case "extension":
			o, _ := old[key].(map[string]any)
			n, _ := new[key].(map[string]any)
			for _, k := range unionKeys(o, n) {
				d.value("extension."+k, o[k], n[k])
			}
		default:
			d.value(key, old[key], new[key])
		}
	}
	d.cd.FieldsAdded = nonNil(d.cd.FieldsAdded)
	d.cd.FieldsUpdated = nonNil(d.cd.FieldsUpdated)
	d.cd.FieldsDeleted = nonNil(d.cd.FieldsDeleted)
	d.cd.PreviousVersion = old.Version().Float()
	return d.cd, d.major
}

type differ struct {
	cd    meridian.ChangeDescription
	major bool
}

func (d *differ) added(name string, v any) {
	d.cd.FieldsAdded = append(d.cd.FieldsAdded, meridian.FieldChange{Name: name, NewValue: encodeChange(v)})
}

func (d *differ) deleted(name string, v any) {
	d.cd.FieldsDeleted = append(d.cd.FieldsDeleted, meridian.FieldChange{Name: name, OldValue: encodeChange(v)})
}

func (d *differ) updated(name string, o, n any) {
	d.cd.FieldsUpdated = append(d.cd.FieldsUpdated, meridian.FieldChange{Name: name, OldValue: encodeChange(o), NewValue: encodeChange(n)})
}

// value records the change of one field.
func (d *differ) value(name string, o, n any) {
	if isEmpty(o) && isEmpty(n) {
		return
	}
	ol, oIsList := o.([]any)
	nl, nIsList := n.([]any)
	if (oIsList || o == nil) && (nIsList || n == nil) {
		d.list(name, ol, nl)
		return
	}
	switch {
	case isEmpty(o):
		d.added(name, n)
	case isEmpty(n):
		d.deleted(name, o)
	case !reflect.DeepEqual(o, n):
		d.updated(name, o, n)
	}
}

// list records the items added to and removed from a list, matched by identity
// (tagFQN, id, name, or the whole item). An item whose identity stays but whose content
// changes is recorded as updated.
func (d *differ) list(name string, o, n []any) {
	key := identity(o, n)
	oi := indexBy(o, key)
	ni := indexBy(n, key)
	var added, removed, updOld, updNew []any
	for _, item := range n {
		id := key(item)
		if prev, ok := oi[id]; !ok {
			added = append(added, item)
		} else if !reflect.DeepEqual(prev, item) {
			updOld = append(updOld, prev)
			updNew = append(updNew, item)
		}
	}
	for _, item := range o {
		if _, ok := ni[key(item)]; !ok {
			removed = append(removed, item)
		}
	}
	if len(added) > 0 {
		d.added(name, added)
	}
	if len(updNew) > 0 {
		d.updated(name, updOld, updNew)
	}
	if len(removed) > 0 {
		d.deleted(name, removed)
	}
	if len(added) == 0 && len(removed) == 0 && len(updNew) == 0 && !reflect.DeepEqual(o, n) && len(o) > 0 && len(n) > 0 {
		// Same items in another order.
		d.updated(name, o, n)
	}
}

// columns records column changes field by field; a removed column or a changed type is
// breaking, and so is a reduced length, precision or scale.
func (d *differ) columns(o, n []any) {
	byName := func(l []any) (map[string]map[string]any, []string) {
		m := map[string]map[string]any{}
		var order []string
		for _, c := range l {
			col, _ := c.(map[string]any)
			name, _ := col["name"].(string)
			if _, dup := m[name]; !dup {
				order = append(order, name)
			}
			m[name] = col
		}
		return m, order
	}
	om, oOrder := byName(o)
	nm, nOrder := byName(n)
	var added, removed []any
	for _, name := range nOrder {
		nc := nm[name]
		oc, ok := om[name]
		if !ok || oc["dataType"] != nc["dataType"] || !reflect.DeepEqual(oc["arrayDataType"], nc["arrayDataType"]) {
			added = append(added, nc)
			continue
		}
		prefix := "columns." + meridian.QuoteName(name) + "."
		for _, k := range unionKeys(oc, nc) {
			if k == "name" {
				continue
			}
			d.value(prefix+k, oc[k], nc[k])
		}
		if reduced(oc["dataLength"], nc["dataLength"], true) || reduced(oc["precision"], nc["precision"], false) ||
			reduced(oc["scale"], nc["scale"], false) {
			d.major = true
		}
	}
	for _, name := range oOrder {
		oc := om[name]
		nc, ok := nm[name]
		if !ok || oc["dataType"] != nc["dataType"] || !reflect.DeepEqual(oc["arrayDataType"], nc["arrayDataType"]) {
			removed = append(removed, oc)
		}
	}
	if len(added) > 0 {
		d.added("columns", added)
	}
	if len(removed) > 0 {
		d.deleted("columns", removed)
		d.major = true
	}
}

// reduced reports whether a numeric column property shrank or was dropped. With
// setIsBreaking, setting a value where there was none also counts (a length limit
// added to an unbounded column).
func reduced(o, n any, setIsBreaking bool) bool {
	of, oOK := o.(float64)
	nf, nOK := n.(float64)
	switch {
	case oOK && nOK:
		return nf < of
	case oOK && !nOK:
		return !setIsBreaking // precision or scale removed
	case !oOK && nOK:
		return setIsBreaking
	}
	return false
}

// identity picks how list items are matched: by tagFQN, by id, by name when every
// item has a unique one, and otherwise by their whole JSON.
func identity(lists ...[]any) func(any) string {
	for _, field := range []string{"tagFQN", "id", "name"} {
		ok := true
		for _, l := range lists {
			seen := map[string]bool{}
			for _, item := range l {
				m, isMap := item.(map[string]any)
				s, isStr := m[field].(string)
				if !isMap || !isStr || seen[s] {
					ok = false
					break
				}
				seen[s] = true
			}
		}
		if ok {
			return func(item any) string { return item.(map[string]any)[field].(string) }
		}
	}
	return func(item any) string { b, _ := json.Marshal(item); return string(b) }
}

func indexBy(l []any, key func(any) string) map[string]any {
	m := make(map[string]any, len(l))
	for _, item := range l {
		m[key(item)] = item
	}
	return m
}

// encodeChange keeps scalars raw and encodes lists and objects as JSON strings.
func encodeChange(v any) any {
	switch v.(type) {
	case []any, map[string]any, meridian.Entity:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return v
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

func asList(v any) []any { l, _ := v.([]any); return l }

func unionKeys(a, b map[string]any) []string {
	seen := make(map[string]bool, len(a)+len(b))
	keys := make([]string, 0, len(a)+len(b))
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func nonNil(l []meridian.FieldChange) []meridian.FieldChange {
	if l == nil {
		return []meridian.FieldChange{}
	}
	return l
}
