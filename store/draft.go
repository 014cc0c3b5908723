package store

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

// draft is a new entity document ready to insert, with its parent.
type draft struct {
	entity    meridian.Entity
	parent    *Row
	parentDoc meridian.Entity
}

// draft turns a create or PUT body into a full document: system fields set, the parent
// resolved and the FQN built, references resolved. A new entity is then checked by
// beforeWrite and inserted; a PUT of an existing one is merged and written by update.
func (s *Entities) draft(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, body meridian.Entity) (draft, error) {
	if body == nil {
		return draft{}, meridian.Errorf(meridian.EInvalid, "Invalid request format: the body must be a JSON object")
	}
	e := body.Clone()
	for _, f := range meridian.SystemFields {
		delete(e, f)
	}
	name, ok := e["name"].(string)
	if e["name"] == nil {
		return draft{}, meridian.Errorf(meridian.EInvalid, "name is required")
	}
	if !ok {
		return draft{}, meridian.Errorf(meridian.EInvalid, "name must be a string")
	}
	if err := meridian.ValidateName("name", name); err != nil {
		return draft{}, err
	}
	if err := s.checkRequired(k, e); err != nil {
		return draft{}, err
	}
	d := draft{entity: e}
	fqn, err := s.locate(ctx, tx, k, &d)
	if err != nil {
		return draft{}, err
	}
	if len(fqn) > meridian.MaxFQNLength {
		return draft{}, meridian.Errorf(meridian.EInvalid, "fullyQualifiedName size must be between 1 and %d", meridian.MaxFQNLength)
	}
	if err := s.resolveFields(ctx, tx, k, e); err != nil {
		return draft{}, err
	}
	if err := s.container(ctx, tx, p, k, d); err != nil {
		return draft{}, err
	}
	if err := s.checkTags(ctx, tx, nil, e); err != nil {
		return draft{}, err
	}
	now := float64(s.now().UnixMilli())
	id := meridian.NewID()
	e["id"] = id
	e["fullyQualifiedName"] = fqn
	e["version"] = meridian.InitialVersion.Float()
	e["updatedAt"] = now
	e["updatedBy"] = principalName(p)
	e["deleted"] = false
	e["href"] = "/api/v1/" + k.Collection + "/" + id
	return d, nil
}

// checkRequired reports a required field missing from a body before anything is looked
// up, so that a body missing serverType is told so even when its service is unknown.
// The fields the engine sets and those with a default are skipped; the parent fields
// are checked by locate.
func (s *Entities) checkRequired(k *meridian.Kind, e meridian.Entity) error {
	r, ok := s.valid.(interface{ Required(string) []string })
	if !ok {
		return nil
	}
	defaults := meridian.Entity{}
	if v, ok := s.valid.(interface{ Defaults(string, meridian.Entity) }); ok {
		v.Defaults(k.Name, defaults)
	}
	for _, f := range r.Required(k.Name) {
		if contains(meridian.SystemFields, f) || f == "name" || defaults[f] != nil {
			continue
		}
		if v, present := e[f]; !present || v == nil {
			return meridian.Errorf(meridian.EInvalid, "%s is required", f)
		}
	}
	return nil
}

// locate resolves the parent named by the body and returns the FQN.
func (s *Entities) locate(ctx context.Context, tx Tx, k *meridian.Kind, d *draft) (string, error) {
	e := d.entity
	var (
		parentKind, parentField string
		parentRef               any
		fqn                     string
	)
	if k.Locate != nil {
		loc, err := k.Locate(e)
		if err != nil {
			return "", err
		}
		parentKind, parentRef, fqn = loc.ParentKind, loc.ParentFQN, loc.FQN
		parentField = "entityLink"
	} else {
		for _, rule := range k.Parents {
			if v, ok := e[rule.Field]; ok && v != nil && v != "" {
				parentKind, parentField, parentRef = rule.Kind, rule.Field, v
				break
			}
		}
		if parentKind == "" && k.ParentRequired {
			return "", meridian.Errorf(meridian.EInvalid, "%s is required", k.Parents[len(k.Parents)-1].Field)
		}
	}
	if parentKind == "" {
		return meridian.QuoteName(e.Name()), nil
	}
	parent, err := resolveRef(ctx, tx, parentField, parentRef, []string{parentKind})
	if err != nil {
		return "", err
	}
	pk, _ := s.reg.Kind(parent.Kind)
	// Only a Prepare hook reads the parent's relationship fields (a glossary's
	// reviewers); inherited fields live in the stored document.
	var want map[string]bool
	if k.Prepare == nil {
		want = map[string]bool{}
	}
	parentDoc, err := s.parentDoc(ctx, tx, pk, parent, want)
	if err != nil {
		return "", err
	}
	d.parent, d.parentDoc = &parent, parentDoc
	ref := refOfDecoded(parent, parentDoc)
	if k.Locate == nil {
		e[parentField] = ref.Map()
	}
	for _, f := range k.Inherit {
		if f == parentField {
			continue
		}
		if f == parent.Kind {
			e[f] = ref.Map()
		} else if v, ok := parentDoc[f]; ok {
			e[f] = v
		}
	}
	if fqn == "" {
		fqn = parent.FQN + "." + meridian.QuoteName(e.Name())
	}
	return fqn, nil
}

