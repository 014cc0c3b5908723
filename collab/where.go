package collab

import (
	"strconv"
	"strings"
)

// Where builds a SQL WHERE clause out of conditions joined by AND. Each condition
// writes ? where a value goes; Add numbers them $1, $2, … in order, so every value
// is a bound parameter. The zero Where is empty.
type Where struct {
	conds []string
	// Args are the values of the placeholders, in order.
	Args []any
}

// Add appends cond with its values, one for each ? in cond.
func (w *Where) Add(cond string, vals ...any) {
	for _, v := range vals {
		w.Args = append(w.Args, v)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.Args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// String is " WHERE " and the conditions joined by AND, or "" when there is none.
func (w *Where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// AddIfSet adds cond with v when v is not empty: a filter left out filters nothing.
func (w *Where) AddIfSet(cond, v string) {
	if v != "" {
		w.Add(cond, v)
	}
}

// AddWindow bounds ts (epoch ms, inclusive) to start and end; a bound of 0 (or less)
// is left out.
func (w *Where) AddWindow(start, end int64) {
	if start > 0 {
		w.Add("ts >= ?", start)
	}
	if end > 0 {
		w.Add("ts <= ?", end)
	}
}

// AddAfter selects the rows after c in (ts DESC, id DESC) order; a nil c selects
// from the first row.
func (w *Where) AddAfter(c *Cursor) {
	if c != nil {
		w.Add(afterCursor, c.TS, c.TS, c.ID)
	}
}
