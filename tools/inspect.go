package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Inspect: reading one entity, or a few, in full.

const (
	// maxBatch is the most entities one get_entity_details call reads.
	maxBatch = 10
	// maxColumnLimit bounds columnLimit.
	maxColumnLimit = 1000
)

// DetailSection computes one optional section of get_entity_details, asked for with
// include: ["lineage"] or include: ["quality"]. It returns a JSON object. A failing
// section degrades on its own: the answer carries <name>Error instead of <name>.
type DetailSection func(ctx context.Context, env *Env, p *meridian.Principal, k *meridian.Kind, e meridian.Entity) (map[string]any, error)

// detailIncludes are the include values get_entity_details accepts.
var detailIncludes = []string{"lineage", "quality"}

func getEntityDetails(env *Env) *Tool {
	columnProps := Props{
		"columns":          Array("This page of the columns (top level; nested children stay inside their column).", OpenObject("A column.", Props{"name": String("Column name."), "dataType": String("Data type."), "description": String("Description.")})),
		"columnsTruncated": Boolean("True when this result holds only part of the columns."),
		"totalColumns":     Integer("Number of top-level columns."),
		"returnedColumns":  Integer("Columns in this result."),
		"columnOffset":     Integer("Offset of the first column in this result."),
		"hasMoreColumns":   Boolean("True when more columns follow through nextCursor."),
		"lineage":          OpenObject("Lineage section (include lineage).", Props{}),
		"lineageError":     String("Why the lineage section is missing."),
		"quality":          OpenObject("Data quality section (include quality).", Props{}),
		"qualityError":     String("Why the quality section is missing."),
	}
	batchItem := entityOutput("One entity of the batch, or its error.", Props{
		"fqn":        String("The FQN asked for."),
		"error":      String("Why this entity could not be read."),
		"statusCode": Integer("HTTP-style status of the error."),
		"hint":       String("How to fix the error."),
	})
	out := entityOutput("The entity (entityType and fqn), or the batch (entities).", pageProps(columnProps))
	out["properties"].(map[string]any)["entities"] = Array("Batch answer: one item per requested entity, in order.", batchItem)
	out["properties"].(map[string]any)["requested"] = Integer("Batch: entities requested.")
	out["properties"].(map[string]any)["errors"] = Integer("Batch: entities that failed.")
	return &Tool{
		Name:  "get_entity_details",
		Title: "Get entity details",
		Description: "Read one entity in full by entityType and fqn (its fullyQualifiedName), or up to 10 at once with " +
			"entities: [\"table:svc.db.schema.orders\", \"dashboard:svc.sales\"]. Columns are paged within the result " +
			"budget: follow nextCursor (or pass columnOffset) to read the rest. include: [\"lineage\", \"quality\"] adds " +
			"those sections. Use search_metadata first when the exact fqn is not known.",
		Input: Object(Props{
			"entityType":     String("Entity type, e.g. table, dashboard, glossaryTerm, tag, metric."),
			"fqn":            String("Fully qualified name, e.g. mysql_prod.shop.public.orders."),
			"entities":       Strings("Batch: up to 10 \"entityType:fqn\" strings; each entry succeeds or fails on its own.").Max(maxBatch),
			"columnOffset":   Integer("Offset of the first column to return.").Min(0).Default(0),
			"columnLimit":    Integer("Most columns to return (default: as many as fit the result budget).").Min(1).Max(maxColumnLimit),
			"cursor":         Cursor(),
			"include":        Array("Optional sections.", Enum("Section name.", detailIncludes...)),
			"includeDeleted": Boolean("Also find a soft-deleted entity.").Default(false),
		}),
		Output:  out,
		Aliases: map[string]string{"entity_id": "fqn", "name": "fqn"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			include := store.IncludeNonDeleted
			if a.Bool("includeDeleted") {
				include = store.IncludeAll
			}
			req := detailRequest{limit: a.Int("columnLimit"), sections: a.Strings("include"), include: include}
			if list := a.Strings("entities"); len(list) > 0 {
				if a.String("cursor") != "" {
					return nil, withHint(meridian.Errorf(meridian.EInvalid, "cursor pages the columns of one entity and does not apply to a batch"),
						"Call get_entity_details with entityType, fqn and the entity's nextCursor")
				}
				req.offset = a.Int("columnOffset")
				return env.detailBatch(ctx, p, list, req), nil
			}
			if a.String("entityType") == "" || strings.TrimSpace(a.String("fqn")) == "" {
				missing := "entityType"
				if a.String("entityType") != "" {
					missing = "fqn"
				}
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' is required (or give entities for a batch)", missing),
					"Pass entityType (e.g. table) and fqn (the fullyQualifiedName), or entities: [\"table:svc.db.schema.t\"]")
			}
			k, err := env.kind(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			if req.offset, err = offsetOf(a, "columnOffset"); err != nil {
				return nil, err
			}
			req.budget = env.Budget
			return env.detail(ctx, p, k, a.String("fqn"), req)
		},
	}
}

