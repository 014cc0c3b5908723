package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// A surface is one way in to the catalog (REST; MCP over stdio and over streamable
// HTTP, mcp.go), with a list of named operations. Each operation is timed -samples times, one
// call after another on one client, after a short untimed warm-up. The report has one
// row per (surface, operation), in the order they are listed here, so adding a surface
// is adding a function that returns one.
type surface struct {
	name string
	ops  []operation
}

// operation is one timed call.
type operation struct {
	// name is the row label in the report, for example "GET table by name".
	name string
	// probe, when set, runs once before timing. errNotAvailable (wrapped) makes the
	// row "n/a" with its message instead of failing the run.
	probe func(ctx context.Context) error
	// run makes call number i (0-based, warm-up included) and returns the time the
	// call itself took: client-side bookkeeping such as parsing a cursor out of the
	// answer stays outside it.
	run func(ctx context.Context, i int) (time.Duration, error)
	// info, when set, describes what the timed calls returned (hit counts, say), for
	// the report's notes.
	info func() string
	// problems, when set, describes calls that answered but failed (an MCP tool result
	// with isError): the samples are kept, and the report flags the row.
	problems func() string
}

// errNotAvailable marks an operation the server does not offer (yet).
var errNotAvailable = errors.New("not available")

// timing is the result of one operation.
type timing struct {
	surface, name string
	p50, p99      time.Duration
	samples       int
	na            string // why the operation is not available
	err           string // why the operation failed
	info          string // what the calls returned
	problems      string // calls that answered with an error (the row is flagged)
	reused        bool   // a copy of another row's timing under a second name
}

// warmups is the number of untimed calls before the timed ones.
func warmups(samples int) int { return min(max(samples/10, 5), 50) }

// timeOp runs one operation: probe, warm-up, then samples timed calls.
func timeOp(ctx context.Context, surf string, op operation, samples int) timing {
	t := timing{surface: surf, name: op.name}
	if op.probe != nil {
		if err := op.probe(ctx); err != nil {
			if errors.Is(err, errNotAvailable) {
				t.na = err.Error()
			} else {
				t.err = err.Error()
			}
			return t
		}
	}
	w := warmups(samples)
	d := make([]time.Duration, 0, samples)
	for i := 0; i < w+samples; i++ {
		if err := ctx.Err(); err != nil {
			t.err = err.Error()
			return t
		}
		el, err := op.run(ctx, i)
		if err != nil {
			t.err = fmt.Sprintf("call %d: %v", i, err)
			return t
		}
		if i >= w {
			d = append(d, el)
		}
	}
	t.p50, t.p99, t.samples = percentile(d, 50), percentile(d, 99), len(d)
	if op.info != nil {
		t.info = op.info()
	}
	if op.problems != nil {
		t.problems = op.problems()
	}
	return t
}

// percentile returns the p-th percentile of d (nearest rank). It sorts d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	k := int(float64(len(d))*p/100+0.999999) - 1
	return d[min(max(k, 0), len(d)-1)]
}

// searchQueries draws k search queries of one or two vocabulary words. Call number i
// of every search operation (REST and MCP) sends queries[i], so all surfaces search for
// the same words in the same order.
func searchQueries(k int, seed uint64) []string {
	words := slices.Concat(subjects, grains, layers)
	qr := rand.New(rand.NewPCG(seed, 0x5ea7c4))
	out := make([]string, k)
	for i := range out {
		q := words[qr.IntN(len(words))]
		if qr.IntN(2) == 0 {
			q += " " + words[qr.IntN(len(words))]
		}
		out[i] = q
	}
	return out
}

// coldGetName is the report row of GET by name on tables read once each, after writes
// emptied the read cache.
const coldGetName = "GET table by name, each table once after the writes (fields=columns)"

