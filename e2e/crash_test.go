package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ack is a write the server acknowledged with a 2xx: the table and the version the
// answer carried.
type ack struct {
	table   string
	version float64
}

// rawWrite sends one write without failing the test on a transport error (the server
// is killed in the middle of the stream). It returns the status (0 on a transport
// error) and the answer's version.
func rawWrite(hc *http.Client, base, token, method, path, contentType string, body []byte) (int, float64) {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", contentType)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	var e struct {
		Version float64 `json:"version"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		return resp.StatusCode, 0
	}
	return resp.StatusCode, e.Version
}

// bulkWrite sends one bulk create-or-update without failing the test on a transport
// error. It returns the status (0 on a transport error) and, for each table the
// answer reports written, the change it made.
func bulkWrite(hc *http.Client, base, token string, bodies []map[string]any) (int, map[string]string) {
	b, _ := json.Marshal(bodies)
	req, err := http.NewRequest("PUT", base+"/api/v1/tables/bulk", bytes.NewReader(b))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var out struct {
		Status         string `json:"status"`
		SuccessRequest []struct {
			Request string `json:"request"`
			Message string `json:"message"`
		} `json:"successRequest"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, nil // cut off mid-answer: nothing is acknowledged
	}
	if out.Status != "success" {
		return resp.StatusCode, nil
	}
	changes := map[string]string{}
	for _, s := range out.SuccessRequest {
		changes[s.Request] = s.Message
	}
	return resp.StatusCode, changes
}

