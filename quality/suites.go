package quality

import (
	"context"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// fieldBasicRef is the create body field naming the entity of a basic test suite;
// fieldExecutableRef is its name before OpenMetadata 1.6.
const (
	fieldBasicRef      = "basicEntityReference"
	fieldExecutableRef = "executableEntityReference"
)

// BasicSuiteKind returns the kind of the suites test cases belong to, and the kind of
// the entities basic suites are made for, from the registry's Container rules.
// ENotFound when the registry has none.
func BasicSuiteKind(reg *meridian.Registry) (suite, target *meridian.Kind, err error) {
	for _, k := range reg.Kinds() {
		if k.Container == nil {
			continue
		}
		s, ok := reg.Kind(k.Container.Kind)
		if !ok || len(s.Refs[fieldBasicRef]) != 1 {
			continue
		}
		t, ok := reg.Kind(s.Refs[fieldBasicRef][0])
		if ok {
			return s, t, nil
		}
	}
	return nil, nil, meridian.Errorf(meridian.ENotFound, "No kind holds basic test suites")
}

// CreateBasicSuite creates a table's basic test suite (OpenMetadata's POST
// /v1/dataQuality/testSuites/basic). The body names the table in basicEntityReference
// (or executableEntityReference) by FQN or by a reference object; the suite's name is
// the table's FQN plus ".testSuite", whatever the body says, so that the table's test
// cases find it. description, displayName, owners and domains are taken from the body.
// A table's first test case creates the suite when no one did. Errors: EInvalid (no
// table named), ENotFound (table), EConflict (the table has its basic suite already),
// EForbidden.
func CreateBasicSuite(ctx context.Context, ents *store.Entities, p *meridian.Principal, body meridian.Entity) (store.Result, error) {
	suite, target, err := BasicSuiteKind(ents.Registry())
	if err != nil {
		return store.Result{}, err
	}
	ref := body[fieldBasicRef]
	if ref == nil {
		ref = body[fieldExecutableRef]
	}
	var key store.Key
	switch r := ref.(type) {
	case string:
		key = store.ByFQN(r)
	case map[string]any:
		if id, _ := r["id"].(string); id != "" {
			key = store.ByID(id)
		} else if fqn, _ := r["fullyQualifiedName"].(string); fqn != "" {
			key = store.ByFQN(fqn)
		}
	}
	if key == (store.Key{}) {
		return store.Result{}, meridian.Errorf(meridian.EInvalid, "%s must name the %s of the basic test suite, by fully qualified name or reference", fieldBasicRef, target.Name)
	}
	table, err := ents.Get(ctx, p, target.Name, key, store.GetOptions{})
	if err != nil {
		return store.Result{}, err
	}
	doc := meridian.BasicTestSuite(table)
	for _, f := range []string{"description", "displayName", "owners", "domains"} {
		if v, ok := body[f]; ok {
			doc[f] = v
		}
	}
	return ents.Create(ctx, p, suite.Name, doc)
}