// restSurface is the REST API: the four operations of issue #3. getFQNs are the
// tables read by GET by name (the floor reads the same ones), patchFQNs those patched,
// coldFQNs those read once each after the patches, queries the searches.
func restSurface(c *client, getFQNs, patchFQNs, coldFQNs, queries []string) surface {
	timed := func(ctx context.Context, method, path, ctype string, body []byte) ([]byte, time.Duration, error) {
		start := time.Now()
		b, err := c.do(ctx, method, path, ctype, body)
		return b, time.Since(start), err
	}

	var after string // list cursor: walks every page, then starts over
	var listTotal, listRows, listPages int
	var searchHits, searchTotal, searchCalls, searchEmpty int

	return surface{name: "REST", ops: []operation{
		{
			name: "GET table by name (fields=columns)",
			run: func(ctx context.Context, i int) (time.Duration, error) {
				_, d, err := timed(ctx, http.MethodGet, getByNamePath(getFQNs[i%len(getFQNs)]), "", nil)
				return d, err
			},
		},
		{
			name: "list tables, page of 100 (after cursor)",
			run: func(ctx context.Context, i int) (time.Duration, error) {
				path := "/api/v1/tables?limit=100"
				if after != "" {
					path += "&after=" + url.QueryEscape(after)
				}
				b, d, err := timed(ctx, http.MethodGet, path, "", nil)
				if err != nil {
					return d, err
				}
				var page struct {
					Data   []json.RawMessage `json:"data"`
					Paging struct {
						After string `json:"after"`
						Total int    `json:"total"`
					} `json:"paging"`
				}
				if err := json.Unmarshal(b, &page); err != nil {
					return d, fmt.Errorf("list answer: %w", err)
				}
				after = page.Paging.After
				listTotal, listRows, listPages = page.Paging.Total, listRows+len(page.Data), listPages+1
				return d, nil
			},
			info: func() string {
				return fmt.Sprintf("%.0f rows per page on average, paging.total %d", float64(listRows)/float64(max(listPages, 1)), listTotal)
			},
		},
		{
			name: "PATCH description (JSON Patch, by name)",
			run: func(ctx context.Context, i int) (time.Duration, error) {
				patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/description",
					"value": fmt.Sprintf("Reviewed by the data platform team (benchmark edit %d).", i)}})
				_, d, err := timed(ctx, http.MethodPatch,
					"/api/v1/tables/name/"+url.PathEscape(patchFQNs[i%len(patchFQNs)]), "application/json-patch+json", patch)
				return d, err
			},
		},
		{
			// The PATCH row's commits emptied the read cache, and no table here is read
			// twice (unless there are fewer tables than calls), so each GET reads the
			// database.
			name: coldGetName,
			run: func(ctx context.Context, i int) (time.Duration, error) {
				_, d, err := timed(ctx, http.MethodGet, getByNamePath(coldFQNs[i%len(coldFQNs)]), "", nil)
				return d, err
			},
		},
		{
			name: "search, 1–2 words (index=table)",
			probe: func(ctx context.Context) error {
				_, err := c.do(ctx, http.MethodGet, "/api/v1/search/query?q=customer&index=table", "", nil)
				var se *statusError
				if errors.As(err, &se) && se.status == http.StatusNotFound {
					return fmt.Errorf("%w: GET /api/v1/search/query answers 404", errNotAvailable)
				}
				return err
			},
			run: func(ctx context.Context, i int) (time.Duration, error) {
				q := queries[i%len(queries)]
				b, d, err := timed(ctx, http.MethodGet, "/api/v1/search/query?q="+url.QueryEscape(q)+"&index=table&size=10", "", nil)
				if err != nil {
					return d, err
				}
				var res struct {
					Hits struct {
						Total struct {
							Value int `json:"value"`
						} `json:"total"`
						Hits []json.RawMessage `json:"hits"`
					} `json:"hits"`
				}
				if err := json.Unmarshal(b, &res); err != nil {
					return d, fmt.Errorf("search answer: %w", err)
				}
				searchCalls++
				searchHits += len(res.Hits.Hits)
				searchTotal += res.Hits.Total.Value
				if res.Hits.Total.Value == 0 {
					searchEmpty++
				}
				return d, nil
			},
			info: func() string {
				n := float64(max(searchCalls, 1))
				return fmt.Sprintf("%.0f matches per query on average (%d of %d queries matched nothing), %.1f hits returned per page",
					float64(searchTotal)/n, searchEmpty, searchCalls, float64(searchHits)/n)
			},
		},
	}}
}

// distinctFQNs returns k of fqns in a random order, none twice while k ≤ len(fqns).
func distinctFQNs(fqns []string, k int, seed, stream uint64) []string {
	r := rand.New(rand.NewPCG(seed, stream))
	perm := r.Perm(len(fqns))
	out := make([]string, k)
	for i := range out {
		out[i] = fqns[perm[i%len(perm)]]
	}
	return out
}

// sampleFQNs draws k table FQNs at random (with replacement) from fqns.
func sampleFQNs(fqns []string, k int, seed, stream uint64) []string {
	r := rand.New(rand.NewPCG(seed, stream))
	out := make([]string, k)
	for i := range out {
		out[i] = fqns[r.IntN(len(fqns))]
	}
	return out
}
