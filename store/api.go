package store

import (
	"github.com/meridian-catalog/meridian"
)

// Validator checks a full entity document against its kind's JSON Schema. It returns
// EInvalid errors that name the field. schema.Validator implements it.
type Validator interface {
	Validate(kind string, e meridian.Entity) error
}

// Operation is what a caller wants to do to an entity.
type Operation string

// Operations checked by a Policy.
const (
	OpView       Operation = "View"
	OpCreate     Operation = "Create"
	OpEdit       Operation = "Edit"
	OpDelete     Operation = "Delete"
	OpHardDelete Operation = "HardDelete"
	OpFollow     Operation = "Follow"
	OpSeeSecrets Operation = "SeeSecrets"
	// OpEditPrivileged changes a field the kind marks Privileged (a user's roles).
	OpEditPrivileged Operation = "EditPrivileged"
)

// Policy decides whether a principal may perform an operation on an entity. owners are
// the entity's current owners (empty on create); when the policy refuses and a team
// owns the entity, the engine asks again with the team's members added as owners. It
// returns EForbidden (or EUnauthorized for a nil principal). auth.Policy implements it.
type Policy interface {
	Authorize(p *meridian.Principal, op Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error
}

// Sealer encrypts secrets at rest. auth.Sealer implements it with AES-256-GCM.
type Sealer interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// Key names an entity by id or by FQN.
type Key struct {
	ID  string
	FQN string
}

// ByID names an entity by id.
func ByID(id string) Key { return Key{ID: id} }

// ByFQN names an entity by its fully qualified name.
func ByFQN(fqn string) Key { return Key{FQN: fqn} }

// String returns the id or FQN, as error messages show it.
func (k Key) String() string {
	if k.ID != "" {
		return k.ID
	}
	return k.FQN
}

// GetOptions are the ?fields= and ?include= of a read.
type GetOptions struct {
	Fields  string
	Include Include
}

// ListOptions select one page of a kind. Before and After are opaque cursors from an
// earlier Page; Filters are the kind's list query parameters (Kind.Filters). AnyOf
// gives a parameter several values, any of which matches (a service listing what is
// assigned to a user or to one of their teams); at most MaxAnyOf of them.
type ListOptions struct {
	Fields  string
	Include Include
	Limit   int
	Before  string
	After   string
	Filters map[string]string
	AnyOf   map[string][]string
}

// MaxAnyOf bounds the values of one ListOptions.AnyOf parameter.
const MaxAnyOf = 1000

// Page is one page of a list.
type Page struct {
	Data   []meridian.Entity
	Before string
	After  string
	Total  int
}

// DeleteOptions are the ?hardDelete= and ?recursive= of a delete.
type DeleteOptions struct {
	Hard      bool
	Recursive bool
}

// Result is the outcome of a write: the entity as the caller should see it, the change
// type for the X-OpenMetadata-Change header (entityCreated, entityUpdated,
// entityNoChange, entitySoftDeleted, entityDeleted, entityRestored, entityFieldsChanged)
// and, for follower changes, the change event.
type Result struct {
	Entity  meridian.Entity
	Change  string
	Created bool
	Event   *meridian.ChangeEvent
}

// DeleteJob is the answer to an asynchronous delete.
type DeleteJob struct {
	JobID      string `json:"jobId"`
	Message    string `json:"message"`
	EntityName string `json:"entityName"`
	HardDelete bool   `json:"hardDelete"`
	Recursive  bool   `json:"recursive"`
}
