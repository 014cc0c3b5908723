package meridian

import (
	"regexp"
	"strings"
)

// EntityLink points at an entity or at one of its fields, written
// <#E::{entityType}::{fqn}[::{field}[::{arrayField}[::{arrayValue}]]]>.
type EntityLink struct {
	EntityType string
	FQN        string
	Field      string
	ArrayField string
	ArrayValue string
}

var entityTypeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// ParseEntityLink parses and validates an entity link. Segments are separated by "::"; a
// segment may hold a single ':' but never "::", '<', '>' or '|'. The FQN must parse.
// A column link (field "columns") must name its column.
func ParseEntityLink(s string) (EntityLink, error) {
	bad := func(why string) (EntityLink, error) {
		return EntityLink{}, Errorf(EInvalid, "Invalid entity link %q: %s", s, why)
	}
	if !strings.HasPrefix(s, "<#E::") || !strings.HasSuffix(s, ">") || len(s) < len("<#E::>") {
		return bad("it must look like <#E::{entityType}::{fqn}>")
	}
	body := s[len("<#E::") : len(s)-1]
	if strings.ContainsAny(body, "<>|") {
		return bad("segments must not contain '<', '>' or '|'")
	}
	segs := strings.Split(body, "::")
	for _, seg := range segs {
		if seg == "" || strings.HasPrefix(seg, ":") || strings.HasSuffix(seg, ":") {
			return bad("empty segment or stray ':'")
		}
	}
	if len(segs) < 2 {
		return bad("entity type and fully qualified name are required")
	}
	if len(segs) > 5 {
		return bad("too many segments")
	}
	if !entityTypeRE.MatchString(segs[0]) {
		return bad("invalid entity type " + segs[0])
	}
	if _, err := SplitFQN(segs[1]); err != nil {
		return bad(err.Error())
	}
	l := EntityLink{EntityType: segs[0], FQN: segs[1]}
	if len(segs) > 2 {
		l.Field = segs[2]
	}
	if len(segs) > 3 {
		l.ArrayField = segs[3]
	}
	if len(segs) > 4 {
		l.ArrayValue = segs[4]
	}
	if l.Field == "columns" && l.ArrayField == "" {
		return bad("a columns link must name the column")
	}
	if l.Field != "columns" && l.ArrayField != "" && l.ArrayValue == "" {
		return bad("Entity link must have both {arrayFieldName} and {arrayFieldValue}")
	}
	return l, nil
}

// String renders the link in its canonical form.
func (l EntityLink) String() string {
	parts := []string{l.EntityType, l.FQN}
	for _, p := range []string{l.Field, l.ArrayField, l.ArrayValue} {
		if p == "" {
			break
		}
		parts = append(parts, p)
	}
	return "<#E::" + strings.Join(parts, "::") + ">"
}

// FieldFQN is the fully qualified name the link points at: the entity FQN, or for a
// column link the entity FQN plus the quoted column name.
func (l EntityLink) FieldFQN() string {
	if l.Field == "columns" && l.ArrayField != "" {
		return l.FQN + "." + QuoteName(l.ArrayField)
	}
	return l.FQN
}