// TestCrashLosesNoAcknowledgedWrite runs 8 writers, 6 that create and patch tables one
// request at a time (group commit) and 2 that create and then update tables through the
// bulk endpoint, kills the server with SIGKILL in the middle of the stream, restarts it
// and checks that every acknowledged write is there with its exact version history (no
// version skipped or repeated) and its change event, and that the outbox goes on after
// the restart.
func TestCrashLosesNoAcknowledgedWrite(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.admin.must(201, "POST", "/api/v1/services/databaseServices", map[string]any{"name": "crash", "serviceType": "Mysql"})
	s.admin.must(201, "POST", "/api/v1/databases", map[string]any{"name": "db", "service": "crash"})
	s.admin.must(201, "POST", "/api/v1/databaseSchemas", map[string]any{"name": "sch", "database": "crash.db"})

	var (
		mu    sync.Mutex
		acks  []ack
		count atomic.Int64
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	hc := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load() && i < 100; i++ {
				bodies := make([]map[string]any, 25)
				for j := range bodies {
					bodies[j] = map[string]any{"name": fmt.Sprintf("b%d_%03d_%02d", w, i, j), "databaseSchema": "crash.db.sch",
						"columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}}}
				}
				// Create the batch, then update every table of it: versions 0.1, then 0.2.
				for step, want := range []struct {
					change  string
					version float64
				}{{"entityCreated", 0.1}, {"entityUpdated", 0.2}} {
					if step == 1 {
						for _, b := range bodies {
							b["description"] = "bulk update"
						}
					}
					status, changes := bulkWrite(hc, s.base, s.adminToken, bodies)
					if status == 0 {
						return
					}
					if status != 200 || len(changes) != len(bodies) {
						t.Errorf("bulk %d/%d: status %d, %d of %d written", i, step, status, len(changes), len(bodies))
						return
					}
					mu.Lock()
					for _, b := range bodies {
						name := b["name"].(string)
						if c := changes["crash.db.sch."+name]; c != want.change {
							t.Errorf("bulk %s: change %q, want %q", name, c, want.change)
						}
						acks = append(acks, ack{name, want.version})
					}
					mu.Unlock()
					count.Add(int64(len(bodies)))
				}
			}
		}(w)
	}
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// acked records an acknowledged write and reports whether the writer goes
			// on: a transport error (the server is gone) or a wrong status stops it.
			acked := func(what, name string, want, status int, v float64) bool {
				if status == 0 {
					return false
				}
				if status != want {
					t.Errorf("%s %s: status %d", what, name, status)
					return false
				}
				mu.Lock()
				acks = append(acks, ack{name, v})
				mu.Unlock()
				count.Add(1)
				return true
			}
			for i := 0; !stop.Load() && i < 1000; i++ {
				name := fmt.Sprintf("w%d_t%03d", w, i)
				body, _ := json.Marshal(map[string]any{"name": name, "databaseSchema": "crash.db.sch",
					"columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}}})
				status, v := rawWrite(hc, s.base, s.adminToken, "POST", "/api/v1/tables", "application/json", body)
				if !acked("create", name, 201, status, v) {
					return
				}
				for p := 0; p < 3 && !stop.Load(); p++ {
					patch := fmt.Sprintf(`[{"op":"add","path":"/description","value":"step %d"}]`, p)
					status, v := rawWrite(hc, s.base, s.adminToken, "PATCH", "/api/v1/tables/name/crash.db.sch."+name,
						"application/json-patch+json", []byte(patch))
					if !acked("patch", name, 200, status, v) {
						return
					}
				}
			}
		}(w)
	}
	deadline := time.Now().Add(20 * time.Second)
	for count.Load() < 400 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.crash() // kill -9 while the writers are still writing
	stop.Store(true)
	wg.Wait()
	if len(acks) < 50 {
		t.Fatalf("only %d writes were acknowledged before the crash", len(acks))
	}
	t.Logf("%d writes acknowledged before the crash", len(acks))

	r := s.restart(t)
	last := map[string]float64{}
	for _, a := range acks {
		if a.version > last[a.table] {
			last[a.table] = a.version
		}
	}
	events := allEvents(t, r, "table")
	for table, acked := range last {
		e := r.admin.must(200, "GET", "/api/v1/tables/name/crash.db.sch."+table, nil)
		current, _ := e["version"].(float64)
		if current < acked {
			t.Fatalf("%s: version %.1f after restart, but %.1f was acknowledged", table, current, acked)
		}
		id, _ := e["id"].(string)
		h := r.admin.must(200, "GET", "/api/v1/tables/"+id+"/versions", nil)
		versions, _ := h["versions"].([]any)
		if got, want := len(versions), int(current*10+0.5); got != want {
			t.Fatalf("%s: %d versions for version %.1f", table, got, current)
		}
		for i, raw := range versions {
			var snap struct {
				Version float64 `json:"version"`
			}
			_ = json.Unmarshal([]byte(raw.(string)), &snap)
			if want := current - float64(i)/10; fmt.Sprintf("%.1f", snap.Version) != fmt.Sprintf("%.1f", want) {
				t.Fatalf("%s: versions[%d] is %.1f, want %.1f (a version was skipped or repeated)", table, i, snap.Version, want)
			}
		}
		for v := 1; v <= int(current*10+0.5); v++ {
			if events[table][v] != 1 {
				t.Fatalf("%s: %d change events for version %.1f, want 1", table, events[table][v], float64(v)/10)
			}
		}
	}

	// The outbox goes on after the restart: a new write gets the next event.
	r.admin.must(201, "POST", "/api/v1/tables", map[string]any{"name": "after_crash", "databaseSchema": "crash.db.sch",
		"columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}}})
	if got := allEvents(t, r, "table")["after_crash"][1]; got != 1 {
		t.Fatalf("the write after the restart has %d events, want 1", got)
	}
	r.admin.must(200, "GET", "/api/v1/events/consumers", nil)
}

// allEvents reads every change event of an entity type through the paged events API
// and counts them by table name and version (in tenths).
func allEvents(t *testing.T, s *server, entityType string) map[string]map[int]int {
	t.Helper()
	out := map[string]map[int]int{}
	after := ""
	var seen []string
	for page := 0; page < 1000; page++ {
		q := url.Values{"entityType": {entityType}, "limit": {"1000"}}
		if after != "" {
			q.Set("after", after)
		}
		body := s.admin.must(200, "GET", "/api/v1/events?"+q.Encode(), nil)
		data, _ := body["data"].([]any)
		for _, d := range data {
			e := d.(map[string]any)
			fqn, _ := e["entityFullyQualifiedName"].(string)
			name := fqn[len("crash.db.sch."):]
			v, _ := e["currentVersion"].(float64)
			if out[name] == nil {
				out[name] = map[int]int{}
			}
			out[name][int(v*10+0.5)]++
			seen = append(seen, e["id"].(string))
		}
		paging, _ := body["paging"].(map[string]any)
		next, _ := paging["after"].(string)
		if next == "" {
			break
		}
		if n, _ := strconv.Atoi(next); n <= 0 {
			t.Fatalf("bad events cursor %q", next)
		}
		after = next
	}
	sort.Strings(seen)
	for i := 1; i < len(seen); i++ {
		if seen[i] == seen[i-1] {
			t.Fatalf("event %s listed twice", seen[i])
		}
	}
	return out
}
