package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

func searchDoc(id, kind, fqn, name string, mod func(d *store.SearchDoc)) store.SearchDoc {
	d := store.SearchDoc{ID: id, Kind: kind, FQN: fqn, Name: strings.Join(store.SearchWords(name), " "),
		Source: []byte(`{"id":"` + id + `","name":"` + name + `"}`)}
	if mod != nil {
		mod(&d)
	}
	return d
}

func indexAll(t *testing.T, db *DB, docs ...store.SearchDoc) {
	t.Helper()
	ctx := context.Background()
	write(t, db, func(tx store.Tx) error {
		for _, d := range docs {
			if err := tx.Index(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func hitIDs(hits []store.SearchHit) string {
	var s []string
	for _, h := range hits {
		s = append(s, h.ID)
	}
	return strings.Join(s, ",")
}

func TestSearch(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	indexAll(t, db,
		searchDoc("co", "table", "mysql.db.s.customer_orders", "customer_orders", func(d *store.SearchDoc) {
			d.Columns = "id amount"
			d.Service = "MySQL_Prod"
			d.Tags = []string{"PII.Sensitive"}
			d.Owners = []string{"Alice"}
			d.Domains = []string{"Sales"}
		}),
		searchDoc("cu", "table", "mysql.db.s.customer", "customer", nil),
		searchDoc("oa", "table", "mysql.db.s.orders_archive", "orders_archive", func(d *store.SearchDoc) {
			d.DisplayName = "customer archive"
		}),
		searchDoc("rv", "dashboard", "looker.revenue", "revenue", func(d *store.SearchDoc) {
			d.Description = "customer revenue by month"
			d.Owners = []string{"bob"}
		}),
		searchDoc("ev", "topic", "kafka.events", "events", func(d *store.SearchDoc) {
			d.Columns = "customer id"
		}),
		searchDoc("old", "table", "mysql.db.s.customer_old", "customer_old", func(d *store.SearchDoc) {
			d.Deleted = true
		}),
	)
	yes, no := true, false
	tests := []struct {
		name  string
		q     store.SearchQuery
		want  string
		total int
		code  string
	}{
		{"name outranks display name, description and columns", store.SearchQuery{Terms: []string{"customer"}, Size: 10},
			"cu,co,oa,rv,ev", 5, ""},
		{"every word is required, as a prefix", store.SearchQuery{Terms: []string{"cust", "ord"}, Size: 10}, "co,oa", 2, ""},
		{"no words match everything, by fqn", store.SearchQuery{Size: 10}, "ev,rv,cu,co,oa", 5, ""},
		{"kinds", store.SearchQuery{Terms: []string{"customer"}, Kinds: []string{"dashboard", "topic"}, Size: 10}, "rv,ev", 2, ""},
		{"tag filter is case-insensitive", store.SearchQuery{Filters: []store.SearchFilter{{Field: "tags", Values: []string{"pii.sensitive"}}}, Size: 10}, "co", 1, ""},
		{"owner filter takes any of its values", store.SearchQuery{Filters: []store.SearchFilter{{Field: "owners", Values: []string{"ALICE", "Bob"}}}, Size: 10}, "rv,co", 2, ""},
		{"service filter", store.SearchQuery{Filters: []store.SearchFilter{{Field: "service", Values: []string{"mysql_prod"}}}, Size: 10}, "co", 1, ""},
		{"domain filter", store.SearchQuery{Filters: []store.SearchFilter{{Field: "domains", Values: []string{"sales"}}}, Size: 10}, "co", 1, ""},
		{"entity type filter", store.SearchQuery{Terms: []string{"customer"}, Filters: []store.SearchFilter{{Field: "entityType", Values: []string{"TOPIC"}}}, Size: 10}, "ev", 1, ""},
		{"filters combine", store.SearchQuery{Filters: []store.SearchFilter{{Field: "owners", Values: []string{"bob", "alice"}}, {Field: "entityType", Values: []string{"table"}}}, Size: 10}, "co", 1, ""},
		{"filter value is bound, not spliced", store.SearchQuery{Filters: []store.SearchFilter{{Field: "tags", Values: []string{"x' OR 1=1 --"}}}, Size: 10}, "", 0, ""},
		{"deleted only", store.SearchQuery{Terms: []string{"customer"}, Deleted: &yes, Size: 10}, "old", 1, ""},
		{"active only, explicitly", store.SearchQuery{Terms: []string{"customer"}, Deleted: &no, Size: 10}, "cu,co,oa,rv,ev", 5, ""},
		{"deleted filter lifts the default", store.SearchQuery{Terms: []string{"customer"}, Filters: []store.SearchFilter{{Field: "deleted", Values: []string{"true", "false"}}}, Size: 10}, "cu,old,co,oa,rv,ev", 6, ""},
		{"paging", store.SearchQuery{Terms: []string{"customer"}, From: 1, Size: 2}, "co,oa", 5, ""},
		{"size zero only counts", store.SearchQuery{Terms: []string{"customer"}, Size: 0}, "", 5, ""},
		{"past the end", store.SearchQuery{Terms: []string{"customer"}, From: 9, Size: 2}, "", 5, ""},
		{"a typo still finds the name", store.SearchQuery{Terms: []string{"custmer"}, Size: 10}, "cu,co", 2, ""},
		{"no fuzzy match for nonsense", store.SearchQuery{Terms: []string{"zqxw"}, Size: 10}, "", 0, ""},
		{"no fuzzy match for several words", store.SearchQuery{Terms: []string{"custmer", "ordrs"}, Size: 10}, "", 0, ""},
		{"a term that is not a word is invalid", store.SearchQuery{Terms: []string{"x' | y:*"}, Size: 10}, "", 0, meridian.EInvalid},
		{"unknown filter field is invalid", store.SearchQuery{Filters: []store.SearchFilter{{Field: "tier", Values: []string{"a"}}}, Size: 10}, "", 0, meridian.EInvalid},
		{"filter without values is invalid", store.SearchQuery{Filters: []store.SearchFilter{{Field: "tags"}}, Size: 10}, "", 0, meridian.EInvalid},
		{"bad deleted value is invalid", store.SearchQuery{Filters: []store.SearchFilter{{Field: "deleted", Values: []string{"maybe"}}}, Size: 10}, "", 0, meridian.EInvalid},
		{"negative from is invalid", store.SearchQuery{From: -1, Size: 10}, "", 0, meridian.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read(t, db, func(tx store.Tx) error {
				hits, total, err := tx.Search(ctx, tt.q)
				wantCode(t, err, tt.code)
				if tt.code != "" {
					return nil
				}
				if got := hitIDs(hits); got != tt.want || total != tt.total {
					t.Errorf("got %q total %d, want %q total %d", got, total, tt.want, tt.total)
				}
				if hits == nil {
					t.Error("hits is nil, want empty slice")
				}
				for i := 1; i < len(hits); i++ {
					if hits[i].Score > hits[i-1].Score {
						t.Errorf("hit %d scores %v above hit %d's %v", i, hits[i].Score, i-1, hits[i-1].Score)
					}
				}
				return nil
			})
		})
	}
	t.Run("hits carry kind, fqn and source", func(t *testing.T) {
		read(t, db, func(tx store.Tx) error {
			hits, _, err := tx.Search(ctx, store.SearchQuery{Terms: []string{"revenue"}, Size: 1})
			if err != nil {
				return err
			}
			if len(hits) != 1 || hits[0].Kind != "dashboard" || hits[0].FQN != "looker.revenue" ||
				string(canon(hits[0].Source)) != `{"id":"rv","name":"revenue"}` || hits[0].Score <= 0 {
				t.Errorf("hit %+v (source %s)", hits, hits[0].Source)
			}
			return nil
		})
	})
	t.Run("reindexing replaces, unindex and remove delete", func(t *testing.T) {
		write(t, db, func(tx store.Tx) error {
			if err := tx.Insert(ctx, row("ev", "topic", "events", "kafka.events")); err != nil {
				return err
			}
			if err := tx.Index(ctx, searchDoc("cu", "table", "mysql.db.s.client", "client", nil)); err != nil {
				return err
			}
			if err := tx.Unindex(ctx, "rv"); err != nil {
				return err
			}
			if err := tx.Unindex(ctx, "missing"); err != nil {
				return err
			}
			return tx.Remove(ctx, "ev")
		})
		read(t, db, func(tx store.Tx) error {
			hits, total, err := tx.Search(ctx, store.SearchQuery{Terms: []string{"customer"}, Size: 10})
			if err != nil {
				return err
			}
			if got := hitIDs(hits); got != "co,oa" || total != 2 {
				t.Errorf("after changes: %q total %d", got, total)
			}
			hits, _, _ = tx.Search(ctx, store.SearchQuery{Terms: []string{"client"}, Size: 10})
			if hitIDs(hits) != "cu" {
				t.Errorf("reindexed document: %q", hitIDs(hits))
			}
			return nil
		})
	})
	t.Run("read-only transaction refuses index writes", func(t *testing.T) {
		tx, _ := db.Begin(ctx, false)
		defer tx.Rollback()
		if err := tx.Index(ctx, searchDoc("x", "table", "x", "x", nil)); err == nil {
			t.Error("Index in a read-only transaction succeeded")
		}
		if err := tx.Unindex(ctx, "co"); err == nil {
			t.Error("Unindex in a read-only transaction succeeded")
		}
	})
}
