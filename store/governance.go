package store

import (
	"context"
	"encoding/json"

	"github.com/meridian-catalog/meridian"
)

// checkTags checks that every tag label new in e names an existing tag (or glossary
// term, for source Glossary), fills in the label's defaults and drops duplicates.
func (s *Entities) checkTags(ctx context.Context, tx Tx, old, e meridian.Entity) error {
	known := map[string]bool{}
	collect := func(doc meridian.Entity) {
		for _, t := range asList(doc["tags"]) {
			m, _ := t.(map[string]any)
			if f, ok := m["tagFQN"].(string); ok {
				known[f] = true
			}
		}
		for _, c := range asList(doc["columns"]) {
			col, _ := c.(map[string]any)
			for _, t := range asList(col["tags"]) {
				m, _ := t.(map[string]any)
				if f, ok := m["tagFQN"].(string); ok {
					known[f] = true
				}
			}
		}
	}
	if old != nil {
		collect(old)
	}
	check := func(field string, v any) (any, error) {
		if v == nil {
			return v, nil
		}
		list, ok := v.([]any)
		if !ok {
			return nil, meridian.Errorf(meridian.EInvalid, "%s must be an array of tag labels", field)
		}
		out := make([]any, 0, len(list))
		seen := map[string]bool{}
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, meridian.Errorf(meridian.EInvalid, "%s[%d] must be a tag label object", field, i)
			}
			fqn, _ := m["tagFQN"].(string)
			if fqn == "" {
				return nil, meridian.Errorf(meridian.EInvalid, "%s[%d].tagFQN is required", field, i)
			}
			if seen[fqn] {
				continue
			}
			seen[fqn] = true
			if _, ok := m["source"]; !ok {
				m["source"] = "Classification"
			}
			if _, ok := m["labelType"]; !ok {
				m["labelType"] = "Manual"
			}
			if _, ok := m["state"]; !ok {
				m["state"] = "Confirmed"
			}
			if !known[fqn] {
				kind := meridian.KindTag
				if m["source"] == "Glossary" {
					kind = meridian.KindGlossaryTerm
				}
				norm, err := meridian.NormalizeFQN(fqn)
				if err != nil {
					return nil, meridian.Errorf(meridian.EInvalid, "%s[%d].tagFQN: %s", field, i, meridian.ErrorMessage(err))
				}
				r, err := tx.GetByFQN(ctx, kind, norm)
				if meridian.ErrorCode(err) == meridian.ENotFound || (err == nil && r.Deleted) {
					return nil, meridian.NotFound(kind, fqn)
				}
				if err != nil {
					return nil, err
				}
			}
			out = append(out, m)
		}
		return out, nil
	}
	if v, ok := e["tags"]; ok {
		tags, err := check("tags", v)
		if err != nil {
			return err
		}
		e["tags"] = tags
	}
	for i, c := range asList(e["columns"]) {
		col, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if v, ok := col["tags"]; ok {
			tags, err := check("columns["+itoa(i)+"].tags", v)
			if err != nil {
				return err
			}
			col["tags"] = tags
		}
	}
	return nil
}

// checkGovernance enforces OpenMetadata's governance rules on a document being created
// (old nil) or changed, with OpenMetadata's messages (EInvalid):
//   - owners: users, or one team of type Group; at most 5 users or one team, not both;
//   - reviewers: one team or several users;
//   - data products need a domain;
//   - tag labels: a disabled tag can't be newly assigned, and two tags under one
//     mutually exclusive parent can't be on one entity or column (checkTagRules).
//
// A rule is checked on the final document, and only when its fields changed, so that a
// document stored before a rule applied can still be edited elsewhere, deleted and
// restored.
func (s *Entities) checkGovernance(ctx context.Context, tx Tx, k *meridian.Kind, old, next meridian.Entity) error {
	if k.HasField("owners") && refsChanged(old, next, "owners") {
		if err := checkOwners(ctx, tx, next["owners"]); err != nil {
			return err
		}
	}
	if k.HasField("reviewers") && refsChanged(old, next, "reviewers") {
		if err := checkReviewers(next["reviewers"]); err != nil {
			return err
		}
	}
	if k.HasField("dataProducts") && k.HasField("domains") &&
		(refsChanged(old, next, "dataProducts") || refsChanged(old, next, "domains")) &&
		len(asList(next["dataProducts"])) > 0 && len(asList(next["domains"])) == 0 {
		return meridian.Errorf(meridian.EInvalid, "Domain cannot be empty when data products are provided.")
	}
	if k.HasField("tags") || k.HasField("columns") {
		return s.checkTagRules(ctx, tx, old, next)
	}
	return nil
}

// refsChanged reports whether a reference-list field names other entities in next than
// in old (always true on create when next has any).
func refsChanged(old, next meridian.Entity, field string) bool {
	a, b := refIDs(old[field]), refIDs(next[field])
	if len(a) != len(b) {
		return true
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			return true
		}
	}
	return false
}

