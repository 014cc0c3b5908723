package meridian

import (
	"context"
	"encoding/json"
	"math"
	"strconv"

	"github.com/google/uuid"
)

// Entity is a catalog entity document: the JSON object a client sees. Numbers are float64,
// as encoding/json decodes them.
type Entity map[string]any

// String returns the string value of a top-level field, or "".
func (e Entity) String(key string) string {
	s, _ := e[key].(string)
	return s
}

// ID returns the entity id.
func (e Entity) ID() string { return e.String("id") }

// Name returns the entity name.
func (e Entity) Name() string { return e.String("name") }

// FQN returns the fully qualified name.
func (e Entity) FQN() string { return e.String("fullyQualifiedName") }

// Deleted reports whether the entity is soft-deleted.
func (e Entity) Deleted() bool { b, _ := e["deleted"].(bool); return b }

// Version returns the entity version.
func (e Entity) Version() Version {
	f, _ := e["version"].(float64)
	return VersionOf(f)
}

// Clone returns a deep copy of the document.
func (e Entity) Clone() Entity {
	if e == nil {
		return nil
	}
	return CloneValue(map[string]any(e)).(map[string]any)
}

// CloneValue deep-copies a decoded JSON value: maps, lists and entities are copied,
// everything else is returned as it is.
func CloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = CloneValue(x)
		}
		return m
	case Entity:
		return Entity(CloneValue(map[string]any(t)).(map[string]any))
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = CloneValue(x)
		}
		return s
	}
	return v
}

// NewID returns a new id for an entity or a recorded row (a change event, an audit or
// ledger entry): a version 7 UUID, whose leading bits are the time it was made. Ids made
// one after another are ordered, so an index keyed by id takes each new row at its end
// instead of at a random page, and a commit writes fewer pages.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// DecodeEntity parses a JSON object into an Entity.
func DecodeEntity(b []byte) (Entity, error) {
	var e Entity
	if err := json.Unmarshal(b, &e); err != nil || e == nil {
		return nil, Errorf(EInvalid, "Invalid request format: the body must be a JSON object")
	}
	return e, nil
}

// Version is an entity version counted in tenths: 0.1 is 1, 1.2 is 12. Counting in
// tenths keeps the arithmetic exact.
type Version int64

// VersionOf converts a decimal version such as 0.3 to a Version.
func VersionOf(f float64) Version { return Version(math.Round(f * 10)) }

// ParseVersion parses a version string such as "0.2".
func ParseVersion(s string) (Version, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e12 {
		return 0, Errorf(EInvalid, "Invalid version %q", s)
	}
	return VersionOf(f), nil
}

// Float returns the decimal form, 0.3 for 3.
func (v Version) Float() float64 { return float64(v) / 10 }

// String returns the decimal form as text, "0.3" for 3.
func (v Version) String() string { return strconv.FormatFloat(v.Float(), 'f', 1, 64) }

// Minor returns the next minor version (+0.1).
func (v Version) Minor() Version { return v + 1 }

// Major returns the next major version (+1.0, keeping the fractional part).
func (v Version) Major() Version { return v + 10 }

// InitialVersion is the version of a new entity, 0.1.
const InitialVersion Version = 1

// EntityRef is a reference to another entity.
type EntityRef struct {
	ID                 string `json:"id"`
	Type               string `json:"type"`
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	DisplayName        string `json:"displayName,omitempty"`
	Description        string `json:"description,omitempty"`
	Deleted            bool   `json:"deleted"`
	Href               string `json:"href,omitempty"`
}

