package rest

import (
	"strconv"
	"strings"
	"testing"
)

func TestMetricsCountRequestsByRoutePattern(t *testing.T) {
	f := newFixture(t)
	f.call("GET", "/api/v1/tables?limit=1", "")
	f.call("GET", "/api/v1/tables/name/no.such.table", "")
	f.do("GET", "/api/v1/tables", "", nil) // 401
	r := f.do("GET", "/metrics", "", nil)
	if r.status != 200 {
		t.Fatalf("/metrics without a token: %d %s", r.status, r.body)
	}
	body := string(r.body)
	for _, want := range []string{
		`meridian_http_requests_total{code="200",method="GET",route="/api/v1/tables"} 1`,
		`meridian_http_requests_total{code="404",method="GET",route="/api/v1/tables/name/{fqn}"} 1`,
		`meridian_http_requests_total{code="401",method="GET",route="unmatched"} 1`,
		`meridian_http_request_duration_seconds_count{method="GET",route="/api/v1/tables"} 1`,
		"go_goroutines", "process_resident_memory_bytes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "no.such.table") {
		t.Error("/metrics must label routes by pattern, not by path")
	}
}

func TestMetricsCountTheWritersWork(t *testing.T) {
	f := newFixture(t)
	scrape := func() map[string]float64 {
		r := f.do("GET", "/metrics", "", nil)
		got := map[string]float64{}
		for _, line := range strings.Split(string(r.body), "\n") {
			name, value, ok := strings.Cut(line, " ")
			if ok && strings.HasPrefix(name, "meridian_writer_") {
				v, err := strconv.ParseFloat(value, 64)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				got[name] = v
			}
		}
		return got
	}
	before := scrape()
	f.call("POST", "/api/v1/classifications", `{"name":"Counted","description":"x"}`)
	after := scrape()
	for _, name := range []string{"meridian_writer_commits_total", "meridian_writer_writes_total", "meridian_writer_busy_seconds_total"} {
		if after[name] <= before[name] {
			t.Errorf("%s went from %v to %v over a write", name, before[name], after[name])
		}
	}
	if after["meridian_writer_writes_total"] < after["meridian_writer_commits_total"] {
		t.Errorf("fewer writes (%v) than commits (%v)", after["meridian_writer_writes_total"], after["meridian_writer_commits_total"])
	}
}