type detailRequest struct {
	offset, limit, budget int
	sections              []string
	include               store.Include
}

// detail reads one entity and pages its columns into the budget.
func (e *Env) detail(ctx context.Context, p *meridian.Principal, k *meridian.Kind, fqn string, r detailRequest) (map[string]any, error) {
	ent, err := e.get(ctx, p, k, fqn, allFields(k), r.include)
	if err != nil {
		return nil, err
	}
	m := map[string]any(ent.Clone())
	clean(m)
	m["entityType"] = k.Name
	for _, name := range r.sections {
		fn := detailSections[name]
		if fn == nil {
			m[name+"Error"] = fmt.Sprintf("the %s section is not available on this server", name)
			continue
		}
		sec, err := fn(ctx, e, p, k, ent)
		if err != nil {
			m[name+"Error"] = meridian.ErrorMessage(err)
			continue
		}
		m[name] = sec
	}
	cols, hasCols := m["columns"].([]any)
	delete(m, "columns")
	Trim(m)
	if !hasCols {
		return m, nil
	}
	Trim(cols)
	total := len(cols)
	rows := []any{}
	if r.offset < total {
		rows = cols[r.offset:]
	}
	if r.limit > 0 && len(rows) > r.limit {
		rows = rows[:r.limit]
	}
	// Room for the columns: the budget less the rest of the entity and the paging fields.
	room := r.budget - jsonLen(m) - 600
	n := fitRows(rows, room)
	m["columns"] = rows[:n]
	m["totalColumns"] = total
	m["returnedColumns"] = n
	m["columnOffset"] = r.offset
	m["columnsTruncated"] = n < total
	m["hasMoreColumns"] = r.offset+n < total
	setPage(m, r.offset, n, total)
	return m, nil
}

// detailBatch reads several "type:fqn" entries, each within its share of the budget;
// an entry that fails carries its error, status and hint instead of the entity.
func (e *Env) detailBatch(ctx context.Context, p *meridian.Principal, list []string, r detailRequest) map[string]any {
	r.budget = (e.Budget - 500) / len(list)
	items := make([]any, 0, len(list))
	failed := 0
	for _, entry := range list {
		typ, fqn, ok := strings.Cut(entry, ":")
		typ, fqn = strings.TrimSpace(typ), strings.TrimSpace(fqn)
		var (
			item map[string]any
			err  error
		)
		switch {
		case !ok || typ == "" || fqn == "":
			err = withHint(meridian.Errorf(meridian.EInvalid, "Invalid entities entry %q: expected \"entityType:fqn\"", entry),
				"Write each entry as entityType:fqn, e.g. table:mysql_prod.shop.public.orders")
		default:
			var k *meridian.Kind
			if k, err = e.kind(typ); err == nil {
				item, err = e.detail(ctx, p, k, fqn, r)
			}
		}
		if err != nil {
			failed++
			res := errorResult(err)
			body := map[string]any{}
			_ = unmarshalInto(res.Text, &body)
			body["entityType"] = typ
			body["fqn"] = fqn
			items = append(items, body)
			continue
		}
		items = append(items, item)
	}
	return map[string]any{"entities": items, "requested": len(list), "returned": len(list) - failed, "errors": failed}
}
