package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/meridian-catalog/meridian"
)

// Data quality: the built-in test definitions and the rules a test case and a test
// definition follow. Test case results are the quality module's (package quality).
//
// Choices, where OpenMetadata leaves room:
//   - The test case document does not store its latest result (the quality module
//     computes testCaseStatus and testCaseResult on reads); values a client writes into
//     either field are dropped.
//   - Test definitions with provider "system" are seeded at start (SeedTestDefinitions)
//     and cannot be deleted. Only the system principal (isSystem) may create one or
//     change one; others get EInvalid.

//go:embed seed/testDefinitions.json
var seedTestDefinitions []byte

// SeedTestDefinitions creates OpenMetadata's built-in table and column test
// definitions that are missing, and brings changed ones back to the built-in
// definition. An unchanged definition gets no new version, so seeding again is a
// no-op. It returns how many definitions it created or updated.
func (s *Entities) SeedTestDefinitions(ctx context.Context) (int, error) {
	var defs []meridian.Entity
	if err := json.Unmarshal(seedTestDefinitions, &defs); err != nil {
		return 0, fmt.Errorf("seed test definitions: %w", err)
	}
	n := 0
	for _, d := range defs {
		res, err := s.CreateOrUpdate(ctx, meridian.System, "testDefinition", d)
		if err != nil {
			return n, fmt.Errorf("seed test definition %s: %w", d.Name(), err)
		}
		if res.Change != meridian.EventEntityNoChange {
			n++
		}
	}
	return n, nil
}
