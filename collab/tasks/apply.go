package tasks

import (
	"context"
	"encoding/json"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// applies reports whether resolving the task as approved changes the entity it is
// about.
func applies(task meridian.Entity) bool {
	switch task.String("type") {
	case meridian.TaskTypeSuggestion, "DescriptionUpdate", "TagUpdate":
		return true
	}
	return false
}

// change is what an applied task writes: a description, or tags to add and remove, at
// a field path.
type change struct {
	path        meridian.FieldPath
	description *string
	add, remove []any
}

// changeOf reads the change a task applies from its payload; newValue, when set,
// replaces the suggested value (a description string, or a list of tag labels to add).
func changeOf(task meridian.Entity, newValue any) (change, error) {
	payload, _ := task["payload"].(map[string]any)
	fp, _ := payload["fieldPath"].(string)
	if fp == "" {
		fp = meridian.FieldDescription
	}
	path, err := meridian.ParseFieldPath(fp)
	if err != nil {
		return change{}, err
	}
	c := change{path: path}
	switch path.Field {
	case meridian.FieldDescription:
		var v any
		switch task.String("type") {
		case meridian.TaskTypeSuggestion:
			v = payload["suggestedValue"]
		case "DescriptionUpdate":
			v = payload["newDescription"]
		}
		if newValue != nil {
			v = newValue
		}
		d, ok := v.(string)
		if !ok {
			return change{}, meridian.Errorf(meridian.EInvalid, "Task %s suggests no description for %s: newValue must be a string", task.Name(), path.String())
		}
		c.description = &d
	case meridian.FieldTags:
		var v any
		switch task.String("type") {
		case meridian.TaskTypeSuggestion:
			v = payload["tagLabels"]
		case "TagUpdate":
			v = payload["tagsToAdd"]
			c.remove, _ = payload["tagsToRemove"].([]any)
		}
		if newValue != nil {
			v = newValue
		}
		if s, ok := v.(string); ok { // a JSON list, as the feed's tag tasks send it
			var list []any
			if json.Unmarshal([]byte(s), &list) != nil {
				return change{}, meridian.Errorf(meridian.EInvalid, "newValue must be a list of tag labels")
			}
			v = list
		}
		list, ok := v.([]any)
		if !ok && v != nil {
			return change{}, meridian.Errorf(meridian.EInvalid, "newValue must be a list of tag labels")
		}
		c.add = list
	}
	return c, nil
}

// apply writes the task's change onto the entity it is about, as p, through the
// engine's Edit (one transaction), naming the task in the new version's changeSummary.
// It returns the value applied. Errors: those of changeOf and of store.Entities.Edit
// (ENotFound for the entity or a column, EForbidden without Edit on it, EInvalid for
// tags that do not exist).
func (s *Service) apply(ctx context.Context, p *meridian.Principal, task meridian.Entity, newValue any) (any, error) {
	link, err := meridian.ParseEntityLink(task.String("about"))
	if err != nil {
		return nil, err
	}
	c, err := changeOf(task, newValue)
	if err != nil {
		return nil, err
	}
	ctx = meridian.WithChangeSource(ctx, meridian.ChangeSource{Source: "Suggested", Task: taskRef(task)})
	_, err = s.ents.Edit(ctx, p, link.EntityType, store.ByFQN(link.FQN), "", func(e meridian.Entity) (meridian.Entity, error) {
		return e, c.applyTo(e)
	})
	if err != nil {
		return nil, err
	}
	if c.description != nil {
		return *c.description, nil
	}
	return c.add, nil
}

// applyTo changes the document e.
func (c change) applyTo(e meridian.Entity) error {
	target := map[string]any(e)
	if len(c.path.Columns) > 0 {
		col, ok := c.path.Column(e)
		if !ok {
			return meridian.Errorf(meridian.ENotFound, "column %s not found in %s", c.path.String(), e.FQN())
		}
		target = col
	}
	if c.description != nil {
		target["description"] = *c.description
		return nil
	}
	tags, _ := target["tags"].([]any)
	out := make([]any, 0, len(tags)+len(c.add))
	removed := map[string]bool{}
	for _, r := range c.remove {
		removed[tagFQN(r)] = true
	}
	have := map[string]bool{}
	for _, t := range tags {
		if removed[tagFQN(t)] {
			continue
		}
		have[tagFQN(t)] = true
		out = append(out, t)
	}
	for _, t := range c.add {
		m, ok := t.(map[string]any)
		if !ok || tagFQN(m) == "" {
			return meridian.Errorf(meridian.EInvalid, "a tag label needs a tagFQN")
		}
		if have[tagFQN(m)] {
			continue
		}
		have[tagFQN(m)] = true
		label := map[string]any{}
		for k, v := range m {
			label[k] = v
		}
		if _, ok := label["source"]; !ok {
			label["source"] = "Classification"
		}
		if _, ok := label["labelType"]; !ok {
			label["labelType"] = "Manual"
		}
		if _, ok := label["state"]; !ok {
			label["state"] = "Confirmed"
		}
		out = append(out, label)
	}
	target["tags"] = out
	return nil
}

func tagFQN(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["tagFQN"].(string)
	return s
}
