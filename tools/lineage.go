package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/store"
)

// Lineage and impact: reading the lineage graph, adding edges, and root cause analysis
// over data-quality results upstream.

const (
	// defaultToolDepth is the default lineage depth of the tools, each direction.
	defaultToolDepth = 3
	// lineageSQLLimit caps an edge's SQL in tool answers.
	lineageSQLLimit = 500
	// sectionLimit bounds the lists of a get_entity_details section.
	sectionLimit = 25
	// failingTestsLimit bounds the failing tests listed per node.
	failingTestsLimit = 10
)

// depthArg is the schema of upstreamDepth and downstreamDepth.
func depthArg(dir string) Schema {
	return Integer(fmt.Sprintf("Levels to walk %s, 1 to %d (larger values are clamped to %d).", dir, store.MaxLineageDepth, store.MaxLineageDepth)).
		Min(1).Max(store.MaxLineageDepth).Default(defaultToolDepth)
}

// graphNode is one node of a compact lineage graph.
type graphNode struct {
	ref       meridian.EntityRef
	depth     int
	direction string // upstream, downstream or both
}

// compactGraph is a lineage graph shaped for a model: nodes by FQN with their depth,
// edges deduplicated and named by FQN.
type compactGraph struct {
	root  meridian.EntityRef
	nodes []graphNode
	byID  map[string]meridian.EntityRef
	up    []store.LineageEdge // upstream edges, deduplicated
	down  []store.LineageEdge // downstream edges not already upstream
}

func compact(l store.EntityLineage) *compactGraph {
	g := &compactGraph{root: l.Entity, byID: map[string]meridian.EntityRef{l.Entity.ID: l.Entity}}
	for _, n := range l.Nodes {
		g.byID[n.ID] = n
		u, isUp := l.UpstreamDepth[n.ID]
		d, isDown := l.DownstreamDepth[n.ID]
		gn := graphNode{ref: n, depth: u, direction: "upstream"}
		switch {
		case isUp && isDown:
			gn.direction = "both"
			if d < u {
				gn.depth = d
			}
		case isDown:
			gn.depth, gn.direction = d, "downstream"
		}
		g.nodes = append(g.nodes, gn)
	}
	sort.SliceStable(g.nodes, func(i, j int) bool {
		a, b := g.nodes[i], g.nodes[j]
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		if a.direction != b.direction {
			return a.direction > b.direction // upstream, then downstream, then both
		}
		return a.ref.FullyQualifiedName < b.ref.FullyQualifiedName
	})
	seen := map[[2]string]bool{}
	for _, list := range []struct {
		in  []store.LineageEdge
		out *[]store.LineageEdge
	}{{l.UpstreamEdges, &g.up}, {l.DownstreamEdges, &g.down}} {
		for _, e := range list.in {
			k := [2]string{e.FromEntity, e.ToEntity}
			if !seen[k] {
				seen[k] = true
				*list.out = append(*list.out, e)
			}
		}
	}
	return g
}

func nodeMap(n graphNode) map[string]any {
	m := map[string]any{"id": n.ref.ID, "fqn": n.ref.FullyQualifiedName, "name": n.ref.Name, "type": n.ref.Type,
		"depth": n.depth, "direction": n.direction}
	if n.ref.Deleted {
		m["deleted"] = true
	}
	return m
}

// edgeMap is an edge by FQN: hasSql when it carries SQL, the SQL itself (capped) with
// includeSql, the column mapping with includeColumns.
func (g *compactGraph) edgeMap(e store.LineageEdge, includeColumns, includeSQL bool) map[string]any {
	m := map[string]any{"fromEntity": g.byID[e.FromEntity].FullyQualifiedName, "toEntity": g.byID[e.ToEntity].FullyQualifiedName}
	if e.Description != "" {
		m["description"] = e.Description
	}
	d := e.LineageDetails
	if d == nil {
		return m
	}
	if d.SQLQuery != "" {
		m["hasSql"] = true
		if includeSQL {
			m["sqlQuery"] = d.SQLQuery
			TrimText(m, "sqlQuery", lineageSQLLimit)
		}
	}
	if d.Pipeline != nil {
		m["pipeline"] = d.Pipeline.FullyQualifiedName
	}
	if d.Source != "" {
		m["source"] = d.Source
	}
	if includeColumns && len(d.ColumnsLineage) > 0 {
		cols := make([]any, 0, len(d.ColumnsLineage))
		for _, c := range d.ColumnsLineage {
			cm := map[string]any{"fromColumns": c.FromColumns, "toColumn": c.ToColumn}
			if c.Function != "" {
				cm["function"] = c.Function
			}
			cols = append(cols, cm)
		}
		m["columnsLineage"] = cols
	}
	return m
}

