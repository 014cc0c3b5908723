package store

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
)

// Mask replaces a secret in answers to callers who may not see it.
const Mask = "*********"

// relationTypeContains links a parent to each child.
const relationTypeContains = "contains"

// decode parses a stored document.
func decode(b []byte) (meridian.Entity, error) {
	var e meridian.Entity
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	return e, nil
}

func encode(e meridian.Entity) []byte {
	b, _ := json.Marshal(e)
	return b
}

// getRow reads a row by key, honouring include.
func getRow(ctx context.Context, tx Tx, k *meridian.Kind, key Key, include Include) (Row, error) {
	var (
		r   Row
		err error
	)
	if key.ID != "" {
		r, err = tx.Get(ctx, k.Name, key.ID)
	} else {
		fqn, ferr := meridian.NormalizeFQN(key.FQN)
		if ferr != nil {
			return Row{}, ferr
		}
		r, err = tx.GetByFQN(ctx, k.Name, fqn)
	}
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return Row{}, meridian.NotFound(k.Name, key.String())
	}
	if err != nil {
		return Row{}, err
	}
	if !includes(include, r.Deleted) {
		return Row{}, meridian.NotFound(k.Name, key.String())
	}
	return r, nil
}

func includes(include Include, deleted bool) bool {
	switch include {
	case IncludeAll:
		return true
	case IncludeDeleted:
		return deleted
	}
	return !deleted
}

// full reads the whole document of a row: stored fields, secrets opened, and the
// relationship fields named in want (every one of the kind's when want is nil).
func (s *Entities) full(ctx context.Context, tx Tx, k *meridian.Kind, r Row, want map[string]bool) (meridian.Entity, error) {
	e, err := decode(r.Doc)
	if err != nil {
		return nil, err
	}
	if err := s.openSecrets(k, e); err != nil {
		return nil, err
	}
	// The wanted relationship fields by relation type: a direct field's type is its
	// name; inverse fields may share a type. One read for each direction.
	direct, inverse := map[string][]string{}, map[string][]string{}
	for field := range meridian.RelationFields {
		if k.HasField(field) && (want == nil || want[field]) {
			direct[field] = append(direct[field], field)
		}
	}
	for field, inv := range meridian.InverseRelationFields {
		if k.HasField(field) && (want == nil || want[field]) {
			inverse[inv.Type] = append(inverse[inv.Type], field)
		}
	}
	if err := setRelationFields(ctx, tx, e, r.ID, direct, false); err != nil {
		return nil, err
	}
	if err := setRelationFields(ctx, tx, e, r.ID, inverse, true); err != nil {
		return nil, err
	}
	if k.HasField("tags") {
		if _, ok := e["tags"]; !ok {
			e["tags"] = []any{}
		}
	}
	return e, nil
}

// setRelationFields sets relationship fields of e, the entity id, with one read of its
// relations; fields maps each relation type to the fields that show it. A field lists
// the entities the entity's relations of its type point at, oldest first, or with
// inverse the entities whose relations of its type point at it (a team's users).
// Relations to entities that no longer exist are left out.
func setRelationFields(ctx context.Context, tx Tx, e meridian.Entity, id string, fields map[string][]string, inverse bool) error {
	if len(fields) == 0 {
		return nil
	}
	types := make([]string, 0, len(fields))
	for typ := range fields {
		types = append(types, typ)
	}
	sort.Strings(types)
	rows, err := tx.Related(ctx, id, types, inverse)
	if err != nil {
		return err
	}
	refs := make(map[string][]meridian.EntityRef, len(fields))
	for _, rr := range rows {
		refs[rr.Type] = append(refs[rr.Type], refOf(rr.Row))
	}
	for typ, names := range fields {
		for _, field := range names {
			e[field] = refsToList(refs[typ])
		}
	}
	return nil
}

// refOf builds a reference to a stored row.
func refOf(r Row) meridian.EntityRef {
	ref := meridian.EntityRef{ID: r.ID, Type: r.Kind, Name: r.Name, FullyQualifiedName: r.FQN, Deleted: r.Deleted}
	var head struct {
		DisplayName string `json:"displayName"`
		Href        string `json:"href"`
	}
	_ = json.Unmarshal(r.Doc, &head)
	ref.DisplayName = head.DisplayName
	ref.Href = head.Href
	return ref
}

func refsToList(refs []meridian.EntityRef) []any {
	l := make([]any, len(refs))
	for i, r := range refs {
		l[i] = r.Map()
	}
	return l
}

