package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Govern and classify: classifications, tags, domains, data products, and edits of any
// entity (patch_entity, update_entity).

// principalNames turns user or team names into the FQN strings a create body takes;
// the engine resolves them (users first, then teams) and answers 404 for a missing one.
func principalNames(names []string) []any {
	out := make([]any, 0, len(names))
	for _, n := range names {
		out = append(out, nameFQN(n))
	}
	return out
}

// fqnList turns FQN arguments into a create body's reference list.
func fqnList(fqns []string) []any {
	out := make([]any, 0, len(fqns))
	for _, f := range fqns {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// setIf copies a non-empty string argument into a body.
func setIf(body meridian.Entity, field string, a Args, arg string) {
	if v := a.String(arg); v != "" {
		body[field] = v
	}
}

func createClassification(env *Env) *Tool {
	return &Tool{
		Name:  "create_classification",
		Title: "Create classification",
		Description: "Create a classification (a family of tags such as PII or Tier), or update the one with this name. " +
			"mutuallyExclusive (an entity may carry only one of its tags) is fixed at creation: an update that leaves " +
			"it out keeps it, one that changes it is refused." + confirmFirst,
		Input: Object(Props{
			"name":              String("Classification name, e.g. PII."),
			"description":       String("Markdown description."),
			"displayName":       String("Display name."),
			"mutuallyExclusive": Boolean("Only one tag of this classification per entity (default false)."),
		}, "name", "description"),
		Output: writeOutput("classification"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": a.String("name"), "description": a.String("description")}
			if a.Has("mutuallyExclusive") {
				body["mutuallyExclusive"] = a.Bool("mutuallyExclusive")
			}
			setIf(body, "displayName", a, "displayName")
			res, err := env.Entities.CreateOrUpdate(ctx, p, "classification", body)
			if meridian.ErrorCode(err) == meridian.EInvalid && a.Has("mutuallyExclusive") {
				return nil, withHint(err, "mutuallyExclusive is fixed when the classification is created; leave it out to update the rest")
			}
			if err != nil {
				return nil, err
			}
			return written("classification", res), nil
		},
	}
}

func createTag(env *Env) *Tool {
	return &Tool{
		Name:  "create_tag",
		Title: "Create tag",
		Description: "Create a tag in a classification (classification: \"PII\") or under a parent tag (parent: " +
			"\"PII.Sensitive\"). The classification or parent must exist." + confirmFirst,
		Input: Object(Props{
			"name":           String("Tag name, e.g. Email."),
			"description":    String("Markdown description."),
			"displayName":    String("Display name."),
			"classification": String("Name of the classification the tag belongs to."),
			"parent":         String("FQN of the parent tag, for a nested tag."),
		}, "name", "description"),
		Output: writeOutput("tag"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if a.String("classification") == "" && a.String("parent") == "" {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'classification' or 'parent' is required"),
					"Name the classification (e.g. PII) or the parent tag's FQN (e.g. PII.Sensitive)")
			}
			body := meridian.Entity{"name": a.String("name"), "description": a.String("description")}
			setIf(body, "displayName", a, "displayName")
			setIf(body, "classification", a, "classification")
			setIf(body, "parent", a, "parent")
			res, err := env.Entities.Create(ctx, p, "tag", body)
			if err != nil {
				return nil, err
			}
			return written("tag", res), nil
		},
	}
}

// domainTypes are the domain types, OpenMetadata's enum.
var domainTypes = []string{"Source-aligned", "Consumer-aligned", "Aggregate"}

func createDomain(env *Env) *Tool {
	return &Tool{
		Name:  "create_domain",
		Title: "Create domain",
		Description: "Create a business domain, or a subdomain under parent. Experts and owners are user names " +
			"(owners may also be team names)." + confirmFirst,
		Input: Object(Props{
			"name":        String("Domain name, e.g. Marketing."),
			"description": String("Markdown description."),
			"displayName": String("Display name."),
			"domainType":  Enum("Kind of domain.", domainTypes...).Default("Aggregate"),
			"parent":      String("FQN of the parent domain, for a subdomain."),
			"experts":     Strings("User names of the domain's experts."),
			"owners":      Strings("User or team names of the owners."),
		}, "name", "description"),
		Output: writeOutput("domain"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": a.String("name"), "description": a.String("description"),
				"domainType": a.String("domainType")}
			setIf(body, "displayName", a, "displayName")
			setIf(body, "parent", a, "parent")
			if l := a.Strings("experts"); len(l) > 0 {
				body["experts"] = principalNames(l)
			}
			if l := a.Strings("owners"); len(l) > 0 {
				body["owners"] = principalNames(l)
			}
			res, err := env.Entities.Create(ctx, p, "domain", body)
			if err != nil {
				return nil, err
			}
			return written("domain", res), nil
		},
	}
}

