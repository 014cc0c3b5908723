package tools

import (
	"context"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
)

// The knowledge-graph tools: bounded SPARQL, an entity's neighbourhood, entities by
// tag or glossary term, and the ontology. They read the RDF projection (package graph)
// and work for every authenticated caller.

// graphHints are the fixes of the graph's stable error codes.
var graphHints = map[string]string{
	graph.CodeQueryInvalid:   "Fix the SPARQL syntax; the prefixes rdf, rdfs, xsd, owl, dct, dcat, prov, skos and mer are predeclared (ontology_describe lists them)",
	graph.CodeFormNotAllowed: "Only read queries run here: SELECT, ASK, CONSTRUCT or DESCRIBE, without SERVICE",
	graph.CodeGraphSelection: "Drop FROM, FROM NAMED and GRAPH: every query runs over the one catalog graph",
	graph.CodeLimitExceeded:  "Ask for at most 10000 rows (limit or LIMIT) and keep the query under 100000 characters",
	graph.CodeTimeout:        "Narrow the query: bind a subject or an object, put the most selective pattern first, add a LIMIT",
	graph.CodeWorkExceeded:   "Narrow the query: bind a subject or an object, put the most selective pattern first, avoid cartesian products",
	graph.CodeCapacity:       "Too many queries run at once; wait for yours to finish and retry",
	graph.CodeFormatInvalid:  "Use format json, csv or tsv for SELECT and ASK, turtle or json for CONSTRUCT and DESCRIBE",
	graph.CodeUnavailable:    "The knowledge graph is being built or its store does not answer; retry shortly",
}

// graphError attaches the hint of a graph error code.
func graphError(err error) error {
	if h, ok := graphHints[graph.GraphCode(err)]; ok {
		return withHint(err, h)
	}
	return err
}

// noGraph is the error of a graph tool on a catalog built without the graph.
func noGraph() error {
	return withHint(meridian.Errorf(meridian.EUnavailable, "The knowledge graph is not configured on this server"),
		"Use search_metadata and get_entity_lineage instead")
}

func sparqlQuery(env *Env) *Tool {
	return &Tool{
		Name:  "sparql_query",
		Title: "SPARQL query",
		Description: "Run a read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT or DESCRIBE) over the catalog's knowledge graph. " +
			"Entities have dct:identifier (fully qualified name), rdfs:label (name), dct:title, dct:description and " +
			"mer:entityType; tables are dcat:Dataset and mer:Table with mer:column nodes; lineage is prov:wasDerivedFrom from " +
			"downstream to upstream (prov:wasDerivedFrom+ for the closure); tags and glossary terms are skos:Concept with " +
			"skos:broader and skos:inScheme, applied by mer:tag; owners, domains and data products are mer:owners, " +
			"mer:domains, mer:dataProducts. Prefixes rdf rdfs xsd owl dct dcat prov skos mer are predeclared; " +
			"ontology_describe lists classes and properties. No update, SERVICE, FROM or GRAPH. At most limit rows " +
			"(default 1000, max 10000); completeness is TRUNCATED when rows were left out.",
		Input: Object(Props{
			"query":          String("The SPARQL query text (at most 100000 characters)."),
			"format":         Enum("Answer format: json (SPARQL results JSON, JSON-LD for CONSTRUCT/DESCRIBE), csv, tsv or turtle (CONSTRUCT/DESCRIBE).", "json", "csv", "tsv", "turtle").Default("json"),
			"limit":          Integer("Most rows (or triples) answered, 1 to 10000; default the query's LIMIT, else 1000.").Min(1).Max(graph.MaxRows),
			"timeoutSeconds": Integer("Time limit in seconds, 1 to 60 (default 30).").Min(1).Max(int(graph.MaxTimeout / time.Second)),
			"includeDeleted": Boolean("Admins only: include soft-deleted entities.").Default(false),
		}, "query"),
		Output: OpenObject("The answer.", Props{
			"form":         String("SELECT, ASK, CONSTRUCT or DESCRIBE."),
			"format":       String("The answer's format."),
			"completeness": Enum("COMPLETE, or TRUNCATED when rows were left out (row limit or result budget).", "COMPLETE", "TRUNCATED"),
			"count":        Integer("Rows or triples the query answered before the result budget."),
			"result":       String("The answer in the format (for json, the SPARQL results document)."),
		}),
		Aliases: map[string]string{"sparql": "query", "q": "query"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if env.Graph == nil {
				return nil, noGraph()
			}
			f, err := graph.ParseFormat(a.String("format"))
			if err != nil {
				return nil, graphError(err)
			}
			if !graphFormats[f] {
				return nil, graphError(graph.Errorf(graph.CodeFormatInvalid, "format %q is not one of json, csv, tsv, turtle", f))
			}
			res, err := env.Graph.Run(ctx, p, graph.Request{Query: a.String("query"), Limit: a.Int("limit"), Format: f,
				Timeout: time.Duration(a.Int("timeoutSeconds")) * time.Second, IncludeDeleted: a.Bool("includeDeleted")})
			if err != nil {
				return nil, graphError(err)
			}
			body, comp, err := encodeWithin(res, f, env.Budget-1000)
			if err != nil {
				return nil, graphError(err)
			}
			return map[string]any{"form": string(res.Form), "format": string(f), "completeness": string(comp),
				"count": len(res.Rows) + len(res.Triples), "result": body}, nil
		},
	}
}

