package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/google/uuid"
	"github.com/meridian-catalog/meridian"
)

// inTx runs f in a writable transaction and commits when f succeeds.
func (s *Entities) inTx(ctx context.Context, f func(Tx) error) error {
	tx, err := s.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if s.notify != nil {
		s.notify()
	}
	return nil
}

// inReadTx runs f in a read-only transaction.
func (s *Entities) inReadTx(ctx context.Context, f func(Tx) error) error {
	tx, err := s.db.Begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return f(tx)
}

func (s *Entities) authorize(p *meridian.Principal, op Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if s.policy == nil {
		return nil
	}
	return s.policy.Authorize(p, op, k.Name, e, owners)
}

// authorizeOwned checks op on a stored entity e, whose owners are those of its full
// document. A member of an owning team counts as an owner: when e has a team owner and
// the policy refuses, the team owners are expanded to their member users (relation
// "teams" from user to team) and the policy asked again. Without a team owner, or when
// the policy allows at once, it costs no lookup.
func (s *Entities) authorizeOwned(ctx context.Context, tx Tx, p *meridian.Principal, op Operation, k *meridian.Kind, e meridian.Entity) error {
	owners := ownersOf(e)
	err := s.authorize(p, op, k, e, owners)
	if err == nil || p == nil || meridian.ErrorCode(err) != meridian.EForbidden || !hasTeam(owners) {
		return err
	}
	members, merr := teamMembers(ctx, tx, owners)
	if merr != nil {
		return merr
	}
	if len(members) == 0 {
		return err
	}
	expanded := append(append([]meridian.EntityRef{}, owners...), members...)
	if s.authorize(p, op, k, e, expanded) == nil {
		return nil
	}
	return err
}

func hasTeam(refs []meridian.EntityRef) bool {
	for _, r := range refs {
		if r.Type == "team" {
			return true
		}
	}
	return false
}

// teamMembers returns, as user references (by id), the members of the active teams
// among owners.
func teamMembers(ctx context.Context, tx Tx, owners []meridian.EntityRef) ([]meridian.EntityRef, error) {
	var out []meridian.EntityRef
	seen := map[string]bool{}
	for _, o := range owners {
		if o.Type != "team" || o.ID == "" || o.Deleted {
			continue
		}
		rels, err := tx.Relations(ctx, RelationQuery{ToID: o.ID, Type: relationTypeTeams})
		if err != nil {
			return nil, err
		}
		for _, rel := range rels {
			if rel.FromKind != "user" || seen[rel.FromID] {
				continue
			}
			seen[rel.FromID] = true
			out = append(out, meridian.EntityRef{ID: rel.FromID, Type: "user"})
		}
	}
	return out, nil
}

// relationTypeTeams links a user to each team it is a member of.
const relationTypeTeams = "teams"

// ownersOf reads the owners of a full document.
func ownersOf(e meridian.Entity) []meridian.EntityRef {
	var refs []meridian.EntityRef
	for _, item := range asList(e["owners"]) {
		m, _ := item.(map[string]any)
		id, _ := m["id"].(string)
		typ, _ := m["type"].(string)
		name, _ := m["name"].(string)
		deleted, _ := m["deleted"].(bool)
		refs = append(refs, meridian.EntityRef{ID: id, Type: typ, Name: name, Deleted: deleted})
	}
	return refs
}

// draft is a new entity document ready to insert, with its parent.
type draft struct {
	entity    meridian.Entity
	parent    *Row
	parentDoc meridian.Entity
}

// draft turns a create or PUT body into a full document: system fields set, the parent
// resolved and the FQN built, references resolved. A new entity is then completed by
// complete; a PUT of an existing one is merged and checked by update.
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
	if err := s.checkTags(ctx, tx, nil, e); err != nil {
		return draft{}, err
	}
	if err := s.prepareTestCase(ctx, tx, k, e, d.parentDoc); err != nil {
		return draft{}, err
	}
	now := float64(s.now().UnixMilli())
	id := uuid.NewString()
	e["id"] = id
	e["fullyQualifiedName"] = fqn
	e["version"] = meridian.InitialVersion.Float()
	e["updatedAt"] = now
	e["updatedBy"] = principalName(p)
	e["deleted"] = false
	e["href"] = "/api/v1/" + k.Collection + "/" + id
	return d, nil
}