func createDataProduct(env *Env) *Tool {
	return &Tool{
		Name:        "create_data_product",
		Title:       "Create data product",
		Description: "Create a data product in one or more existing domains (domain FQNs)." + confirmFirst,
		Input: Object(Props{
			"name":        String("Data product name."),
			"description": String("Markdown description."),
			"displayName": String("Display name."),
			"domains":     Strings("FQNs of the domains the product belongs to (at least one).").Min(1),
			"experts":     Strings("User names of the product's experts."),
			"owners":      Strings("User or team names of the owners."),
			"reviewers":   Strings("User or team names of the reviewers."),
		}, "name", "description", "domains"),
		Output: writeOutput("dataProduct"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": a.String("name"), "description": a.String("description"),
				"domains": fqnList(a.Strings("domains"))}
			setIf(body, "displayName", a, "displayName")
			for _, f := range []string{"experts", "owners", "reviewers"} {
				if l := a.Strings(f); len(l) > 0 {
					body[f] = principalNames(l)
				}
			}
			res, err := env.Entities.Create(ctx, p, "dataProduct", body)
			if err != nil {
				return nil, err
			}
			return written("dataProduct", res), nil
		},
	}
}

func patchEntity(env *Env) *Tool {
	return &Tool{
		Name:  "patch_entity",
		Title: "Patch entity",
		Description: "Apply an RFC 6902 JSON Patch to an entity, e.g. patch: " +
			"'[{\"op\":\"add\",\"path\":\"/description\",\"value\":\"Orders placed online\"}]'. Paths use the entity's " +
			"field names (plural: /owners, /tags, /domains). Prefer update_entity for description, displayName, owners " +
			"and tags." + confirmFirst,
		Input: Object(Props{
			"entityType": String("Entity type, e.g. table."),
			"fqn":        String("Fully qualified name of the entity."),
			"patch":      String("The JSON Patch: a JSON array of operations, as a string."),
		}, "entityType", "fqn", "patch"),
		Output: writeOutput("entity"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			k, err := env.kind(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			if k.DedicatedFlows {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "patch_entity does not edit %s entities", k.Name),
					"Use the catalog's REST API for this entity type")
			}
			raw := []byte(a.String("patch"))
			var doc any
			if err := json.Unmarshal(raw, &doc); err != nil {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'patch' is not valid JSON: %v", err), patchExample)
			}
			ops, ok := doc.([]any)
			if !ok {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'patch' is not a valid JSONPatch document: it must be a JSON array of operations"), patchExample)
			}
			if len(ops) == 0 {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'patch' is not a valid JSONPatch document: it has no operations"), patchExample)
			}
			if _, err := store.ParsePatch(raw); err != nil {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'patch' is not a valid JSONPatch document: %s",
					strings.TrimPrefix(meridian.ErrorMessage(err), "Invalid JSON Patch: ")), patchExample)
			}
			if err := env.checkPatchFields(k, ops); err != nil {
				return nil, err
			}
			res, err := env.Entities.Patch(ctx, p, k.Name, store.ByFQN(strings.TrimSpace(a.String("fqn"))), raw, "")
			if err != nil {
				if meridian.ErrorCode(err) == meridian.ENotFound {
					return nil, withHint(err, "Check fqn; search_metadata finds an entity's exact fullyQualifiedName")
				}
				return nil, err
			}
			return written(k.Name, res), nil
		},
	}
}

const patchExample = `Pass patch as a JSON array string, e.g. [{"op":"add","path":"/description","value":"..."}]; ops: add, remove, replace, move, copy, test`

