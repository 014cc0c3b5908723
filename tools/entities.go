package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Helpers shared by the tools that name entities: entity types with a "did you mean"
// hint, reads by FQN, owner and tag names turned into references, and the compact
// entity answers of the write tools. They only translate arguments and call the
// engine; the rules stay in store/.

// kind resolves an entityType argument. An unknown type is EInvalid with the closest
// known type as a hint.
func (e *Env) kind(name string) (*meridian.Kind, error) {
	name = strings.TrimSpace(name)
	if k, ok := e.Registry().Kind(name); ok {
		return k, nil
	}
	names := e.kindNames()
	for _, n := range names { // tolerate case: Table, TABLE
		if strings.EqualFold(n, name) {
			k, _ := e.Registry().Kind(n)
			return k, nil
		}
	}
	hint := "Valid entity types: " + strings.Join(names, ", ")
	if best := closest(name, names); best != "" {
		hint = fmt.Sprintf("Did you mean '%s'? %s", best, hint)
	}
	return nil, withHint(meridian.Errorf(meridian.EInvalid, "Unknown entity type '%s'", name), hint)
}

func (e *Env) kindNames() []string {
	var names []string
	for _, k := range e.Registry().Kinds() {
		names = append(names, k.Name)
	}
	sort.Strings(names)
	return names
}

// get reads an entity by FQN with the given fields; not found carries a search hint.
func (e *Env) get(ctx context.Context, p *meridian.Principal, k *meridian.Kind, fqn, fields string, include store.Include) (meridian.Entity, error) {
	ent, err := e.Entities.Get(ctx, p, k.Name, store.ByFQN(strings.TrimSpace(fqn)), store.GetOptions{Fields: fields, Include: include})
	if err != nil {
		return nil, notFoundHint(err, k, fqn)
	}
	return ent, nil
}

// notFoundHint adds a search hint to an ENotFound error for the entity k named fqn.
func notFoundHint(err error, k *meridian.Kind, fqn string) error {
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return withHint(err, fmt.Sprintf("No %s has the fullyQualifiedName %q; use search_metadata with entityType %s to find the exact name", k.Name, fqn, k.Name))
	}
	return err
}

// fieldsOf returns the comma list of the wanted fields the kind supports.
func fieldsOf(k *meridian.Kind, wanted ...string) string {
	var out []string
	for _, f := range wanted {
		if k.HasField(f) {
			out = append(out, f)
		}
	}
	return strings.Join(out, ",")
}

// allFields returns every field of the kind: what get_entity_details shows.
func allFields(k *meridian.Kind) string { return strings.Join(k.Fields, ",") }

// nameFQN turns a user or team name into its FQN: quoted when it holds a dot, unless
// the caller already quoted it.
func nameFQN(name string) string {
	name = strings.TrimSpace(name)
	if strings.HasPrefix(name, `"`) && strings.HasSuffix(name, `"`) && len(name) > 1 {
		return name
	}
	return meridian.QuoteName(name)
}

// principalRefs resolves user or team names to entity references (owners, reviewers,
// experts). kinds lists where to look, in order. Each missing name is ENotFound.
func (e *Env) principalRefs(ctx context.Context, p *meridian.Principal, field string, names []string, kinds ...string) ([]any, error) {
	out := make([]any, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		var (
			found     meridian.Entity
			foundKind string
		)
		for _, kind := range kinds {
			ent, err := e.Entities.Get(ctx, p, kind, store.ByFQN(nameFQN(n)), store.GetOptions{})
			if meridian.ErrorCode(err) == meridian.ENotFound || meridian.ErrorCode(err) == meridian.EInvalid {
				continue
			}
			if err != nil {
				return nil, err
			}
			found, foundKind = ent, kind
			break
		}
		if found == nil {
			return nil, withHint(meridian.Errorf(meridian.ENotFound, "%s: no %s named %q", field, strings.Join(kinds, " or "), n),
				fmt.Sprintf("Use exact %s names; search_metadata with entityType user or team finds them", strings.Join(kinds, "/")))
		}
		if seen[found.ID()] {
			continue
		}
		seen[found.ID()] = true
		out = append(out, map[string]any{"id": found.ID(), "type": foundKind, "name": found.Name(),
			"fullyQualifiedName": found.FQN()})
	}
	return out, nil
}