// complete finishes a draft that creates an entity: the schema's defaults fill the
// fields the body left out, the kind's Prepare runs, and the document is validated and
// checked against the governance rules.
func (s *Entities) complete(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, d draft) error {
	if v, ok := s.valid.(interface{ Defaults(string, meridian.Entity) }); ok {
		v.Defaults(k.Name, d.entity)
	}
	if k.Prepare != nil {
		if err := k.Prepare(d.entity, d.parentDoc); err != nil {
			return err
		}
	}
	if err := s.validate(k, d.entity); err != nil {
		return err
	}
	return s.checkGovernance(ctx, tx, p, k, nil, d.entity)
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
	parentDoc, err := s.full(ctx, tx, pk, parent, want)
	if err != nil {
		return "", err
	}
	d.parent, d.parentDoc = &parent, parentDoc
	if k.Locate == nil {
		e[parentField] = refOf(parent).Map()
	}
	for _, f := range k.Inherit {
		if f == parentField {
			continue
		}
		if f == parent.Kind {
			e[f] = refOf(parent).Map()
		} else if v, ok := parentDoc[f]; ok {
			e[f] = v
		}
	}
	if fqn == "" {
		fqn = parent.FQN + "." + meridian.QuoteName(e.Name())
	}
	return fqn, nil
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
	for field, inv := range meridian.InverseRelationFields {
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
				kind := "tag"
				if m["source"] == "Glossary" {
					kind = "glossaryTerm"
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
//     mutually exclusive parent can't be on one entity or column (checkTagRules);
//   - only the system principal creates or changes a system test definition.
//
// A rule is checked on the final document, and only when its fields changed, so that a
// document stored before a rule applied can still be edited elsewhere, deleted and
// restored.
func (s *Entities) checkGovernance(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, old, next meridian.Entity) error {
	if err := checkSystemDefinition(p, k, old, next); err != nil {
		return err
	}
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
		case "user":
			users++
		case "team":
			teams++
			id, _ := ref["id"].(string)
			row, err := tx.Get(ctx, "team", id)
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
		case "user":
			users++
		case "team":
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

// tagNode is what the tag rules need of a classification, tag, glossary or glossary
// term.
type tagNode struct {
	found, disabled, mutuallyExclusive bool
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
			var doc struct {
				Disabled          bool `json:"disabled"`
				MutuallyExclusive bool `json:"mutuallyExclusive"`
			}
			if err := json.Unmarshal(r.Doc, &doc); err != nil {
				return n, err
			}
			n = tagNode{found: true, disabled: doc.Disabled, mutuallyExclusive: doc.MutuallyExclusive}
		}
		nodes[key] = n
		return n, nil
	}
	// kindsOf returns the kinds of a label's root (classification or glossary) and of the
	// nodes below it.
	kindsOf := func(label map[string]any) (string, string) {
		if label["source"] == "Glossary" {
			return "glossary", "glossaryTerm"
		}
		return "classification", "tag"
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

func (s *Entities) validate(k *meridian.Kind, e meridian.Entity) error {
	if k.Validate != nil {
		if err := k.Validate(e); err != nil {
			return err
		}
	}
	if s.valid != nil {
		return s.valid.Validate(k.Name, e)
	}
	return nil
}

// insert writes a new entity: its row, its parent and relationship links, its first
// version snapshot and its change event.
func (s *Entities) insert(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, d draft) error {
	e := d.entity
	w, err := s.write(k, e)
	if err != nil {
		return err
	}
	row := Row{ID: e.ID(), Kind: k.Name, Name: e.Name(), FQN: e.FQN(), Version: meridian.InitialVersion,
		UpdatedAt: int64(e["updatedAt"].(float64)), UpdatedBy: e.String("updatedBy"), Doc: w.row}
	if err := tx.Insert(ctx, row); err != nil {
		return err
	}
	if d.parent != nil {
		if err := tx.Relate(ctx, Relation{FromID: d.parent.ID, FromKind: d.parent.Kind, ToID: row.ID, ToKind: k.Name, Type: relationTypeContains}); err != nil {
			return err
		}
	}
	if err := syncRelations(ctx, tx, k, row.ID, nil, e); err != nil {
		return err
	}
	if err := tx.PutVersion(ctx, row.ID, row.Version, w.version); err != nil {
		return err
	}
	if err := tx.Index(ctx, SearchDocOf(k, e)); err != nil {
		return err
	}
	return tx.AppendEvent(ctx, s.event(p, meridian.EventEntityCreated, k, w.snap, nil))
}

// writeOpts says how update records a change.
type writeOpts struct {
	change    string // the change type of the answer and of the event
	emit      bool   // record a change event
	recursive bool   // the event's recursive flag
}

// update writes a new version of an entity when next differs from old: the version
// goes up by 0.1, or by 1.0 for a breaking change, changeDescription records the
// difference, and the row, relationships, snapshot and event are written. When
// nothing changed it returns old and entityNoChange.
func (s *Entities) update(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, row Row, old, next meridian.Entity, o writeOpts) (meridian.Entity, string, error) {
	cd, major := Diff(old, next)
	if cd.Empty() {
		return old, meridian.EventEntityNoChange, nil
	}
	if changesAny(cd, k.Privileged) {
		if err := s.authorize(p, OpEditPrivileged, k, old, ownersOf(old)); err != nil {
			return nil, "", err
		}
	}
	if err := s.checkGovernance(ctx, tx, p, k, old, next); err != nil {
		return nil, "", err
	}
	version := row.Version.Minor()
	if major {
		version = row.Version.Major()
	}
	now := s.now().UnixMilli()
	next["version"] = version.Float()
	next["updatedAt"] = float64(now)
	next["updatedBy"] = principalName(p)
	next["changeDescription"] = cd.Map()
	if err := s.validate(k, next); err != nil {
		return nil, "", err
	}
	w, err := s.write(k, next)
	if err != nil {
		return nil, "", err
	}
	updated := Row{ID: row.ID, Kind: k.Name, Name: row.Name, FQN: row.FQN, Version: version, UpdatedAt: now,
		UpdatedBy: principalName(p), Deleted: next.Deleted(), Doc: w.row}
	if err := tx.Update(ctx, updated, row.Version); err != nil {
		return nil, "", err
	}
	if err := syncRelations(ctx, tx, k, row.ID, old, next); err != nil {
		return nil, "", err
	}
	if err := tx.PutVersion(ctx, row.ID, version, w.version); err != nil {
		return nil, "", err
	}
	if err := tx.Index(ctx, SearchDocOf(k, next)); err != nil {
		return nil, "", err
	}
	if o.emit {
		ev := s.event(p, o.change, k, w.snap, &cd)
		ev.Recursive = o.recursive
		if err := tx.AppendEvent(ctx, ev); err != nil {
			return nil, "", err
		}
	}
	return next, o.change, nil
}

// changesAny reports whether the change touches one of the top-level fields.
func changesAny(cd meridian.ChangeDescription, fields []string) bool {
	for _, list := range [][]meridian.FieldChange{cd.FieldsAdded, cd.FieldsUpdated, cd.FieldsDeleted} {
		for _, c := range list {
			top, _, _ := strings.Cut(c.Name, ".")
			if contains(fields, top) {
				return true
			}
		}
	}
	return false
}

// syncRelations makes the relationship store hold the references of next's
// relationship fields.
func syncRelations(ctx context.Context, tx Tx, k *meridian.Kind, id string, old, next meridian.Entity) error {
	for field := range meridian.RelationFields {
		if field == "followers" || !k.HasField(field) {
			continue
		}
		before := refIDs(old[field])
		after := refIDs(next[field])
		for to, kind := range after {
			if _, ok := before[to]; !ok {
				if err := tx.Relate(ctx, Relation{FromID: id, FromKind: k.Name, ToID: to, ToKind: kind, Type: field}); err != nil {
					return err
				}
			}
		}
		for to, kind := range before {
			if _, ok := after[to]; !ok {
				if err := tx.Unrelate(ctx, Relation{FromID: id, FromKind: k.Name, ToID: to, ToKind: kind, Type: field}); err != nil {
					return err
				}
			}
		}
	}
	for field, inv := range meridian.InverseRelationFields {
		if !k.HasField(field) {
			continue
		}
		before := refIDs(old[field])
		after := refIDs(next[field])
		for from, kind := range after {
			if _, ok := before[from]; !ok {
				if err := tx.Relate(ctx, Relation{FromID: from, FromKind: kind, ToID: id, ToKind: k.Name, Type: inv.Type}); err != nil {
					return err
				}
			}
		}
		for from, kind := range before {
			if _, ok := after[from]; !ok {
				if err := tx.Unrelate(ctx, Relation{FromID: from, FromKind: kind, ToID: id, ToKind: k.Name, Type: inv.Type}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func refIDs(v any) map[string]string {
	m := map[string]string{}
	for _, item := range asList(v) {
		ref, _ := item.(map[string]any)
		id, _ := ref["id"].(string)
		typ, _ := ref["type"].(string)
		if id != "" {
			m[id] = typ
		}
	}
	return m
}

// setTreeDeleted soft-deletes (or restores) every descendant of id whose deleted flag
// differs, each with a new version and no change event of its own.
func (s *Entities) setTreeDeleted(ctx context.Context, tx Tx, p *meridian.Principal, id string, deleted bool) error {
	children, err := tx.Relations(ctx, RelationQuery{FromID: id, Type: relationTypeContains})
	if err != nil {
		return err
	}
	for _, c := range children {
		row, err := tx.Get(ctx, c.ToKind, c.ToID)
		if err != nil {
			return err
		}
		if err := s.setTreeDeleted(ctx, tx, p, row.ID, deleted); err != nil {
			return err
		}
		if row.Deleted == deleted {
			continue
		}
		k, ok := s.reg.Kind(row.Kind)
		if !ok {
			continue
		}
		old, err := s.full(ctx, tx, k, row, nil)
		if err != nil {
			return err
		}
		next := old.Clone()
		next["deleted"] = deleted
		if _, _, err := s.update(ctx, tx, p, k, row, old, next, writeOpts{}); err != nil {
			return err
		}
	}
	return nil
}

// removeTree removes an entity and all its descendants.
func (s *Entities) removeTree(ctx context.Context, tx Tx, id string) error {
	children, err := tx.Relations(ctx, RelationQuery{FromID: id, Type: relationTypeContains})
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := s.removeTree(ctx, tx, c.ToID); err != nil {
			return err
		}
	}
	return tx.Remove(ctx, id)
}

// event builds a change event for an entity.
func (s *Entities) event(p *meridian.Principal, typ string, k *meridian.Kind, e meridian.Entity, cd *meridian.ChangeDescription) meridian.ChangeEvent {
	ev := meridian.ChangeEvent{ID: uuid.NewString(), EventType: typ, EntityType: k.Name, EntityID: e.ID(),
		EntityFQN: e.FQN(), UserName: principalName(p), Timestamp: s.now().UnixMilli(),
		CurrentVersion: e.Version().Float(), ChangeDescription: cd, Entity: e}
	if cd != nil {
		ev.PreviousVersion = cd.PreviousVersion
	} else {
		ev.PreviousVersion = ev.CurrentVersion
	}
	return ev
}

func principalName(p *meridian.Principal) string {
	if p == nil || p.Name == "" {
		return "system"
	}
	return p.Name
}

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

// immutableFields are the fields PATCH may not change.
func immutableFields(k *meridian.Kind) []string {
	f := []string{"id", "name", "fullyQualifiedName", "deleted"}
	f = append(f, k.Immutable...)
	for _, p := range k.Parents {
		f = append(f, p.Field)
	}
	f = append(f, k.Inherit...)
	return f
}

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
func conditions(k *meridian.Kind, filters map[string]string) ([]Condition, error) {
	var out []Condition
	for _, f := range k.Filters {
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
