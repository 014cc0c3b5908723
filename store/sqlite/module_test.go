package sqlite

import (
	"fmt"
	"strings"
	"testing"
)

func TestNumberedPlaceholders(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"no placeholder", "SELECT 1", "SELECT 1"},
		{"in order, each once, become anonymous", "INSERT INTO t VALUES ($1, $2), ($3, $4)", "INSERT INTO t VALUES (?, ?), (?, ?)"},
		{"two digits in order", "VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)", "VALUES (?,?,?,?,?,?,?,?,?,?,?)"},
		{"a repeated number keeps every number", "WHERE a = $1 OR b = $1", "WHERE a = ?1 OR b = ?1"},
		{"out of order keeps every number", "VALUES ($2, $1)", "VALUES (?2, ?1)"},
		{"a gap keeps every number", "VALUES ($1, $3)", "VALUES (?1, ?3)"},
		{"not starting at one keeps the number", "VALUES ($2)", "VALUES (?2)"},
		{"a dollar without a digit is text", "SELECT '$x', $1", "SELECT '$x', ?"},
		{"a trailing dollar is text", "SELECT $1 || '$'", "SELECT ? || '$'"},
		{"a leading zero keeps the number", "VALUES ($01)", "VALUES (?01)"},
		{"a placeholder at the very end", "SELECT 1 WHERE $1", "SELECT 1 WHERE ?"},
		{"a huge number keeps the number", "VALUES ($1, $99999999999999999999999)", "VALUES (?1, ?99999999999999999999999)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := numbered(c.in); got != c.want {
				t.Errorf("numbered(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func BenchmarkNumberedManyRows(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO t VALUES ")
	for i := range 6000 {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "$%d", i+1)
	}
	q := sb.String()
	b.ReportAllocs()
	for range b.N {
		numbered(q)
	}
}