// entityRefs resolves FQNs of one kind to entity references (domains, relatedMetrics).
func (e *Env) entityRefs(ctx context.Context, p *meridian.Principal, field, kind string, fqns []string) ([]any, error) {
	out := make([]any, 0, len(fqns))
	seen := map[string]bool{}
	for _, f := range fqns {
		ent, err := e.Entities.Get(ctx, p, kind, store.ByFQN(strings.TrimSpace(f)), store.GetOptions{})
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return nil, withHint(meridian.Errorf(meridian.ENotFound, "%s: %s %q not found", field, kind, f),
				fmt.Sprintf("Use the exact fullyQualifiedName; search_metadata with entityType %s finds it", kind))
		}
		if err != nil {
			return nil, err
		}
		if seen[ent.ID()] {
			continue
		}
		seen[ent.ID()] = true
		out = append(out, map[string]any{"id": ent.ID(), "type": kind, "name": ent.Name(), "fullyQualifiedName": ent.FQN()})
	}
	return out, nil
}

// tagLabels turns tag or glossary term FQNs into tag labels. A classification tag wins
// over a glossary term of the same FQN; a name that is neither is ENotFound.
func (e *Env) tagLabels(ctx context.Context, p *meridian.Principal, fqns []string) ([]any, error) {
	out := make([]any, 0, len(fqns))
	seen := map[string]bool{}
	for _, f := range fqns {
		f = strings.TrimSpace(f)
		source := ""
		canonical := f
		for _, c := range []struct{ kind, source string }{{"tag", "Classification"}, {"glossaryTerm", "Glossary"}} {
			ent, err := e.Entities.Get(ctx, p, c.kind, store.ByFQN(f), store.GetOptions{})
			if meridian.ErrorCode(err) == meridian.ENotFound || meridian.ErrorCode(err) == meridian.EInvalid {
				continue
			}
			if err != nil {
				return nil, err
			}
			source, canonical = c.source, ent.FQN()
			break
		}
		if source == "" {
			return nil, withHint(meridian.Errorf(meridian.ENotFound, "tags: no tag or glossary term %q", f),
				"Use a tag FQN such as PII.Sensitive or a glossary term FQN; search_metadata with entityType tag or glossaryTerm finds them")
		}
		if seen[canonical] {
			continue
		}
		seen[canonical] = true
		out = append(out, map[string]any{"tagFQN": canonical, "source": source, "labelType": "Manual", "state": "Confirmed"})
	}
	return out, nil
}

// noiseFields are dropped from entities in tool answers: bookkeeping a model does not
// need, and embedding vectors.
var noiseFields = map[string]bool{"href": true, "changeDescription": true, "incrementalChangeDescription": true,
	"embedding": true, "embeddings": true, "vector": true}

// clean drops noise fields at every depth, in place, and returns v.
func clean(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if noiseFields[k] {
				delete(t, k)
				continue
			}
			clean(x)
		}
	case meridian.Entity:
		clean(map[string]any(t))
	case []any:
		for _, x := range t {
			clean(x)
		}
	}
	return v
}

// written is the answer of a write tool: the entity without noise and without its
// columns (counted in totalColumns), its type, and the change type (entityCreated,
// entityUpdated, entityNoChange, …).
func written(kind string, res store.Result) map[string]any {
	m := map[string]any(res.Entity.Clone())
	clean(m)
	// Keep the answer small whatever the entity's width: columns are read with
	// get_entity_details, which pages them.
	if cols, ok := m["columns"].([]any); ok {
		delete(m, "columns")
		m["totalColumns"] = len(cols)
	}
	m["entityType"] = kind
	m["changeType"] = res.Change
	return m
}

// entityOutput is the output schema of a tool answering one entity.
func entityOutput(desc string, extra Props) Schema {
	p := Props{
		"id":                   String("Entity id (UUID)."),
		"name":                 String("Entity name."),
		"displayName":          String("Display name."),
		"fullyQualifiedName":   String("Fully qualified name."),
		"description":          String("Markdown description (trimmed past 500 characters)."),
		"descriptionTruncated": Boolean("True when description was shortened."),
		"entityType":           String("Entity type, e.g. table."),
		"version":              Number("Entity version, 0.1 and up."),
		"deleted":              Boolean("Soft-deleted."),
	}
	for k, v := range extra {
		p[k] = v
	}
	return OpenObject(desc, p)
}

// writeOutput is the output schema of the write tools.
func writeOutput(kind string) Schema {
	return entityOutput(fmt.Sprintf("The %s as stored, without bookkeeping fields.", kind), Props{
		"changeType": Enum("What the call did.", meridian.EventEntityCreated, meridian.EventEntityUpdated,
			meridian.EventEntityNoChange, meridian.EventEntityRestored),
		"totalColumns": Integer("Number of columns, for entities that have them (read them with get_entity_details)."),
	})
}

// confirmFirst ends every write tool's description.
const confirmFirst = " This changes the catalog: confirm the exact target and values with the user before calling."