// parentDoc is s.full of a create's parent, from s.parents when its document is one
// decoded lately and reading it needs nothing else: want names no field, and the kind
// seals no secret.
func (s *Entities) parentDoc(ctx context.Context, tx Tx, k *meridian.Kind, parent Row, want map[string]bool) (meridian.Entity, error) {
	kept := want != nil && len(want) == 0 && s.secrets[k.Name] == nil
	if kept {
		if e, ok := s.parents.get(parent.Doc); ok {
			return e, nil
		}
	}
	e, err := s.full(ctx, tx, k, parent, want)
	if err == nil && kept {
		s.parents.put(parent.Doc, e)
	}
	return e, err
}

// resolveFields turns the relationship fields and reference fields of a document into
// full references, checking that each target exists.
func (s *Entities) resolveFields(ctx context.Context, tx Tx, k *meridian.Kind, e meridian.Entity) error {
	for field, kinds := range meridian.RelationFields {
		v, ok := e[field]
		if !ok || field == "followers" {
			continue
		}
		if err := resolveListField(ctx, tx, k, e, field, v, kinds); err != nil {
			return err
		}
	}
	for field, inv := range k.Inverse {
		if v, ok := e[field]; ok {
			if err := resolveListField(ctx, tx, k, e, field, v, inv.Kinds); err != nil {
				return err
			}
		}
	}
	for field, kinds := range k.Refs {
		v, ok := e[field]
		if !ok || v == nil {
			continue
		}
		r, err := resolveRef(ctx, tx, field, v, kinds)
		if err != nil {
			return err
		}
		e[field] = refOf(r).Map()
	}
	return nil
}

// resolveListField replaces a list of references in e[field] with full references.
func resolveListField(ctx context.Context, tx Tx, k *meridian.Kind, e meridian.Entity, field string, v any, kinds []string) error {
	if !k.HasField(field) {
		return meridian.Errorf(meridian.EInvalid, "Unrecognized field %s", field)
	}
	rows, err := resolveRefList(ctx, tx, field, v, kinds)
	if err != nil {
		return err
	}
	refs := make([]meridian.EntityRef, len(rows))
	for i, r := range rows {
		refs[i] = refOf(r)
	}
	e[field] = refsToList(refs)
	return nil
}

// container sets the kind's Container field of a document that names none to a
// reference to its container, built from the parent document, creating the container
// in this transaction when no entity has its FQN yet (a table's basic test suite, made
// with its first test case).
func (s *Entities) container(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, d draft) error {
	c := k.Container
	if c == nil || d.parentDoc == nil {
		return nil
	}
	if v, ok := d.entity[c.Field]; ok && v != nil {
		return nil
	}
	ck, err := s.reg.Lookup(c.Kind)
	if err != nil {
		return err
	}
	cd, err := s.draft(ctx, tx, p, ck, c.Body(d.parentDoc))
	if err != nil {
		return err
	}
	row, err := tx.GetByFQN(ctx, ck.Name, cd.entity.String("fullyQualifiedName"))
	switch {
	case err == nil && !row.Deleted:
		d.entity[c.Field] = refOf(row).Map()
		return nil
	case err == nil: // a deleted container: the new entity names one explicitly or fails
		return meridian.Errorf(meridian.EInvalid, "%s %s is deleted: restore it, or name another %s", ck.Name, row.FQN, c.Field)
	case meridian.ErrorCode(err) != meridian.ENotFound:
		return err
	}
	if _, err := s.createDraft(ctx, tx, p, ck, cd); err != nil {
		return err
	}
	d.entity[c.Field] = meridian.EntityRef{ID: cd.entity.ID(), Type: ck.Name, Name: cd.entity.Name(),
		FullyQualifiedName: cd.entity.String("fullyQualifiedName"), Href: cd.entity.String("href")}.Map()
	return nil
}
