package rowscan

import (
	"encoding/json"
	"errors"
	"testing"
)

// fakeRows is a result set of rows of column values, copied into the destinations as
// database/sql and pgx do for the types used here.
type fakeRows struct {
	rows [][]any
	i    int
	err  error // of the result set, after the rows
}

func (f *fakeRows) Next() bool { f.i++; return f.i <= len(f.rows) }
func (f *fakeRows) Err() error { return f.err }
func (f *fakeRows) Scan(dest ...any) error {
	row := f.rows[f.i-1]
	if len(row) != len(dest) {
		return errors.New("column count")
	}
	for i, v := range row {
		switch d := dest[i].(type) {
		case *string:
			*d = v.(string)
		case *int64:
			*d = v.(int64)
		case *float64:
			*d = v.(float64)
		case *bool:
			*d = v.(bool)
		case *[]byte:
			if v == nil {
				*d = nil
			} else {
				*d = []byte(v.(string))
			}
		default:
			return errors.New("unexpected destination")
		}
	}
	return nil
}

func event(id string, change, entity any) []any {
	return []any{int64(1), id, "entityCreated", "table", "t1", "s.t1", "admin", int64(5), 0.1, 0.2, change, entity, false}
}

func TestEventErrorsKeepTheDriversWording(t *testing.T) {
	tests := []struct {
		name string
		rows *fakeRows
		want string
	}{
		{"bad change description", &fakeRows{rows: [][]any{event("ev-1", "{", nil)}},
			"sqlite: event ev-1 change description: unexpected end of JSON input"},
		{"bad entity", &fakeRows{rows: [][]any{event("ev-2", nil, "[")}},
			"sqlite: event ev-2 entity: unexpected end of JSON input"},
		{"scan", &fakeRows{rows: [][]any{{"short"}}}, "sqlite: events: column count"},
		{"result set", &fakeRows{err: errors.New("gone")}, "sqlite: events: gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := All(tt.rows, Event)
			if err == nil {
				t.Fatal("no error")
			}
			if got := Wrap("sqlite", "events", err).Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	var syntax *json.SyntaxError
	_, err := All(&fakeRows{rows: [][]any{event("ev-1", "{", nil)}}, Event)
	if !errors.As(Wrap("sqlite", "events", err), &syntax) {
		t.Errorf("the JSON error is not wrapped: %v", err)
	}
}

func TestEventRoundTrip(t *testing.T) {
	rows := &fakeRows{rows: [][]any{
		event("ev-1", nil, nil),
		event("ev-2", `{"fieldsAdded":[]}`, `{"name":"t1"}`),
	}}
	got, err := All(rows, Event)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ChangeDescription != nil || got[0].Entity != nil {
		t.Fatalf("got %+v", got)
	}
	if got[1].ChangeDescription == nil || got[1].Entity["name"] != "t1" {
		t.Errorf("got %+v", got[1])
	}
	change, entity, err := EventDocs(got[1])
	if err != nil || change == nil || entity != `{"name":"t1"}` {
		t.Errorf("EventDocs: %v, %v, %v", change, entity, err)
	}
	if change, entity, err := EventDocs(got[0]); change != nil || entity != nil || err != nil {
		t.Errorf("EventDocs of an event without documents: %v, %v, %v", change, entity, err)
	}
}

func TestAllIsNeverNil(t *testing.T) {
	got, err := All(&fakeRows{}, Relation)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("got %#v, %v", got, err)
	}
}

func TestQualify(t *testing.T) {
	if got := Qualify("e", "id, kind, doc"); got != "e.id, e.kind, e.doc" {
		t.Errorf("got %q", got)
	}
}