func refSummary(r meridian.EntityRef) map[string]any {
	return map[string]any{"id": r.ID, "fqn": r.FullyQualifiedName, "name": r.Name, "type": r.Type}
}

func getEntityLineage(env *Env) *Tool {
	nodeSchema := OpenObject("A node of the graph.", Props{
		"id": String("Entity id."), "fqn": String("Fully qualified name."), "name": String("Name."), "type": String("Entity type."),
		"depth":     Integer("Distance from the entity (1 = adjacent)."),
		"direction": Enum("Where the node lies.", "upstream", "downstream", "both"),
		"deleted":   Boolean("Soft-deleted."),
	})
	edgeSchema := OpenObject("An edge, by FQN.", Props{
		"fromEntity": String("Upstream end (FQN)."), "toEntity": String("Downstream end (FQN)."),
		"hasSql":         Boolean("The edge carries the SQL that derives it (ask includeSql to see it)."),
		"sqlQuery":       String("The SQL, capped at 500 characters (includeSql)."),
		"columnsLineage": Array("Column mapping (includeColumnLineage).", OpenObject("", nil)),
		"pipeline":       String("FQN of the pipeline that moves the data."),
	})
	return &Tool{
		Name:  "get_entity_lineage",
		Title: "Get entity lineage",
		Description: "Read the lineage graph around an entity: what feeds it (upstream) and what it feeds (downstream), " +
			"as compact nodes (fqn, type, depth) and deduplicated edges by FQN. Depths default to 3 and go up to 10. " +
			"includeColumnLineage adds column mappings; includeSql adds each edge's SQL (capped at 500 characters). " +
			"Large graphs are paged within the result budget: follow nextCursor; each page lists its nodes and the edges " +
			"whose later end is on that page, so every node and edge comes exactly once.",
		Input: Object(Props{
			"entityType":           String("Entity type, e.g. table, dashboard, pipeline."),
			"fqn":                  String("Fully qualified name of the entity."),
			"upstreamDepth":        depthArg("upstream"),
			"downstreamDepth":      depthArg("downstream"),
			"includeColumnLineage": Boolean("Include column-level mappings on edges.").Default(false),
			"includeSql":           Boolean("Include each edge's SQL (capped at 500 characters).").Default(false),
			"includeDeleted":       Boolean("Also show soft-deleted entities.").Default(false),
			"cursor":               Cursor(),
		}, "entityType", "fqn"),
		Output: OpenObject("The lineage graph page.", pageProps(Props{
			"entity":          OpenObject("The entity.", Props{"id": String("Id."), "fqn": String("FQN."), "name": String("Name."), "type": String("Type.")}),
			"nodes":           Array("This page's nodes, nearest first.", nodeSchema),
			"upstreamEdges":   Array("Upstream edges of this page.", edgeSchema),
			"downstreamEdges": Array("Downstream edges of this page.", edgeSchema),
			"upstreamDepth":   Integer("Upstream depth walked."),
			"downstreamDepth": Integer("Downstream depth walked."),
			"totalEdges":      Integer("Edges in the whole graph."),
			"returnedEdges":   Integer("Edges in this page."),
		})),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			k, err := env.kind(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			offset, err := offsetOf(a, "")
			if err != nil {
				return nil, err
			}
			up, down := a.Int("upstreamDepth"), a.Int("downstreamDepth")
			l, err := env.lineage(ctx, p, k, a.String("fqn"), store.LineageOptions{Upstream: up, Downstream: down, IncludeDeleted: a.Bool("includeDeleted")})
			if err != nil {
				return nil, err
			}
			g := compact(l)
			out := map[string]any{"entity": refSummary(g.root), "upstreamDepth": up, "downstreamDepth": down,
				"totalEdges": len(g.up) + len(g.down)}
			cols, sql := a.Bool("includeColumnLineage"), a.Bool("includeSql")
			// Each edge goes with the page of its later end in node order (the entity is
			// before every node), so it comes once, after both its ends.
			pos := map[string]int{g.root.ID: -1}
			for i, n := range g.nodes {
				pos[n.ref.ID] = i
			}
			type placed struct {
				m  map[string]any
				up bool
			}
			byNode := make([][]placed, len(g.nodes))
			for _, list := range []struct {
				edges []store.LineageEdge
				up    bool
			}{{g.up, true}, {g.down, false}} {
				for _, e := range list.edges {
					at := pos[e.FromEntity]
					if pos[e.ToEntity] > at {
						at = pos[e.ToEntity]
					}
					if at < 0 {
						continue
					}
					byNode[at] = append(byNode[at], placed{g.edgeMap(e, cols, sql), list.up})
				}
			}
			room := env.Budget - jsonLen(out) - 1200
			nodes, upEdges, downEdges := []any{}, []any{}, []any{}
			used, n := 0, 0
			for i := offset; i < len(g.nodes); i++ {
				size := jsonLen(nodeMap(g.nodes[i])) + 1
				for _, pe := range byNode[i] {
					size += jsonLen(pe.m) + 1
				}
				if used+size > room && n > 0 {
					break
				}
				used += size
				n++
				nodes = append(nodes, nodeMap(g.nodes[i]))
				for _, pe := range byNode[i] {
					if pe.up {
						upEdges = append(upEdges, pe.m)
					} else {
						downEdges = append(downEdges, pe.m)
					}
				}
			}
			out["nodes"], out["upstreamEdges"], out["downstreamEdges"] = nodes, upEdges, downEdges
			out["returnedEdges"] = len(upEdges) + len(downEdges)
			setPage(out, offset, n, len(g.nodes))
			return out, nil
		},
	}
}

