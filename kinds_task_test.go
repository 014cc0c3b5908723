package meridian

import "testing"

func TestTaskAllowsFollowsTheSeededTaskPolicies(t *testing.T) {
	alice := &Principal{ID: "a", Name: "alice", Roles: []string{RoleDataConsumer}}
	bob := &Principal{ID: "b", Name: "bob", Roles: []string{RoleDataConsumer}}
	steward := &Principal{ID: "s", Name: "sam", Roles: []string{RoleDataSteward}}
	bot := &Principal{ID: "x", Name: "ingestion-bot", IsBot: true}
	nobody := &Principal{ID: "n", Name: "nobody"}
	task := Entity{"createdBy": map[string]any{"id": "a", "name": "alice"},
		"assignees": []any{map[string]any{"id": "b", "name": "bob"}, map[string]any{"id": "n", "name": "nobody"}}}
	tests := []struct {
		who  *Principal
		op   string
		want bool
	}{
		{alice, OpCreateTask, true}, {bot, OpCreateTask, true}, {nobody, OpCreateTask, false},
		{alice, OpEditTask, true}, {bob, OpEditTask, true}, {steward, OpEditTask, true}, {bot, OpEditTask, false},
		{alice, OpResolveTask, false}, {bob, OpResolveTask, true}, {steward, OpResolveTask, false},
		{nobody, OpResolveTask, false}, // assigned, but without a task author role
		{alice, OpCloseTask, true}, {bob, OpCloseTask, true}, {steward, OpCloseTask, false},
		{alice, OpReassignTask, true}, {steward, OpReassignTask, true}, {bot, OpReassignTask, false},
		{alice, "Delete", true}, {bob, "Delete", false}, {steward, "Delete", true},
		{alice, "HardDelete", false}, {steward, "EditPrivileged", false}, {nil, OpCreateTask, false},
	}
	for _, tc := range tests {
		name := "nil"
		if tc.who != nil {
			name = tc.who.Name
		}
		if got := TaskAllows(tc.who, tc.op, task); got != tc.want {
			t.Errorf("%s %s: got %v, want %v", name, tc.op, got, tc.want)
		}
	}
}

func TestTaskIdentityMatchesByIDBeforeName(t *testing.T) {
	task := Entity{"createdBy": map[string]any{"id": "a", "name": "alice"}}
	if IsTaskCreator(&Principal{ID: "other", Name: "alice"}, task) {
		t.Error("a principal named like the creator but with another id is the creator")
	}
	if !IsTaskCreator(&Principal{Name: "alice"}, task) {
		t.Error("a principal without an id is matched by name")
	}
}
