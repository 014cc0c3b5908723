package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// loggingTx is a write transaction that logs its statements and commits.
type loggingTx struct {
	Tx
	mu  *sync.Mutex
	log *[]string
}

func (t loggingTx) SQL() SQL { return t }

func (t loggingTx) Dialect() Dialect { return DialectSQLite }

func (t loggingTx) Exec(_ context.Context, query string, _ ...any) (int64, error) {
	t.note(query)
	return 0, nil
}

func (t loggingTx) Query(context.Context, string, ...any) (Rows, error) { panic("not used") }

func (t loggingTx) QueryRow(context.Context, string, ...any) Scanner { panic("not used") }

func (t loggingTx) Commit() error { t.note("COMMIT"); return nil }

func (t loggingTx) Rollback() error { return nil }

func (t loggingTx) note(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	*t.log = append(*t.log, s)
}

func TestGroupRunsTheWritesWithoutASavepointLast(t *testing.T) {
	var mu sync.Mutex
	var log []string
	first := make(chan struct{})
	release := make(chan struct{})
	g := NewGroup(func(context.Context) (Tx, error) { return loggingTx{mu: &mu, log: &log}, nil })
	ctx := context.Background()
	var wg sync.WaitGroup
	write := func(ctx context.Context, name string, block bool) {
		defer wg.Done()
		if err := g.Group(ctx, func(tx Tx) error {
			if block {
				close(first)
				<-release // the others queue meanwhile, and commit as one group
			}
			tx.(loggingTx).note(name)
			return nil
		}); err != nil {
			t.Error(err)
		}
	}
	wg.Add(1)
	go write(ctx, "alone", true)
	<-first
	names := []string{"create 1", "consumer 1", "create 2", "consumer 2"}
	for _, name := range names {
		wg.Add(1)
		c := ctx
		if strings.HasPrefix(name, "create") {
			c = withoutSavepoint(ctx)
		}
		go write(c, name, false)
	}
	for {
		g.mu.Lock()
		n := len(g.pending)
		g.mu.Unlock()
		if n == len(names) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	// The first commit is the blocking write's; the group's statements follow it.
	var order []string
	for _, s := range log[slices.Index(log, "COMMIT")+1:] {
		if slices.Contains(names, s) {
			order = append(order, strings.Fields(s)[0])
		}
	}
	if want := []string{"consumer", "consumer", "create", "create"}; !slices.Equal(order, want) {
		t.Fatalf("the group ran %v; want %v: both writes with a savepoint before both without", order, want)
	}
	// Two transactions: the blocking write's, which was busy until released, and the group's.
	if st := g.Stats(); st.Groups != 2 || st.Writes != 5 || st.Busy <= 0 {
		t.Errorf("stats %+v, want 2 groups of 5 writes and some busy time", st)
	}
}

func TestGroupSharesFoundRowsOnlyWhileOnlyPreparedCreatesWrite(t *testing.T) {
	var mu sync.Mutex
	var log []string
	g := NewGroup(func(context.Context) (Tx, error) { return loggingTx{mu: &mu, log: &log}, nil })
	ctx := context.Background()
	parent := RowKey{Kind: "databaseSchema", FQN: "svc.db.sch"}
	type step struct {
		name     string
		prepared bool // a prepared create; else a write that may change any row
		wantSeen bool // the parent, found by an earlier create, is shared with it
	}
	steps := []step{
		{"finds the parent", true, false},
		{"shares it", true, true},
		{"changes rows", false, false},
		{"finds it again", true, false},
		{"shares it again", true, true},
	}
	first, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // holds the committer while the steps queue, so they commit as one group
		defer wg.Done()
		_ = g.Group(ctx, func(Tx) error { close(first); <-release; return nil })
	}()
	<-first
	got := make([]bool, len(steps))
	for i, st := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seen seenRows
			c := withoutSavepoint(ctx)
			if st.prepared {
				c = withPrepared(ctx, &seen)
			}
			err := g.Group(c, func(Tx) error {
				if st.prepared {
					_, got[i] = seen[parent]
					seen.add(parent, rowRead{row: Row{ID: "p", Kind: parent.Kind, FQN: parent.FQN}})
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
		waitPending(g, i+1)
	}
	close(release)
	wg.Wait()
	for i, st := range steps {
		if got[i] != st.wantSeen {
			t.Errorf("%s: saw the parent = %v, want %v", st.name, got[i], st.wantSeen)
		}
	}
}

func TestAWriteRunAgainIsNotGivenTheRowsOfTheTransactionItLost(t *testing.T) {
	g := NewGroup(func(context.Context) (Tx, error) {
		var mu sync.Mutex
		var log []string
		return loggingTx{mu: &mu, log: &log}, nil
	})
	ctx := context.Background()
	first, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // holds the committer while the two writes queue
		defer wg.Done()
		_ = g.Group(ctx, func(Tx) error { close(first); <-release; return nil })
	}()
	<-first
	parent := RowKey{Kind: "databaseSchema", FQN: "svc.db.sch"}
	var runs []int // rows the prepared create was given, per run
	go func() {
		defer wg.Done()
		var seen seenRows
		if err := g.Group(withPrepared(ctx, &seen), func(Tx) error {
			runs = append(runs, len(seen))
			seen.add(parent, rowRead{row: Row{ID: "p", Kind: parent.Kind, FQN: parent.FQN}})
			return nil
		}); err != nil {
			t.Error(err)
		}
	}()
	waitPending(g, 1)
	go func() {
		defer wg.Done()
		var seen seenRows // another prepared create, whose write loses the transaction
		_ = g.Group(withPrepared(ctx, &seen), func(Tx) error { return fmt.Errorf("%w: lost", errTxLost) })
	}()
	waitPending(g, 2)
	close(release)
	wg.Wait()
	// It ran in the group whose transaction the other write lost, then again alone.
	if !slices.Equal(runs, []int{0, 0}) {
		t.Fatalf("the prepared create was given %v rows in its runs, want none in either", runs)
	}
}

// waitPending waits until n writes wait in g.
func waitPending(g *Group, n int) {
	for {
		g.mu.Lock()
		l := len(g.pending)
		g.mu.Unlock()
		if l == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