// lineage reads the graph around an entity named by FQN, with a search hint when it
// is missing.
func (e *Env) lineage(ctx context.Context, p *meridian.Principal, k *meridian.Kind, fqn string, o store.LineageOptions) (store.EntityLineage, error) {
	l, err := e.Entities.GetLineage(ctx, p, k.Name, store.ByFQN(strings.TrimSpace(fqn)), o)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return l, withHint(err, fmt.Sprintf("No %s has the fullyQualifiedName %q; use search_metadata with entityType %s to find the exact name", k.Name, fqn, k.Name))
	}
	return l, err
}

// endArg is the schema of create_lineage's fromEntity and toEntity.
func endArg(desc string) Schema {
	s := Object(Props{
		"type": String("Entity type, e.g. table, dashboard, pipeline."),
		"id":   String("Entity id (UUID); give id or fqn."),
		"fqn":  String("Fully qualified name; give id or fqn."),
	}, "type")
	s["description"] = desc
	return s
}

// lineageEnd resolves a create_lineage end to its entity.
func (e *Env) lineageEnd(ctx context.Context, p *meridian.Principal, name string, m map[string]any) (meridian.EntityRef, error) {
	typ, _ := m["type"].(string)
	id, _ := m["id"].(string)
	fqn, _ := m["fqn"].(string)
	if fqn == "" {
		fqn, _ = m["fullyQualifiedName"].(string)
	}
	if strings.TrimSpace(typ) == "" || (strings.TrimSpace(id) == "" && strings.TrimSpace(fqn) == "") {
		return meridian.EntityRef{}, withHint(meridian.Errorf(meridian.EInvalid, "Parameter '%s' is required and must include 'type' and 'id' or 'fqn'", name),
			fmt.Sprintf(`Pass %s as {"type": "table", "fqn": "svc.db.schema.orders"}`, name))
	}
	k, err := e.kind(typ)
	if err != nil {
		return meridian.EntityRef{}, err
	}
	var ent meridian.Entity
	if strings.TrimSpace(id) != "" {
		ent, err = e.Entities.Get(ctx, p, k.Name, store.ByID(strings.TrimSpace(id)), store.GetOptions{})
	} else {
		ent, err = e.get(ctx, p, k, fqn, "", store.IncludeNonDeleted)
	}
	if err != nil {
		return meridian.EntityRef{}, err
	}
	return meridian.EntityRef{ID: ent.ID(), Type: k.Name, Name: ent.Name(), FullyQualifiedName: ent.FQN()}, nil
}

// columnFQN turns a column argument into a column FQN: a plain name is taken as a
// column of the entity.
func columnFQN(entityFQN, col string) string {
	col = strings.TrimSpace(col)
	if strings.HasPrefix(col, entityFQN+".") {
		return col
	}
	return entityFQN + "." + meridian.QuoteName(col)
}

