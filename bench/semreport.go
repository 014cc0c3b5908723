package main

import (
	"fmt"
	"strings"
	"time"
)

// semanticMarkdown renders the semantic suite: one column pair per driver, then the
// model figures. It is empty when the suite did not run.
func (r *report) semanticMarkdown() string {
	if len(r.semantic) == 0 && r.models == nil {
		return ""
	}
	var b strings.Builder
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	fmt.Fprintf(&b, "## Semantic search (issue 9)\n\n")
	fmt.Fprintf(&b, "Load: %d tables × %d columns through `PUT /api/v1/tables/bulk`, with the hashing embedder "+
		"(`MERIDIAN_EMBEDDER=hashing`). Questions are natural sentences over the catalog's vocabulary "+
		"(\"which table has the daily refund figures per customer?\"), the same ones in the same order on every row; "+
		"%d samples after %d warm-up calls, one at a time, once every outbox consumer has caught up and the server's own work has settled (under %.0f%% of a core over %s, such as the graph snapshot a large load leaves or, on SQLite, the merge of the full-text index). Goal (issue 9): semantic and hybrid p50 ≤ 25 ms at 100,000 "+
		"entities. The floor is the same vector search in-process on the same database, the server stopped: "+
		"embedding the question and `vectors.Index.Search` (k = 100, tables), with no HTTP, authorization or "+
		"document loading. Latencies in ms.\n\n", r.semanticN, columnsPer, r.samples, warmups(r.samples), settleBusy*100, settleWindow)

	var cols []*semanticResult
	for _, d := range r.semantic {
		if d.skipped != "" {
			note("**%s skipped**: %s", driverTitle(d.driver), d.skipped)
			continue
		}
		if d.failed != "" {
			note("**%s stopped early**: %s", driverTitle(d.driver), d.failed)
		}
		cols = append(cols, d)
	}
	if len(cols) > 0 {
		b.WriteString("| Operation |")
		for _, d := range cols {
			fmt.Fprintf(&b, " %s p50 | %s p99 |", driverTitle(d.driver), driverTitle(d.driver))
		}
		b.WriteString("\n|---|")
		for range cols {
			b.WriteString("---:|---:|")
		}
		b.WriteString("\n")
		row := func(label string, cell func(*semanticResult) (string, string)) {
			fmt.Fprintf(&b, "| %s |", label)
			for _, d := range cols {
				p50, p99 := cell(d)
				fmt.Fprintf(&b, " %s | %s |", p50, p99)
			}
			b.WriteString("\n")
		}
		timingCells := func(t timing) (string, string) {
			switch {
			case t.na != "":
				return "n/a", "n/a"
			case t.err != "":
				return "error", "error"
			case t.samples == 0:
				return "–", "–"
			}
			flag := ""
			if t.problems != "" {
				flag = " ⚠"
			}
			return ms(t.p50) + flag, ms(t.p99) + flag
		}
		if len(cols[0].timings) > 0 {
			for i, t0 := range cols[0].timings {
				row(t0.surface+" "+t0.name, func(d *semanticResult) (string, string) {
					if i >= len(d.timings) {
						return "–", "–"
					}
					return timingCells(d.timings[i])
				})
			}
		}
		row("floor: "+floorName(cols), func(d *semanticResult) (string, string) { return timingCells(d.floor) })
		row("semantic (REST) / floor", func(d *semanticResult) (string, string) {
			if len(d.timings) == 0 || d.floor.samples == 0 || d.timings[0].samples == 0 {
				return "–", "–"
			}
			return ratio(d.timings[0].p50, d.floor.p50), ratio(d.timings[0].p99, d.floor.p99)
		})
		b.WriteString("\n| Figure |")
		for _, d := range cols {
			fmt.Fprintf(&b, " %s |", driverTitle(d.driver))
		}
		b.WriteString("\n|---|")
		for range cols {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
		fig := func(label string, f func(*semanticResult) string) {
			fmt.Fprintf(&b, "| %s |", label)
			for _, d := range cols {
				fmt.Fprintf(&b, " %s |", f(d))
			}
			b.WriteString("\n")
		}
		fig("bulk ingest, wall", func(d *semanticResult) string { return secs(d.bulkWall) })
		fig(fmt.Sprintf("time to index %d tables (ingest end → vectors backlog 0)", r.semanticN), func(d *semanticResult) string {
			if d.indexWall == 0 {
				return "–"
			}
			return fmt.Sprintf("%s (%.0f tables/s)", secs(d.indexWall), float64(r.semanticN)/d.indexWall.Seconds())
		})
		fig("peak RSS of meridian serve (hashing)", func(d *semanticResult) string { return fmtBytes(d.peakRSS) })
		for _, d := range cols {
			for _, t := range d.timings {
				switch {
				case t.err != "":
					note("%s %s: %s", driverTitle(d.driver), t.name, oneLine(t.err))
				case t.problems != "":
					note("%s %s: %s", driverTitle(d.driver), t.name, t.problems)
				case t.info != "":
					note("%s %s: %s", driverTitle(d.driver), t.name, t.info)
				}
			}
		}
	}
	if m := r.models; m != nil {
		r.modelMarkdown(&b, m, note)
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// modelMarkdown renders the embedders' figures.
func (r *report) modelMarkdown(b *strings.Builder, m *modelResult, note func(string, ...any)) {
	b.WriteString("\n### Embedders\n\nThroughput in-process (the bench's own process, all cores), on the documents the " +
		"indexer builds from generated tables, 32 documents per `Embed` call:\n\n")
	b.WriteString("| Embedder | documents | chunks | documents/s | ms per document |\n|---|---:|---:|---:|---:|\n")
	for _, t := range m.throughput {
		if t.err != "" {
			fmt.Fprintf(b, "| %s | error | | | |\n", t.embedder)
			note("%s throughput: %s", t.embedder, t.err)
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %d | %.0f | %s |\n", t.embedder, t.docs, t.chunks,
			float64(t.docs)/t.wall.Seconds(), ms(t.wall/time.Duration(max(t.docs, 1))))
	}
	u := m.useLite
	fmt.Fprintf(b, "\n`meridian serve` on SQLite with `MERIDIAN_EMBEDDER=use-lite`, %d tables:\n\n", u.n)
	if u.err != "" {
		note("use-lite server: %s", u.err)
	}
	b.WriteString("| Figure | Value |\n|---|---:|\n")
	fmt.Fprintf(b, "| RSS after start (model loaded, empty catalog) | %s |\n", fmtBytes(u.startRSS))
	fmt.Fprintf(b, "| peak RSS (after indexing and searching) | %s |\n", fmtBytes(u.peakRSS))
	if u.indexWall > 0 {
		fmt.Fprintf(b, "| time to index %d tables (ingest end → backlog 0) | %s (%.1f tables/s) |\n", u.n, secs(u.indexWall),
			float64(u.n)/u.indexWall.Seconds())
	}
	if u.semantic.samples > 0 {
		fmt.Fprintf(b, "| semantic search p50 / p99 (%d samples) | %s / %s ms |\n", u.semantic.samples, ms(u.semantic.p50), ms(u.semantic.p99))
	} else if u.semantic.err != "" {
		note("use-lite semantic search: %s", oneLine(u.semantic.err))
	}
	fmt.Fprintf(b, "\nTime to first MCP answer over stdio: spawn `meridian mcp --data-dir <the use-lite catalog>` → "+
		"`initialize` → `tools/list` answered, %d spawns each, goal ≤ 0.3 s:\n\n", firstAnswerRuns)
	b.WriteString("| Embedder | median | min | max |\n|---|---:|---:|---:|\n")
	for _, f := range m.firstAnswer {
		if f.err != "" || len(f.runs) == 0 {
			fmt.Fprintf(b, "| %s | error | | |\n", f.embedder)
			note("first MCP answer with %s: %s", f.embedder, f.err)
			continue
		}
		fmt.Fprintf(b, "| %s | %s ms | %s ms | %s ms |\n", f.embedder, ms(f.runs[len(f.runs)/2]), ms(f.runs[0]), ms(f.runs[len(f.runs)-1]))
	}
}

func floorName(cols []*semanticResult) string {
	for _, d := range cols {
		if d.floor.name != "" {
			return d.floor.name
		}
	}
	return "vector index search in-process"
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f×", float64(a)/float64(b))
}

func secs(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