// checkPatchFields refuses a patch whose path (or from) starts with a field the kind's
// schema does not have, suggesting the closest field.
func (e *Env) checkPatchFields(k *meridian.Kind, ops []any) error {
	if e.Schemas == nil {
		return nil
	}
	raw, ok := e.Schemas.Schema(k.Name)
	if !ok {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || len(s.Properties) == 0 {
		return nil
	}
	fields := make([]string, 0, len(s.Properties))
	for f := range s.Properties {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, op := range ops {
		m, _ := op.(map[string]any)
		for _, key := range []string{"path", "from"} {
			path, _ := m[key].(string)
			if path == "" || path == "/" {
				continue
			}
			first, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
			first = strings.ReplaceAll(strings.ReplaceAll(first, "~1", "/"), "~0", "~")
			if _, ok := s.Properties[first]; ok {
				continue
			}
			hint := "Fields of " + k.Name + ": " + strings.Join(fields, ", ")
			if best := closest(first, fields); best != "" {
				hint = fmt.Sprintf("Did you mean '%s'? %s", best, hint)
			}
			return withHint(meridian.Errorf(meridian.EInvalid, "Unknown field '%s' in patch %s '%s' for entity type %s", first, key, path, k.Name), hint)
		}
	}
	return nil
}

// Modes of update_entity.
var (
	textModes = []string{"set", "append"}
	listModes = []string{"set", "add", "remove"}
)

func updateEntity(env *Env) *Tool {
	return &Tool{
		Name:  "update_entity",
		Title: "Update entity",
		Description: "Edit an entity's description, displayName, owners or tags with typed operations; prefer it to " +
			"patch_entity. descriptionMode set replaces the description, append adds a paragraph. ownersMode and " +
			"tagsMode set replace the list, add and remove change it. Owners are user or team names; tags are tag or " +
			"glossary term FQNs. Idempotent: a call that changes nothing makes no new version." + confirmFirst,
		Input: Object(Props{
			"entityType":      String("Entity type, e.g. table."),
			"fqn":             String("Fully qualified name of the entity."),
			"description":     String("New description (Markdown)."),
			"descriptionMode": Enum("How description applies.", textModes...).Default("set"),
			"displayName":     String("New display name."),
			"owners":          Strings("User or team names."),
			"ownersMode":      Enum("How owners apply.", listModes...).Default("set"),
			"tags":            Strings("Tag or glossary term FQNs, e.g. PII.Sensitive."),
			"tagsMode":        Enum("How tags apply.", listModes...).Default("set"),
		}, "entityType", "fqn"),
		Output: entityOutput("The entity after the update.", Props{
			"changeType":   Enum("What the call did.", meridian.EventEntityUpdated, meridian.EventEntityNoChange),
			"changed":      Strings("Fields this call changed."),
			"totalColumns": Integer("Number of columns, for entities that have them (read them with get_entity_details)."),
		}),
		Write: true, Idempotent: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if !a.Has("description") && !a.Has("displayName") && !a.Has("owners") && !a.Has("tags") {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Nothing to update: give description, displayName, owners or tags"),
					"For other fields use patch_entity")
			}
			k, err := env.kind(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			fqn := strings.TrimSpace(a.String("fqn"))
			for _, f := range []string{"owners", "tags"} {
				if a.Has(f) && !k.HasField(f) {
					return nil, withHint(meridian.Errorf(meridian.EInvalid, "Entity type %s has no %s", k.Name, f), "Use patch_entity for this entity type's own fields")
				}
			}
			// Names resolve before the write; the entity is read and changed in one
			// transaction, so concurrent calls never lose each other's changes.
			var owners, labels []any
			if a.Has("owners") {
				if owners, err = env.principalRefs(ctx, p, "owners", a.Strings("owners"), "user", "team"); err != nil {
					return nil, err
				}
			}
			if a.Has("tags") && a.String("tagsMode") != "remove" {
				if labels, err = env.tagLabels(ctx, p, a.Strings("tags")); err != nil {
					return nil, err
				}
			}
			var changed []any
			res, err := env.Entities.Edit(ctx, p, k.Name, store.ByFQN(fqn), "", func(cur meridian.Entity) (meridian.Entity, error) {
				changed = []any{}
				set := func(field string, v any) {
					cur[field] = v
					changed = append(changed, field)
				}
				if a.Has("description") {
					old, want := cur.String("description"), a.String("description")
					if a.String("descriptionMode") == "append" && old != "" {
						if strings.HasSuffix(strings.TrimSpace(old), strings.TrimSpace(want)) {
							want = old
						} else {
							want = strings.TrimRight(old, "\n") + "\n\n" + want
						}
					}
					if want != old {
						set("description", want)
					}
				}
				if a.Has("displayName") && a.String("displayName") != cur.String("displayName") {
					set("displayName", a.String("displayName"))
				}
				if a.Has("owners") {
					if v, diff := ownersUpdate(cur, owners, a.String("ownersMode")); diff {
						set("owners", v)
					}
				}
				if a.Has("tags") {
					if v, diff := tagsUpdate(cur, labels, a.Strings("tags"), a.String("tagsMode")); diff {
						set("tags", v)
					}
				}
				return cur, nil
			})
			if err != nil {
				return nil, notFoundHint(err, k, fqn)
			}
			out := written(k.Name, res)
			out["changed"] = changed
			return out, nil
		},
	}
}

// ownersUpdate computes the owners list after set/add/remove of the given owner
// references, and whether it differs.
func ownersUpdate(cur meridian.Entity, given []any, mode string) ([]any, bool) {
	type ref struct{ id, typ string }
	var old []ref
	for _, o := range asList(cur["owners"]) {
		m, _ := o.(map[string]any)
		id, _ := m["id"].(string)
		typ, _ := m["type"].(string)
		old = append(old, ref{id, typ})
	}
	var want []ref
	for _, g := range given {
		m := g.(map[string]any)
		want = append(want, ref{m["id"].(string), m["type"].(string)})
	}
	has := func(l []ref, id string) bool {
		for _, r := range l {
			if r.id == id {
				return true
			}
		}
		return false
	}
	var next []ref
	switch mode {
	case "add":
		next = append(next, old...)
		for _, w := range want {
			if !has(next, w.id) {
				next = append(next, w)
			}
		}
	case "remove":
		for _, o := range old {
			if !has(want, o.id) {
				next = append(next, o)
			}
		}
	default:
		next = want
	}
	same := len(next) == len(old)
	for _, n := range next {
		same = same && has(old, n.id)
	}
	out := make([]any, 0, len(next))
	for _, n := range next {
		out = append(out, map[string]any{"id": n.id, "type": n.typ})
	}
	return out, !same
}

// tagsUpdate computes the entity-level tag labels after set/add/remove of the tags
// named by fqns, and whether they differ. Existing labels are kept as they are; new
// ones come from resolved, the labels of fqns (nil for remove). Removing a tag the
// entity does not carry changes nothing.
func tagsUpdate(cur meridian.Entity, resolved []any, fqns []string, mode string) ([]any, bool) {
	old := asList(cur["tags"])
	label := func(l any) string { m, _ := l.(map[string]any); s, _ := m["tagFQN"].(string); return s }
	index := map[string]any{}
	for _, l := range old {
		index[strings.ToLower(label(l))] = l
	}
	var next []any
	switch mode {
	case "remove":
		drop := map[string]bool{}
		for _, f := range fqns {
			drop[strings.ToLower(strings.TrimSpace(f))] = true
		}
		for _, l := range old {
			if !drop[strings.ToLower(label(l))] {
				next = append(next, l)
			}
		}
	default:
		var fresh []any
		for _, l := range resolved {
			if _, ok := index[strings.ToLower(label(l))]; !ok {
				fresh = append(fresh, l)
			}
		}
		if mode == "add" {
			next = append(next, old...)
			next = append(next, fresh...)
		} else {
			keep := map[string]bool{}
			for _, f := range fqns {
				keep[strings.ToLower(strings.TrimSpace(f))] = true
			}
			for _, l := range old {
				if keep[strings.ToLower(label(l))] {
					next = append(next, l)
				}
			}
			next = append(next, fresh...)
		}
	}
	if next == nil {
		next = []any{}
	}
	same := len(next) == len(old)
	if same {
		for _, l := range next {
			if _, ok := index[strings.ToLower(label(l))]; !ok {
				same = false
			}
		}
	}
	return next, !same
}
