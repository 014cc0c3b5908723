package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/dbtest"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
)

type discard struct{}

func (discard) Columns([]engine.Column) error { return nil }
func (discard) Row([]any) error               { return nil }

// The READ ONLY transaction refuses data changes on its own, without the classifier.
func TestTheReadOnlyTransactionRefusesWritesWithoutTheClassifier(t *testing.T) {
	tg := dbtest.MySQL(t)
	before := dbtest.ChecksumMySQL(t, tg.DB)
	for _, q := range []string{"DELETE FROM items", "UPDATE items SET price = 0", "INSERT INTO items (id, name, price) VALUES (1000, 'x', 1)"} {
		_, err := run(context.Background(), tg.Conn, q, engine.Limits{MaxRows: 10, Timeout: 10 * time.Second}, discard{})
		if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
	if after := dbtest.ChecksumMySQL(t, tg.DB); after != before {
		t.Fatalf("table changed: %s -> %s", before, after)
	}
}
