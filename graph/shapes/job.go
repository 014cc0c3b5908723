package shapes

import (
	"context"
	"fmt"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/store"
)

// JobResult is what a whole-graph validation job records.
type JobResult struct {
	Conforms bool `json:"conforms"`
	// Checked is how many focus entities were validated, Violations how many results
	// were found in all; Results holds the first MaxResults.
	Checked      int       `json:"checked"`
	Violations   int       `json:"violations"`
	Results      []Finding `json:"results"`
	Completeness string    `json:"completeness"`
}

// StartWholeGraph starts the durable job that validates the whole graph against the
// shapes: it pages through the instances of every class the shapes target
// (sh:targetClass), pageSize entities a step, validating each step's neighbourhoods
// (depth 1) on their own, so memory stays bounded whatever the graph's size. It returns
// the job id. Errors: EInvalid (no or bad shapes, shapes without sh:targetClass),
// ENotFound (shapeName), ETooManyRequests (job queue full).
func (v *Validator) StartWholeGraph(ctx context.Context, p *meridian.Principal, req Request) (string, error) {
	if v.Jobs == nil {
		return "", meridian.Errorf(meridian.EUnavailable, "durable jobs are not configured")
	}
	_, targets, text, err := v.shapesOf(ctx, p, req)
	if err != nil {
		return "", err
	}
	if len(targets) == 0 {
		return "", meridian.Errorf(meridian.EInvalid, "whole-graph validation needs shapes with sh:targetClass; validate one entity or class instead")
	}
	params := map[string]any{"shapeName": req.ShapeName, "targets": targets}
	return v.Jobs.Start(ctx, p, JobTypeValidate, params, func(ctx context.Context, progress store.JobProgress) (any, error) {
		return v.wholeGraph(ctx, p, text, targets, progress)
	})
}

// wholeGraph validates every instance of the target classes, page by page.
func (v *Validator) wholeGraph(ctx context.Context, p *meridian.Principal, text string, targets []string, progress store.JobProgress) (*JobResult, error) {
	shapes, _, err := meridian.ParseShaclShapes(text)
	if err != nil {
		return nil, err
	}
	out := &JobResult{Completeness: string(graph.Complete), Results: []Finding{}}
	for ti, class := range targets {
		for offset := 0; ; offset += pageSize {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			focus, more, err := v.instances(ctx, p, class, pageSize, offset)
			if err != nil {
				return nil, err
			}
			if len(focus) > 0 {
				data := v.dataGraph()
				triples, complete, err := v.around(ctx, p, focus)
				if err != nil {
					return nil, err
				}
				if !complete {
					out.Completeness = string(graph.Truncated)
				}
				addTriples(data, triples)
				rep := &Report{}
				v.run(data, shapes, focus, rep)
				out.Checked += len(focus)
				out.Violations += len(rep.Results)
				for _, f := range rep.Results {
					if len(out.Results) < MaxResults {
						out.Results = append(out.Results, f)
					}
				}
			}
			if progress != nil {
				_ = progress.Progress(ctx, min(99, ti*100/len(targets)), nil)
			}
			if !more {
				break
			}
		}
	}
	out.Conforms = out.Violations == 0
	return out, nil
}

// around collects the triples of the focus entities and of the nodes they point at
// (their columns, tags, owners), at most MaxRows; false when more were left.
func (v *Validator) around(ctx context.Context, p *meridian.Principal, focus []string) ([]graph.Triple, bool, error) {
	var values strings.Builder
	for _, f := range focus {
		if strings.ContainsAny(f, "<>\"{}|^`\\ \t\r\n") {
			continue
		}
		fmt.Fprintf(&values, "<%s> ", f)
	}
	q := "SELECT ?s ?p ?o WHERE { { VALUES ?s { " + values.String() + "} ?s ?p ?o } UNION { VALUES ?e { " +
		values.String() + "} ?e ?q ?s . FILTER (isIRI(?s)) ?s ?p ?o } }"
	r, err := v.Graph.Run(ctx, p, graph.Request{Query: q, Limit: graph.MaxRows})
	if err != nil {
		return nil, false, err
	}
	out := make([]graph.Triple, 0, len(r.Rows))
	for _, row := range r.Rows {
		if len(row) == 3 {
			out = append(out, graph.Triple{S: row[0], P: row[1], O: row[2]})
		}
	}
	return out, r.Completeness == graph.Complete, nil
}
