package remote_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
)

// TestNeighbourhoodSameOnBothStores walks the same neighbourhoods on the embedded store
// and on Virtuoso (whose backend asks for a whole level's edges in one query): the same
// triples and nodes by depth when complete, the same count when truncated, with a
// soft-deleted table hidden unless an admin asks for it.
func TestNeighbourhoodSameOnBothStores(t *testing.T) {
	ctx := context.Background()
	descs := catalog(30)
	deleted := descs[6+12]
	deleted.Deleted = true
	bs := backends(t, func(b graph.Backend) error {
		if err := b.Reset(ctx); err != nil {
			return err
		}
		if err := b.Load(ctx, descs); err != nil {
			return err
		}
		return b.Apply(ctx, graph.Delta{Put: []graph.Description{deleted}})
	})
	services := map[string]*graph.Service{}
	for name, b := range bs {
		sync := graph.NewSync(meridian.DefaultRegistry(), nil, b, nil)
		sync.MarkReady()
		services[name] = graph.NewService(graph.Config{Backend: b, Sync: sync})
	}
	admin := &meridian.Principal{ID: "a", Name: "admin", Roles: []string{meridian.RoleAdmin}}
	cases := []struct {
		name           string
		node           string
		depth, limit   int
		includeDeleted bool
	}{
		{"a table, one hop", ns + "table/svc.db.s.t010", 1, 2000, false},
		{"a table, two hops", ns + "table/svc.db.s.t013", 2, 2000, false},
		{"a table beside the deleted one, three hops", ns + "table/svc.db.s.t013", 3, 2000, true},
		{"a tag, two hops", ns + "tag/PII.l1", 2, 2000, false},
		{"a column, two hops", ns + "table/svc.db.s.t020/column/c0", 2, 2000, false},
		{"the deleted table, for an admin", deleted.Entity, 2, 2000, true},
		{"a truncated walk", ns + "table/svc.db.s.t015", 3, 25, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answers := map[string]string{}
			for name, s := range services {
				n, err := s.Neighborhood(ctx, admin, c.node, c.depth, c.limit, c.includeDeleted)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if n.Completeness == graph.Truncated {
					// Which triples a truncated walk keeps is up to each store; how many is not.
					answers[name] = fmt.Sprint(n.Completeness, " ", len(n.Triples))
					continue
				}
				var lines []string
				for _, tr := range n.Triples {
					lines = append(lines, fmt.Sprint(tr))
				}
				sort.Strings(lines)
				answers[name] = fmt.Sprint(n.Completeness, " ", n.ByDepth, " ", n.Nodes, "\n", strings.Join(lines, "\n"))
			}
			if answers["embedded"] != answers["virtuoso"] {
				t.Fatalf("virtuoso answers\n%s\nthe embedded store\n%s", answers["virtuoso"], answers["embedded"])
			}
			if strings.HasPrefix(answers["embedded"], "COMPLETE map[0:1] 1") {
				t.Fatal("the walk found nothing; the case proves nothing")
			}
		})
	}
}