func createLineage(env *Env) *Tool {
	return &Tool{
		Name:  "create_lineage",
		Title: "Create lineage",
		Description: "Add a lineage edge: data flows from fromEntity (upstream) to toEntity (downstream). Name each end by " +
			"type and fqn (or id). Optional sqlQuery and columnsLineage describe how the downstream entity is derived; " +
			"columns may be given by name. Adding an existing edge replaces its details. Needs edit rights on both ends." + confirmFirst,
		Input: Object(Props{
			"fromEntity":  endArg("Upstream end."),
			"toEntity":    endArg("Downstream end."),
			"description": String("What the edge means."),
			"sqlQuery":    String("SQL that derives the downstream entity."),
			"columnsLineage": Array("Column mappings.", Object(Props{
				"fromColumns": Strings("Upstream columns (names or FQNs)."),
				"toColumn":    String("Downstream column (name or FQN)."),
				"function":    String("Transformation, e.g. identity, sum."),
			}, "toColumn")),
		}, "fromEntity", "toEntity"),
		Output: OpenObject("What was done.", Props{
			"result":     String("Outcome message."),
			"changeType": Enum("What the call did.", meridian.EventEntityLineageAdded, meridian.EventEntityLineageUpdated, meridian.EventEntityNoChange),
			"fromEntity": String("Upstream FQN."),
			"toEntity":   String("Downstream FQN."),
		}),
		Write: true, Destructive: true, Idempotent: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			from, err := env.lineageEnd(ctx, p, "fromEntity", a.Object("fromEntity"))
			if err != nil {
				return nil, err
			}
			to, err := env.lineageEnd(ctx, p, "toEntity", a.Object("toEntity"))
			if err != nil {
				return nil, err
			}
			in := store.AddLineage{Edge: store.EdgeInput{FromEntity: meridian.EntityRef{ID: from.ID, Type: from.Type},
				ToEntity: meridian.EntityRef{ID: to.ID, Type: to.Type}, Description: a.String("description")}}
			d := &store.LineageDetails{SQLQuery: a.String("sqlQuery"), Source: "Manual"}
			for i, c := range asList(a["columnsLineage"]) {
				m, _ := c.(map[string]any)
				fn, _ := m["function"].(string)
				cl := store.ColumnLineage{Function: fn}
				toCol, _ := m["toColumn"].(string)
				if strings.TrimSpace(toCol) == "" {
					return nil, withHint(meridian.Errorf(meridian.EInvalid, "columnsLineage[%d].toColumn is required", i),
						`Pass each mapping as {"fromColumns": ["id"], "toColumn": "order_id"}`)
				}
				cl.ToColumn = columnFQN(to.FullyQualifiedName, toCol)
				for _, f := range asList(m["fromColumns"]) {
					cl.FromColumns = append(cl.FromColumns, columnFQN(from.FullyQualifiedName, fmt.Sprint(f)))
				}
				d.ColumnsLineage = append(d.ColumnsLineage, cl)
			}
			in.Edge.LineageDetails = d
			change, err := env.Entities.AddLineage(ctx, p, in)
			if err != nil {
				if meridian.ErrorCode(err) == meridian.EInvalid && strings.Contains(meridian.ErrorMessage(err), "column") {
					return nil, withHint(err, "get_entity_details lists the columns of both ends")
				}
				return nil, err
			}
			result := map[string]string{
				meridian.EventEntityLineageAdded:   "Lineage Edge created successfully",
				meridian.EventEntityLineageUpdated: "Lineage Edge updated successfully",
				meridian.EventEntityNoChange:       "Lineage Edge already exists with these details; nothing changed",
			}[change]
			return map[string]any{"result": result, "changeType": change, "fromEntity": from.FullyQualifiedName,
				"toEntity": to.FullyQualifiedName}, nil
		},
	}
}

// failingTest is a failing test case as root_cause_analysis lists it.
func failingTest(t quality.TestCaseSummary) map[string]any {
	m := map[string]any{"name": t.Name, "fqn": t.FQN, "testCaseStatus": t.Status, "timestamp": t.Timestamp}
	if t.TestDefinition != "" {
		m["testDefinition"] = t.TestDefinition
	}
	if t.EntityLink != "" {
		m["entityLink"] = t.EntityLink
	}
	if r, ok := t.Result["result"].(string); ok && r != "" {
		m["result"] = r
		TrimText(m, "result", lineageSQLLimit)
	}
	if v, ok := t.Result["testResultValue"]; ok {
		m["testResultValue"] = v
	}
	return m
}