// Map returns the reference as a generic JSON object.
func (r EntityRef) Map() map[string]any {
	m := map[string]any{"id": r.ID, "type": r.Type, "deleted": r.Deleted}
	for k, v := range map[string]string{"name": r.Name, "fullyQualifiedName": r.FullyQualifiedName,
		"displayName": r.DisplayName, "description": r.Description, "href": r.Href} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// FieldChange is one changed field in a ChangeDescription. Lists and objects are encoded
// as JSON strings holding only the items that changed, as OpenMetadata does.
type FieldChange struct {
	Name     string `json:"name"`
	OldValue any    `json:"oldValue,omitempty"`
	NewValue any    `json:"newValue,omitempty"`
}

// ChangeDescription records what one write changed.
type ChangeDescription struct {
	FieldsAdded     []FieldChange `json:"fieldsAdded"`
	FieldsUpdated   []FieldChange `json:"fieldsUpdated"`
	FieldsDeleted   []FieldChange `json:"fieldsDeleted"`
	PreviousVersion float64       `json:"previousVersion"`
	// ChangeSummary says, per changed field, where the change came from, as
	// OpenMetadata's changeSummary does: set when the write carried a ChangeSource (an
	// accepted suggestion names its task).
	ChangeSummary map[string]any `json:"changeSummary,omitempty"`
}

// ChangeSource is where a write comes from when it is not a plain edit: an accepted
// suggestion or task (Source "Suggested", Task the task's reference).
type ChangeSource struct {
	Source string
	Task   *EntityRef
}

type changeSourceKey struct{}

// WithChangeSource returns a context whose writes record src in their change
// description's changeSummary.
func WithChangeSource(ctx context.Context, src ChangeSource) context.Context {
	return context.WithValue(ctx, changeSourceKey{}, src)
}

// ChangeSourceFrom returns the change source the context carries, if any.
func ChangeSourceFrom(ctx context.Context) (ChangeSource, bool) {
	src, ok := ctx.Value(changeSourceKey{}).(ChangeSource)
	return src, ok
}

// Summarize sets c.ChangeSummary: one entry per changed field naming src, by and at.
func (c *ChangeDescription) Summarize(src ChangeSource, by string, at int64) {
	entry := map[string]any{"changeSource": src.Source, "changedBy": by, "changedAt": at}
	if src.Task != nil {
		entry["task"] = src.Task.Map()
	}
	c.ChangeSummary = map[string]any{}
	for _, list := range [][]FieldChange{c.FieldsAdded, c.FieldsUpdated, c.FieldsDeleted} {
		for _, f := range list {
			c.ChangeSummary[f.Name] = entry
		}
	}
}

// Empty reports whether nothing changed.
func (c *ChangeDescription) Empty() bool {
	return len(c.FieldsAdded) == 0 && len(c.FieldsUpdated) == 0 && len(c.FieldsDeleted) == 0
}

// Map returns the change description as a generic JSON object.
func (c *ChangeDescription) Map() map[string]any {
	b, _ := json.Marshal(c)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// Change event types.
const (
	EventEntityCreated        = "entityCreated"
	EventEntityUpdated        = "entityUpdated"
	EventEntityNoChange       = "entityNoChange"
	EventEntitySoftDeleted    = "entitySoftDeleted"
	EventEntityDeleted        = "entityDeleted"
	EventEntityRestored       = "entityRestored"
	EventEntityFieldsChanged  = "entityFieldsChanged"
	EventTaskCreated          = "taskCreated"
	EventTaskUpdated          = "taskUpdated"
	EventEntityLineageAdded   = "entityLineageAdded"
	EventEntityLineageDeleted = "entityLineageDeleted"
	EventEntityLineageUpdated = "entityLineageUpdated"
)

// ChangeEvent is one entry of the transactional outbox, written in the same transaction
// as the change it records.
type ChangeEvent struct {
	ID                string             `json:"id"`
	EventType         string             `json:"eventType"`
	EntityType        string             `json:"entityType"`
	EntityID          string             `json:"entityId"`
	EntityFQN         string             `json:"entityFullyQualifiedName,omitempty"`
	UserName          string             `json:"userName"`
	Timestamp         int64              `json:"timestamp"`
	PreviousVersion   float64            `json:"previousVersion,omitempty"`
	CurrentVersion    float64            `json:"currentVersion,omitempty"`
	ChangeDescription *ChangeDescription `json:"changeDescription,omitempty"`
	Entity            Entity             `json:"entity,omitempty"`
	Recursive         bool               `json:"recursive"`
	Seq               int64              `json:"-"`
}
