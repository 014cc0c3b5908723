package store

import (
	"github.com/meridian-catalog/meridian"
)

// mergePut applies a PUT body (already a full draft document) to the stored document
// with OpenMetadata's rules: tags merge; owners, domains, reviewers and experts change
// only when the body has a non-empty list; a bot cannot overwrite a non-empty
// description, displayName, extension or domains; style and lifeCycle keep their value
// when the body has none; columns missing from the body are deleted and the others
// keep their description and merge their tags; fields missing from the body keep their
// value.
func mergePut(k *meridian.Kind, p *meridian.Principal, old, body meridian.Entity) meridian.Entity {
	bot := p != nil && p.IsBot
	m := old.Clone()
	for key, v := range body {
		if untracked[key] || key == "deleted" || key == "name" {
			continue
		}
		switch key {
		case "owners", "reviewers", "experts", "dataProducts":
			if !isEmpty(v) {
				m[key] = v
			}
		case "domains":
			if !isEmpty(v) && !(bot && !isEmpty(old[key])) {
				m[key] = v
			}
		case "tags":
			m[key] = mergeTags(asList(old[key]), asList(v))
		case "description", "displayName", "extension":
			if v == nil || (bot && !isEmpty(old[key]) && old[key] != "") {
				continue
			}
			m[key] = v
		case "style", "lifeCycle":
			if v != nil {
				m[key] = v
			}
		case "columns":
			m[key] = mergeColumns(asList(old[key]), asList(v), bot)
		default:
			m[key] = v
		}
	}
	return m
}

// mergeTags returns old's tags followed by the new ones not already present.
func mergeTags(old, add []any) []any {
	out := append([]any{}, old...)
	seen := map[string]bool{}
	for _, t := range old {
		m, _ := t.(map[string]any)
		f, _ := m["tagFQN"].(string)
		seen[f] = true
	}
	for _, t := range add {
		m, _ := t.(map[string]any)
		f, _ := m["tagFQN"].(string)
		if !seen[f] {
			seen[f] = true
			out = append(out, t)
		}
	}
	return out
}

// mergeColumns keeps the body's columns; a column also in old keeps its description
// and displayName when the body has none (or the caller is a bot) and merges its tags.
func mergeColumns(old, next []any, bot bool) []any {
	byName := map[string]map[string]any{}
	for _, c := range old {
		col, _ := c.(map[string]any)
		name, _ := col["name"].(string)
		byName[name] = col
	}
	out := make([]any, 0, len(next))
	for _, c := range next {
		col, ok := c.(map[string]any)
		if !ok {
			out = append(out, c)
			continue
		}
		name, _ := col["name"].(string)
		prev, ok := byName[name]
		if !ok {
			out = append(out, col)
			continue
		}
		merged := make(map[string]any, len(col))
		for k, v := range col {
			merged[k] = v
		}
		for _, f := range []string{"description", "displayName"} {
			if pv, ok := prev[f]; ok && pv != "" {
				if cur, has := merged[f]; !has || cur == nil || bot {
					merged[f] = pv
				}
			}
		}
		if tags := mergeTags(asList(prev["tags"]), asList(col["tags"])); len(tags) > 0 {
			merged["tags"] = tags
		}
		out = append(out, merged)
	}
	return out
}