// shape prepares a full document for a caller: fields the kind gates behind ?fields=
// are dropped unless requested, and secrets are masked unless the caller may see them.
func (s *Entities) shape(p *meridian.Principal, k *meridian.Kind, e meridian.Entity, fields map[string]bool) meridian.Entity {
	out := e.Clone()
	if fields != nil {
		for _, f := range k.Fields {
			if !fields[f] {
				delete(out, f)
			}
		}
	}
	if len(k.Secrets) > 0 && s.policy != nil && s.policy.Authorize(p, OpSeeSecrets, k, e, nil) != nil {
		for _, field := range k.Secrets {
			if v, ok := out[field]; ok {
				out[field] = mapSecrets(v, "", func(string) (string, error) { return Mask, nil })
			}
		}
	}
	return out
}

// written is a document in the forms a write stores: snap is the full document with its
// secrets sealed (the version snapshot and the change event), row and version are the
// encoded entity row (without relationship fields, which live in the relationship
// store) and snapshot. When the document holds no relationship fields both are the
// same bytes.
type written struct {
	snap         meridian.Entity
	row, version []byte
}

// write prepares a full document for storage, sealing its secrets once.
func (s *Entities) write(k *meridian.Kind, e meridian.Entity) (written, error) {
	snap, err := s.sealed(k, e)
	if err != nil {
		return written{}, err
	}
	row := make(meridian.Entity, len(snap))
	for key, v := range snap {
		_, rel := meridian.RelationFields[key]
		_, inv := meridian.InverseRelationFields[key]
		if !rel && !inv {
			row[key] = v
		}
	}
	w := written{snap: snap, row: encode(row)}
	w.version = w.row
	if len(row) != len(snap) {
		w.version = encode(snap)
	}
	return w, nil
}

// sealed returns a copy of the document with its secrets sealed, for version snapshots.
func (s *Entities) sealed(k *meridian.Kind, e meridian.Entity) (meridian.Entity, error) {
	out := e.Clone()
	if s.sealer == nil {
		return out, nil
	}
	for _, field := range k.Secrets {
		v, ok := out[field]
		if !ok {
			continue
		}
		var err error
		out[field] = mapSecrets(v, "", func(plain string) (string, error) {
			if plain == "" || strings.HasPrefix(plain, sealedPrefix) {
				return plain, nil
			}
			sealed, serr := s.sealer.Seal(plain)
			if serr != nil {
				err = serr
			}
			return sealed, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

const sealedPrefix = "enc:"

// openSecrets decrypts sealed secrets in place.
func (s *Entities) openSecrets(k *meridian.Kind, e meridian.Entity) error {
	if s.sealer == nil {
		return nil
	}
	var err error
	for _, field := range k.Secrets {
		if v, ok := e[field]; ok {
			e[field] = mapSecrets(v, "", func(sealed string) (string, error) {
				if !strings.HasPrefix(sealed, sealedPrefix) {
					return sealed, nil
				}
				plain, oerr := s.sealer.Open(sealed)
				if oerr != nil {
					err = oerr
					return "", nil
				}
				return plain, nil
			})
		}
	}
	return err
}

// restoreMasked puts back the stored value of every secret a client sent back masked.
func restoreMasked(k *meridian.Kind, old, new meridian.Entity) {
	for _, field := range k.Secrets {
		if nv, ok := new[field]; ok {
			restoreMaskedValue(old[field], nv)
		}
	}
}

func restoreMaskedValue(old, new any) {
	om, _ := old.(map[string]any)
	nm, _ := new.(map[string]any)
	if nm == nil {
		return
	}
	for k, v := range nm {
		if s, ok := v.(string); ok && s == Mask {
			if ov, ok := om[k]; ok {
				nm[k] = ov
			}
			continue
		}
		restoreMaskedValue(om[k], v)
	}
}

// secretKeys are the property names treated as secrets inside a secret field.
var secretKeys = []string{"password", "secret", "token", "apikey", "api_key", "privatekey", "private_key",
	"accesskey", "access_key", "credentials", "clientsecret", "client_secret", "passphrase", "connectionstring"}

func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// mapSecrets returns a copy of v with every string under a secret-named key replaced
// by f(value). key is the property name v sits under.
func mapSecrets(v any, key string, f func(string) (string, error)) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if isSecretKey(k) {
				out[k] = mapAllStrings(t[k], f)
			} else {
				out[k] = mapSecrets(t[k], k, f)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = mapSecrets(x, key, f)
		}
		return out
	}
	return v
}

func mapAllStrings(v any, f func(string) (string, error)) any {
	switch t := v.(type) {
	case string:
		s, _ := f(t)
		return s
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = mapAllStrings(x, f)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = mapAllStrings(x, f)
		}
		return out
	}
	return v
}
