package tools

import (
	"context"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/shapes"
)

func shaclValidate(env *Env) *Tool {
	return &Tool{
		Name:  "shacl_validate",
		Title: "SHACL validation",
		Description: "Validate the knowledge graph against SHACL shapes (Turtle given in shapes, or a stored shaclShape named by " +
			"shapeName). The focus is one entity (entityType and fqn, or iri), validated on its neighbourhood (depth 1 to 3, " +
			"default 2), or the instances of a class (class, e.g. mer:Table; at most limit of them, default 50, max 200). " +
			"Answers conforms and the results (focus node, path, severity, message) about the focus entities and their " +
			"columns. With wholeGraph true every instance of the shapes' sh:targetClass classes is validated in a durable " +
			"job and the job id is answered (GET /api/v1/jobs/{id} shows the result).",
		Input: Object(Props{
			"shapes":     String("A SHACL shapes graph in Turtle (at most 262144 characters)."),
			"shapeName":  String("Or the fully qualified name of a stored shaclShape."),
			"entityType": String("The focus entity's type, e.g. table."),
			"fqn":        String("The focus entity's fullyQualifiedName."),
			"iri":        String("Or the focus node's IRI."),
			"class":      String("Or a class whose instances are validated: an IRI or a prefixed name such as mer:Table."),
			"limit":      Integer("Most instances of class validated, 1 to 200.").Min(1).Max(shapes.MaxClassLimit).Default(shapes.DefaultClassLimit),
			"depth":      Integer("Neighbourhood depth around each focus entity, 1 to 3.").Min(1).Max(graph.MaxDepth).Default(shapes.DefaultDepth),
			"wholeGraph": Boolean("Validate every target of the shapes in a durable job and answer its id.").Default(false),
		}),
		Output: OpenObject("The validation report, or the job started.", Props{
			"conforms":     Boolean("True when no result was found."),
			"focusNodes":   Array("The focus entities validated.", String("")),
			"results":      Array("The results.", OpenObject("", Props{"focusNode": String(""), "path": String(""), "severity": String(""), "message": String("")})),
			"completeness": Enum("TRUNCATED when a neighbourhood, the class's instances or the results were cut at their bound.", "COMPLETE", "TRUNCATED"),
			"checked":      Integer("Focus entities validated."),
			"jobId":        String("With wholeGraph: the durable job's id."),
		}),
		Aliases: map[string]string{"type": "entityType", "fullyQualifiedName": "fqn", "shape": "shapeName", "shapesTurtle": "shapes"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			if env.Graph == nil || env.Shapes == nil {
				return nil, noGraph()
			}
			req := shapes.Request{Shapes: a.String("shapes"), ShapeName: a.String("shapeName"), EntityType: a.String("entityType"),
				FQN: a.String("fqn"), IRI: a.String("iri"), Class: a.String("class"), Limit: a.Int("limit"), Depth: a.Int("depth")}
			if a.Bool("wholeGraph") {
				id, err := env.Shapes.StartWholeGraph(ctx, p, req)
				if err != nil {
					return nil, graphError(err)
				}
				return map[string]any{"jobId": id, "status": "pending"}, nil
			}
			rep, err := env.Shapes.Validate(ctx, p, req)
			if err != nil {
				return nil, graphError(err)
			}
			return rep, nil
		},
	}
}
