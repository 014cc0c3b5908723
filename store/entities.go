package store

import (
	"context"
	"time"

	"github.com/meridian-catalog/meridian"
)

// Entities is the entity engine. It is safe for concurrent use.
type Entities struct {
	db     Driver
	reg    *meridian.Registry
	valid  Validator
	policy Policy
	sealer Sealer
	now    func() time.Time
}

// Config wires an engine. Policy and Sealer may be nil in tests: a nil Policy allows
// everything, a nil Sealer stores secrets in clear text.
type Config struct {
	Driver    Driver
	Registry  *meridian.Registry
	Validator Validator
	Policy    Policy
	Sealer    Sealer
	Now       func() time.Time
}

// New returns an engine.
func New(c Config) *Entities {
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return &Entities{db: c.Driver, reg: c.Registry, valid: c.Validator, policy: c.Policy, sealer: c.Sealer, now: now}
}

// Registry returns the kind registry the engine serves.
func (s *Entities) Registry() *meridian.Registry { return s.reg }

// Driver returns the driver, for services that keep their own tables.
func (s *Entities) Driver() Driver { return s.db }

var errTodo = meridian.Errorf(meridian.EInternal, "not implemented yet")

// Create adds a new entity from a create body. Errors: EInvalid (schema, names,
// parent missing from the body), ENotFound (parent or reference missing), EConflict
// (FQN taken), EForbidden.
func (s *Entities) Create(ctx context.Context, p *meridian.Principal, kind string, body meridian.Entity) (Result, error) {
	return Result{}, errTodo
}

// CreateOrUpdate creates the entity named by the body, or updates it with
// OpenMetadata's PUT merge rules (tags merge, an empty owners list keeps owners, a
// column missing from the body is deleted). A soft-deleted entity is restored.
// Result.Created tells which. Errors as Create, plus EPreconditionFailed.
func (s *Entities) CreateOrUpdate(ctx context.Context, p *meridian.Principal, kind string, body meridian.Entity) (Result, error) {
	return Result{}, errTodo
}

// Get reads an entity. Errors: EInvalid (bad fields), ENotFound.
func (s *Entities) Get(ctx context.Context, p *meridian.Principal, kind string, key Key, o GetOptions) (meridian.Entity, error) {
	return nil, errTodo
}

// List reads one page. Errors: EInvalid (bad fields, cursor, filter or limit).
func (s *Entities) List(ctx context.Context, p *meridian.Principal, kind string, o ListOptions) (Page, error) {
	return Page{}, errTodo
}

// Patch applies an RFC 6902 JSON Patch. ifMatch, when set, must equal the entity's
// current ETag. Errors: EInvalid (bad patch, immutable field, schema), ENotFound,
// EPreconditionFailed (stale If-Match), EConflict (concurrent change), EForbidden.
func (s *Entities) Patch(ctx context.Context, p *meridian.Principal, kind string, key Key, patch []byte, ifMatch string) (Result, error) {
	return Result{}, errTodo
}

// Delete soft- or hard-deletes an entity, with its children when Recursive. Errors:
// EInvalid ("<kind> is not empty"), ENotFound, EForbidden.
func (s *Entities) Delete(ctx context.Context, p *meridian.Principal, kind string, key Key, o DeleteOptions) (Result, error) {
	return Result{}, errTodo
}

// DeleteAsync checks the delete can start and runs it in the background.
func (s *Entities) DeleteAsync(ctx context.Context, p *meridian.Principal, kind string, key Key, o DeleteOptions) (DeleteJob, error) {
	return DeleteJob{}, errTodo
}

// Restore reactivates a soft-deleted entity and its soft-deleted children. Errors:
// ENotFound, EForbidden.
func (s *Entities) Restore(ctx context.Context, p *meridian.Principal, kind, id string) (Result, error) {
	return Result{}, errTodo
}

// Versions lists every version of an entity as serialized JSON, newest first.
func (s *Entities) Versions(ctx context.Context, p *meridian.Principal, kind, id string) ([]string, error) {
	return nil, errTodo
}

// Version reads one version. Errors: EInvalid (bad version), ENotFound.
func (s *Entities) Version(ctx context.Context, p *meridian.Principal, kind, id, version string) (meridian.Entity, error) {
	return nil, errTodo
}

// AddFollower makes a user follow an entity. It makes no new version.
func (s *Entities) AddFollower(ctx context.Context, p *meridian.Principal, kind, id, userID string) (Result, error) {
	return Result{}, errTodo
}

// RemoveFollower stops a user following an entity.
func (s *Entities) RemoveFollower(ctx context.Context, p *meridian.Principal, kind, id, userID string) (Result, error) {
	return Result{}, errTodo
}

// ETag returns the ETag of an entity document, for the ETag and If-Match headers.
func ETag(e meridian.Entity) string {
	return `"` + e.ID() + ":" + e.Version().String() + `"`
}