// checkOwners applies OpenMetadata's owner rules to resolved owner references.
func checkOwners(ctx context.Context, tx Tx, v any) error {
	users, teams := 0, 0
	for _, item := range asList(v) {
		ref, _ := item.(map[string]any)
		switch ref["type"] {
		case meridian.KindUser:
			users++
		case meridian.KindTeam:
			teams++
			id, _ := ref["id"].(string)
			row, err := tx.Get(ctx, meridian.KindTeam, id)
			if err != nil {
				return err
			}
			var doc struct {
				TeamType string `json:"teamType"`
			}
			if err := json.Unmarshal(row.Doc, &doc); err != nil {
				return err
			}
			if doc.TeamType != "" && doc.TeamType != "Group" {
				return meridian.Errorf(meridian.EInvalid, "Team of type %s can't own entities. Only Team of type Group can own entities.", doc.TeamType)
			}
		}
	}
	if teams > 1 {
		return meridian.Errorf(meridian.EInvalid, "Only One Team is allowed to own Data Assets.")
	}
	if (teams > 0 && users > 0) || users > maxUserOwners {
		return meridian.Errorf(meridian.EInvalid, "Data Assets can have up to %d users or a Team but not both as owners.", maxUserOwners)
	}
	return nil
}

// maxUserOwners is how many users may own one entity.
const maxUserOwners = 5

// checkReviewers allows one team or any number of users as reviewers.
func checkReviewers(v any) error {
	users, teams := 0, 0
	for _, item := range asList(v) {
		ref, _ := item.(map[string]any)
		switch ref["type"] {
		case meridian.KindUser:
			users++
		case meridian.KindTeam:
			teams++
		}
	}
	if teams > 0 && users > 0 {
		return meridian.Errorf(meridian.EInvalid, "Invalid Reviewer Type. Only one team or multiple users can be assigned as reviewer.")
	}
	if teams > 1 {
		return meridian.Errorf(meridian.EInvalid, "Only one team can be assigned as reviewer.")
	}
	return nil
}

// checkTagRules checks the tag labels of next (its own and each column's) against the
// tags' settings: a label new in its list (absent from the same list in old) may not
// name a disabled tag, or a tag below a disabled parent or classification; and two
// labels whose common parent (classification, tag, glossary or term) is mutually
// exclusive may not be in one list, unless both were there already.
func (s *Entities) checkTagRules(ctx context.Context, tx Tx, old, next meridian.Entity) error {
	nodes := map[string]tagNode{}
	node := func(kind, fqn string) (tagNode, error) {
		key := kind + "\x00" + fqn
		if n, ok := nodes[key]; ok {
			return n, nil
		}
		var n tagNode
		r, err := tx.GetByFQN(ctx, kind, fqn)
		switch {
		case meridian.ErrorCode(err) == meridian.ENotFound:
		case err != nil:
			return n, err
		default:
			if n, err = s.tagNodes.of(RowKey{Kind: kind, FQN: fqn}, r.Doc); err != nil {
				return n, err
			}
		}
		nodes[key] = n
		return n, nil
	}
	// kindsOf returns the kinds of a label's root (classification or glossary) and of the
	// nodes below it.
	kindsOf := func(label map[string]any) (string, string) {
		if label["source"] == "Glossary" {
			return meridian.KindGlossary, meridian.KindGlossaryTerm
		}
		return meridian.KindClassification, meridian.KindTag
	}
	check := func(oldList, list []any) error {
		before := map[string]bool{}
		for _, t := range oldList {
			m, _ := t.(map[string]any)
			if f, ok := m["tagFQN"].(string); ok {
				before[f] = true
			}
		}
		type placed struct {
			fqn   string
			isNew bool
		}
		byParent := map[string]placed{}
		for _, t := range list {
			m, _ := t.(map[string]any)
			fqn, _ := m["tagFQN"].(string)
			parts, err := meridian.SplitFQN(fqn)
			if err != nil || len(parts) < 2 {
				continue // existence checks report malformed labels
			}
			root, below := kindsOf(m)
			isNew := !before[fqn]
			if isNew {
				for i := 1; i <= len(parts); i++ {
					kind := below
					if i == 1 {
						kind = root
					}
					n, err := node(kind, meridian.BuildFQN(parts[:i]...))
					if err != nil {
						return err
					}
					if n.disabled {
						return meridian.Errorf(meridian.EInvalid, "Tag label %s is disabled and can't be assigned to a data asset.", fqn)
					}
				}
			}
			parentKind := below
			if len(parts) == 2 {
				parentKind = root
			}
			parent := parentKind + "\x00" + meridian.BuildFQN(parts[:len(parts)-1]...)
			prev, dup := byParent[parent]
			if !dup {
				byParent[parent] = placed{fqn: fqn, isNew: isNew}
				continue
			}
			if !isNew && !prev.isNew {
				continue
			}
			n, err := node(parentKind, meridian.BuildFQN(parts[:len(parts)-1]...))
			if err != nil {
				return err
			}
			if n.mutuallyExclusive {
				return meridian.Errorf(meridian.EInvalid, "Tag labels %s and %s are mutually exclusive and can't be assigned together", fqn, prev.fqn)
			}
		}
		return nil
	}
	if err := check(asList(old["tags"]), asList(next["tags"])); err != nil {
		return err
	}
	oldCols := map[string][]any{}
	for _, c := range asList(old["columns"]) {
		col, _ := c.(map[string]any)
		name, _ := col["name"].(string)
		oldCols[name] = asList(col["tags"])
	}
	for _, c := range asList(next["columns"]) {
		col, _ := c.(map[string]any)
		name, _ := col["name"].(string)
		if err := check(oldCols[name], asList(col["tags"])); err != nil {
			return err
		}
	}
	return nil
}