// graphFormats are the formats sparql_query offers.
var graphFormats = map[graph.Format]bool{graph.FormatJSON: true, graph.FormatCSV: true, graph.FormatTSV: true, graph.FormatTurtle: true}

// encodeWithin encodes a result so that its text, as a JSON string, takes at most room
// characters: the byte cap shrinks until the escaped text fits, leaving whole rows out
// (TRUNCATED).
func encodeWithin(res *graph.Result, f graph.Format, room int) (string, graph.Completeness, error) {
	limit := room
	for {
		body, comp, err := graph.Encode(res, f, limit)
		if err != nil {
			return "", "", err
		}
		n := len(marshal(string(body)))
		if n <= room || limit < 64 {
			return string(body), comp, nil
		}
		limit = limit * room / n * 9 / 10
	}
}

func entityNeighborhood(env *Env) *Tool {
	return &Tool{
		Name:  "entity_neighborhood",
		Title: "Entity neighbourhood",
		Description: "The knowledge graph around one entity, as Turtle plus a summary of its edges: every triple within depth " +
			"hops (1 to 3, default 2), following edges both ways (lineage, columns, owners, tags, domains, …) but not " +
			"through rdf:type, at most limit triples (1 to 2000, default 200). Name the entity by entityType and fqn, or by iri.",
		Input: Object(Props{
			"entityType": String("The entity type, e.g. table, glossaryTerm."),
			"fqn":        String("The entity's fullyQualifiedName."),
			"iri":        String("Or the node's IRI, as other graph answers give it."),
			"depth":      Integer("Hops from the entity, 1 to 3.").Min(1).Max(graph.MaxDepth).Default(graph.DefaultDepth),
			"limit":      Integer("Most triples, 1 to 2000.").Min(1).Max(graph.MaxNeighbors).Default(graph.DefaultNeighbors),
		}),
		Output: OpenObject("The neighbourhood.", Props{
			"iri":          String("The entity's IRI."),
			"completeness": Enum("COMPLETE, or TRUNCATED when triples were left out (limit or result budget).", "COMPLETE", "TRUNCATED"),
			"triples":      Integer("Triples in turtle."),
			"nodes":        Integer("Nodes reached."),
			"edges":        Array("Triples per predicate, most frequent first.", OpenObject("", Props{"predicate": String(""), "count": Integer("")})),
			"turtle":       String("The triples in Turtle."),
		}),
		Aliases: map[string]string{"type": "entityType", "fullyQualifiedName": "fqn"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if env.Graph == nil {
				return nil, noGraph()
			}
			iri, err := env.Graph.Locate(ctx, p, a.String("entityType"), a.String("fqn"), a.String("iri"), false)
			if err != nil {
				return nil, graphError(err)
			}
			n, err := env.Graph.Neighborhood(ctx, p, iri, a.Int("depth"), a.Int("limit"), false)
			if err != nil {
				return nil, graphError(err)
			}
			body, comp, err := encodeWithin(&graph.Result{Form: graph.FormConstruct, Triples: n.Triples, Completeness: n.Completeness},
				graph.FormatTurtle, env.Budget/2)
			if err != nil {
				return nil, err
			}
			edges := make([]any, len(n.Edges))
			for i, e := range n.Edges {
				edges[i] = map[string]any{"predicate": e.Predicate, "count": e.Count}
			}
			return map[string]any{"iri": n.IRI, "depth": n.Depth, "completeness": string(comp), "triples": len(n.Triples),
				"nodes": n.Nodes, "nodesByDepth": n.ByDepth, "edges": edges, "turtle": body}, nil
		},
	}
}