// failing returns the failing tests of a list, capped, and how many there are.
func failing(tests []quality.TestCaseSummary) ([]any, int) {
	out := []any{}
	n := 0
	for _, t := range tests {
		if t.Status != "Failed" {
			continue
		}
		n++
		if len(out) < failingTestsLimit {
			out = append(out, failingTest(t))
		}
	}
	return out, n
}

func rootCauseAnalysis(env *Env) *Tool {
	testSchema := OpenObject("A failing test case with its latest result.", Props{
		"name": String("Test case name."), "fqn": String("Test case FQN."), "testCaseStatus": String("Latest status (Failed)."),
		"result": String("Latest result message."), "timestamp": Integer("Latest result time (epoch ms)."),
		"testDefinition": String("Test definition name."),
	})
	nodeSchema := OpenObject("A node.", Props{"fqn": String("FQN."), "name": String("Name."), "type": String("Type."),
		"depth": Integer("Distance from the entity."), "failingTests": Array("Its failing tests (at most 10).", testSchema),
		"failingTestsCount": Integer("How many of its tests fail.")})
	return &Tool{
		Name:  "root_cause_analysis",
		Title: "Root cause analysis",
		Description: "Find the likely root cause of a data problem: walks the entity's upstream lineage and reports the " +
			"nodes whose data-quality tests fail (latest result Failed), with those results, and whether the entity's own " +
			"tests fail. When anything fails it also lists the downstream entities that may be affected. Lists are bounded " +
			"by the result budget (flags <list>Truncated and <list>Total); narrow the depths to see everything.",
		Input: Object(Props{
			"entityType":      String("Entity type, e.g. table."),
			"fqn":             String("Fully qualified name of the entity with the problem."),
			"upstreamDepth":   depthArg("upstream"),
			"downstreamDepth": depthArg("downstream"),
			"includeDeleted":  Boolean("Also walk through soft-deleted entities.").Default(false),
		}, "entityType", "fqn"),
		Output: OpenObject("The analysis.", Props{
			"entity":                        OpenObject("The entity.", Props{"fqn": String("FQN."), "type": String("Type.")}),
			"status":                        Enum("failed when the entity or an upstream node has failing tests.", "failed", "success"),
			"rootHasFailingTests":           Boolean("The entity's own tests fail."),
			"rootFailingTests":              Array("The entity's failing tests.", testSchema),
			"rootFailingTestsCount":         Integer("How many of the entity's tests fail."),
			"upstreamNodesChecked":          Integer("Upstream nodes whose tests were checked."),
			"failingUpstreamNodesCount":     Integer("Upstream nodes with failing tests."),
			"failingUpstreamNodes":          Array("Upstream nodes with failing tests, nearest first.", nodeSchema),
			"failingUpstreamNodesTruncated": Boolean("True when not every failing node fits the result."),
			"upstreamEdges":                 Array("Upstream edges, by FQN, hasSql flagged.", OpenObject("An edge.", Props{"fromEntity": String("FQN."), "toEntity": String("FQN."), "hasSql": Boolean("Carries SQL.")})),
			"upstreamEdgesTruncated":        Boolean("True when not every upstream edge fits the result."),
			"upstreamEdgesTotal":            Integer("Upstream edges in the graph."),
			"downstreamImpact":              OpenObject("Entities downstream that may be affected (when anything fails).", Props{"nodes": Array("Nodes, nearest first.", nodeSchema), "total": Integer("Downstream nodes."), "returned": Integer("Nodes listed."), "truncated": Boolean("True when not every node fits.")}),
		}),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			k, err := env.kind(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			l, err := env.lineage(ctx, p, k, a.String("fqn"), store.LineageOptions{Upstream: a.Int("upstreamDepth"),
				Downstream: a.Int("downstreamDepth"), IncludeDeleted: a.Bool("includeDeleted")})
			if err != nil {
				return nil, err
			}
			g := compact(l)
			ids := []string{g.root.ID}
			var upNodes, downNodes []graphNode
			for _, n := range g.nodes {
				if n.direction != "downstream" {
					upNodes = append(upNodes, n)
					ids = append(ids, n.ref.ID)
				}
				if n.direction != "upstream" {
					dn := n
					if d, ok := l.DownstreamDepth[n.ref.ID]; ok {
						dn.depth = d
					}
					downNodes = append(downNodes, dn)
				}
			}
			tests, err := quality.TestCasesOf(ctx, env.Entities, p, ids)
			if err != nil {
				return nil, err
			}
			rootFailing, rootCount := failing(tests[g.root.ID])
			var failingNodes []any
			for _, n := range upNodes {
				list, count := failing(tests[n.ref.ID])
				if count == 0 {
					continue
				}
				depth := l.UpstreamDepth[n.ref.ID]
				failingNodes = append(failingNodes, map[string]any{"id": n.ref.ID, "fqn": n.ref.FullyQualifiedName,
					"name": n.ref.Name, "type": n.ref.Type, "depth": depth, "failingTests": list, "failingTestsCount": count})
			}
			failed := rootCount > 0 || len(failingNodes) > 0
			out := map[string]any{"entity": refSummary(g.root), "rootHasFailingTests": rootCount > 0,
				"rootFailingTests": rootFailing, "rootFailingTestsCount": rootCount, "upstreamNodesChecked": len(upNodes),
				"failingUpstreamNodesCount": len(failingNodes), "status": "success"}
			if failed {
				out["status"] = "failed"
			}
			// Share the budget: failing nodes first, then upstream edges, then the impact.
			room := env.Budget - jsonLen(out) - 1500
			n := fitRows(failingNodes, room*6/10)
			out["failingUpstreamNodes"] = append([]any{}, failingNodes[:n]...)
			out["failingUpstreamNodesTruncated"] = n < len(failingNodes)
			room -= jsonLen(out["failingUpstreamNodes"])
			var edges []any
			for _, e := range g.up {
				edges = append(edges, g.edgeMap(e, false, false))
			}
			n = fitRows(edges, room/2)
			out["upstreamEdges"] = append([]any{}, edges[:n]...)
			out["upstreamEdgesTruncated"] = n < len(edges)
			out["upstreamEdgesTotal"] = len(edges)
			room -= jsonLen(out["upstreamEdges"])
			if failed {
				sort.SliceStable(downNodes, func(i, j int) bool { return downNodes[i].depth < downNodes[j].depth })
				rows := make([]any, 0, len(downNodes))
				for _, dn := range downNodes {
					rows = append(rows, map[string]any{"fqn": dn.ref.FullyQualifiedName, "name": dn.ref.Name, "type": dn.ref.Type, "depth": dn.depth})
				}
				n = fitRows(rows, room)
				out["downstreamImpact"] = map[string]any{"nodes": append([]any{}, rows[:n]...), "total": len(rows),
					"returned": n, "truncated": n < len(rows)}
			}
			return out, nil
		},
	}
}

