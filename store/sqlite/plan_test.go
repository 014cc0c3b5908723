package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// TestPagesReadOnlyTheirRanges: the pages that lost an index to migrations/0011 (a list
// of live and deleted entities of one kind, a search without words over every kind)
// seek into an index for each range they merge; none reads a whole table.
func TestPagesReadOnlyTheirRanges(t *testing.T) {
	_, path := openTemp(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	listWhere, listArgs := []string{"kind = ?"}, []any{"table"}
	matchWhere, matchArgs, err := searchFilters(search.Query{})
	if err != nil {
		t.Fatal(err)
	}
	matchFrom := " FROM search_docs d WHERE " + strings.Join(matchWhere, " AND ")
	cases := []struct {
		name   string
		query  func() (string, []any, error)
		search string // the index every range is read from
	}{
		{"list of live and deleted entities", func() (string, []any, error) {
			q, a := listPage(store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: 10}, listWhere, listArgs)
			return q, a, nil
		}, "entities_kind_deleted_name_id"},
		{"the same, after a cursor", func() (string, []any, error) {
			q, a := listPage(store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: 10, After: &store.Cursor{Name: "b", ID: "x"}}, listWhere, listArgs)
			return q, a, nil
		}, "entities_kind_deleted_name_id"},
		{"the same, before a cursor", func() (string, []any, error) {
			q, a := listPage(store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: 10, Before: &store.Cursor{Name: "b", ID: "x"}}, listWhere, listArgs)
			return q, a, nil
		}, "entities_kind_deleted_name_id"},
		{"search without words over every kind", func() (string, []any, error) {
			return matchAllPage(search.Query{Size: 10, From: 20}, []string{"dashboard", "table", "topic"}, matchFrom, matchArgs)
		}, "search_docs_kind_deleted_fqn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			query, args, err := c.query()
			if err != nil {
				t.Fatal(err)
			}
			plan := explain(t, db, query, args)
			seeks := 0
			for _, step := range plan {
				switch {
				case strings.HasPrefix(step, "SCAN entities"), strings.HasPrefix(step, "SCAN search_docs"), strings.HasPrefix(step, "SCAN d"):
					t.Errorf("reads a whole table: %q in %q", step, plan)
				case strings.HasPrefix(step, "SEARCH") && strings.Contains(step, c.search):
					seeks++
				}
			}
			if seeks < 2 {
				t.Errorf("%d seeks into %s, want one for each range: %q", seeks, c.search, plan)
			}
		})
	}
}

// explain returns the details of the query plan of query with args.
func explain(t *testing.T, db *sql.DB, query string, args []any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN %s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