func findByTag(env *Env) *Tool {
	return &Tool{
		Name:  "find_by_tag",
		Title: "Find by tag",
		Description: "Entities tagged with a tag or glossary term, or with any of its descendants (skos:broader*), directly or " +
			"through one of their columns; optionally only some entity types. Ordered by fullyQualifiedName and paged: " +
			"pass nextCursor back as cursor.",
		Input: Object(Props{
			"tag":         String("The fullyQualifiedName of the tag (PII.Sensitive) or glossary term (Glossary.Term)."),
			"entityTypes": Strings("Only these entity types, e.g. [\"table\", \"dashboard\"]."),
			"limit":       Integer("Entities per page, 1 to 500.").Min(1).Max(graph.MaxTagPage).Default(graph.DefaultTagPage),
			"cursor":      Cursor(),
		}, "tag"),
		Output: OpenObject("One page of tagged entities.", Props{
			"concept": String("The tag's or term's IRI."),
			"data": Array("Tagged entities.", OpenObject("", Props{
				"iri": String(""), "entityType": String(""), "fullyQualifiedName": String(""), "name": String(""),
			})),
			"returned":   Integer("Entities in this page."),
			"hasMore":    Boolean("True when more pages follow."),
			"nextCursor": String("Cursor of the next page; absent on the last."),
		}),
		Aliases: map[string]string{"tagFQN": "tag", "term": "tag", "glossaryTerm": "tag", "types": "entityTypes", "entityType": "entityTypes", "after": "cursor"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if env.Graph == nil {
				return nil, noGraph()
			}
			page, err := env.Graph.FindByTag(ctx, p, strings.TrimSpace(a.String("tag")), a.Strings("entityTypes"), a.Int("limit"),
				a.String("cursor"))
			if err != nil {
				return nil, graphError(err)
			}
			rows := make([]any, len(page.Entities))
			for i, e := range page.Entities {
				rows[i] = map[string]any{"iri": e.IRI, "entityType": e.EntityType, "fullyQualifiedName": e.FQN, "name": e.Name}
			}
			out := map[string]any{"concept": page.Concept, "data": rows, "returned": len(rows), "hasMore": page.After != ""}
			if page.After != "" {
				out["nextCursor"] = page.After
			}
			return out, nil
		},
	}
}

func ontologyDescribe(env *Env) *Tool {
	return &Tool{
		Name:  "ontology_describe",
		Title: "Describe the ontology",
		Description: "The knowledge graph's vocabulary: its classes and properties with labels, comments and instance " +
			"counts, and the prefixes sparql_query predeclares. Read it before writing a SPARQL query.",
		Input: Object(Props{}),
		Output: OpenObject("The ontology.", Props{
			"prefixes": OpenObject("Prefix to namespace.", nil),
			"classes": Array("Classes.", OpenObject("", Props{
				"iri": String(""), "label": String(""), "comment": String(""), "instances": Integer(""),
			})),
			"properties": Array("Properties.", OpenObject("", Props{
				"iri": String(""), "label": String(""), "comment": String(""), "triples": Integer(""),
			})),
		}),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if env.Graph == nil {
				return nil, noGraph()
			}
			info, err := env.Graph.DescribeOntology(ctx, p)
			if err != nil {
				return nil, graphError(err)
			}
			return info, nil
		},
	}
}