// lineageSection is get_entity_details' include lineage: the entities one hop up and
// down, each list capped.
func lineageSection(ctx context.Context, env *Env, p *meridian.Principal, k *meridian.Kind, e meridian.Entity) (map[string]any, error) {
	l, err := env.Entities.GetLineage(ctx, p, k.Name, store.ByID(e.ID()), store.LineageOptions{Upstream: 1, Downstream: 1})
	if err != nil {
		return nil, err
	}
	g := compact(l)
	hasSQL := map[string]bool{}
	for _, list := range [][]store.LineageEdge{g.up, g.down} {
		for _, ed := range list {
			if ed.LineageDetails != nil && ed.LineageDetails.SQLQuery != "" {
				hasSQL[ed.FromEntity+">"+ed.ToEntity] = true
			}
		}
	}
	side := func(upstream bool) ([]any, int) {
		out := []any{}
		n := 0
		for _, node := range g.nodes {
			_, ok := l.DownstreamDepth[node.ref.ID]
			if upstream {
				_, ok = l.UpstreamDepth[node.ref.ID]
			}
			if !ok {
				continue
			}
			n++
			if len(out) >= sectionLimit {
				continue
			}
			m := map[string]any{"fqn": node.ref.FullyQualifiedName, "name": node.ref.Name, "type": node.ref.Type}
			key := e.ID() + ">" + node.ref.ID
			if upstream {
				key = node.ref.ID + ">" + e.ID()
			}
			if hasSQL[key] {
				m["hasSql"] = true
			}
			out = append(out, m)
		}
		return out, n
	}
	up, upN := side(true)
	down, downN := side(false)
	return map[string]any{"upstream": up, "upstreamCount": upN, "upstreamTruncated": len(up) < upN,
		"downstream": down, "downstreamCount": downN, "downstreamTruncated": len(down) < downN}, nil
}
