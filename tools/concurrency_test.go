package tools_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/tools"
)

// TestConcurrentUpdateEntityLosesNothing runs update_entity calls at once on one
// entity: each reads and writes in one transaction, so no call's change is lost.
func TestConcurrentUpdateEntityLosesNothing(t *testing.T) {
	f := newFixture(t, tools.Config{})
	admin := f.c.Admin
	const n = 16
	var users, tags []string
	f.ok(t, admin, "create_classification", map[string]any{"name": "Crowd", "description": "d"})
	for i := 0; i < n; i++ {
		users = append(users, fmt.Sprintf("owner%02d", i))
		f.c.User(t, users[i], meridian.RoleDataConsumer)
		tags = append(tags, fmt.Sprintf("Crowd.t%02d", i))
		f.ok(t, admin, "create_tag", map[string]any{"name": fmt.Sprintf("t%02d", i), "description": "d", "classification": "Crowd"})
	}
	// run calls update_entity n times at once, the i-th with args(i), and returns which
	// calls succeeded.
	run := func(args func(i int) map[string]any) []bool {
		ok := make([]bool, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				res, err := f.set.Call(t.Context(), admin, "update_entity", args(i))
				if err != nil {
					t.Errorf("call %d: %v", i, err)
					return
				}
				if res.IsError && res.StatusCode != 400 {
					t.Errorf("call %d: %s", i, res.Text)
				}
				ok[i] = !res.IsError
			}(i)
		}
		wg.Wait()
		return ok
	}
	names := func(fqn, field, key string) []string {
		out := f.ok(t, admin, "get_entity_details", map[string]any{"entities": []any{"table:" + fqn}})
		ent := list(out["entities"])[0].(map[string]any)
		var got []string
		for _, v := range list(ent[field]) {
			got = append(got, v.(map[string]any)[key].(string))
		}
		sort.Strings(got)
		return got
	}

	t.Run("tags", func(t *testing.T) {
		fqn := f.c.Table(t, "svc", "db", "sch", "tagged", 1)
		ok := run(func(i int) map[string]any {
			return map[string]any{"entityType": "table", "fqn": fqn, "tags": []any{tags[i]}, "tagsMode": "add"}
		})
		for i, good := range ok {
			if !good {
				t.Fatalf("call %d failed", i)
			}
		}
		if got := names(fqn, "tags", "tagFQN"); fmt.Sprint(got) != fmt.Sprint(tags) {
			t.Fatalf("tags = %v, want all %d: %v", got, n, tags)
		}
	})
	t.Run("owners", func(t *testing.T) {
		// An entity has at most 5 user owners: the calls past the fifth are refused, and
		// every call that succeeded is in the final list.
		fqn := f.c.Table(t, "svc", "db", "sch", "owned", 1)
		ok := run(func(i int) map[string]any {
			return map[string]any{"entityType": "table", "fqn": fqn, "owners": []any{users[i]}, "ownersMode": "add"}
		})
		var want []string
		for i, good := range ok {
			if good {
				want = append(want, users[i])
			}
		}
		if len(want) != 5 {
			t.Fatalf("%d of %d owner additions succeeded, want 5 (the most users an entity may have)", len(want), n)
		}
		if got := names(fqn, "owners", "name"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("owners = %v, want every successful addition %v", got, want)
		}
	})
}
