package tools

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

// Knowledge: glossaries and their terms.

func createGlossary(env *Env) *Tool {
	return &Tool{
		Name:  "create_glossary",
		Title: "Create glossary",
		Description: "Create a business glossary, or update the glossary with this name. With reviewers, new terms " +
			"start in Draft and wait for approval." + confirmFirst,
		Input: Object(Props{
			"name":              String("Glossary name, e.g. BusinessTerms."),
			"description":       String("Markdown description."),
			"displayName":       String("Display name."),
			"mutuallyExclusive": Boolean("Only one term of this glossary per entity.").Default(false),
			"owners":            Strings("User or team names of the owners."),
			"reviewers":         Strings("User names (or one team name) of the reviewers."),
		}, "name", "description"),
		Output: writeOutput("glossary"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": a.String("name"), "description": a.String("description"),
				"mutuallyExclusive": a.Bool("mutuallyExclusive")}
			setIf(body, "displayName", a, "displayName")
			for _, f := range []string{"owners", "reviewers"} {
				if l := a.Strings(f); len(l) > 0 {
					body[f] = principalNames(l)
				}
			}
			res, err := env.Entities.CreateOrUpdate(ctx, p, "glossary", body)
			if err != nil {
				return nil, err
			}
			return written("glossary", res), nil
		},
	}
}

func createGlossaryTerm(env *Env) *Tool {
	return &Tool{
		Name:  "create_glossary_term",
		Title: "Create glossary term",
		Description: "Create a term in a glossary, or under a parent term (parentTerm: \"Glossary.Parent\"). A term " +
			"with reviewers, or in a glossary with reviewers, starts in Draft; otherwise Approved." + confirmFirst,
		Input: Object(Props{
			"glossary":    String("Name (FQN) of the glossary."),
			"name":        String("Term name, e.g. Revenue."),
			"description": String("Markdown definition of the term."),
			"displayName": String("Display name."),
			"parentTerm":  String("FQN of the parent term, e.g. BusinessTerms.Finance, for a nested term."),
			"synonyms":    Strings("Other names of the term."),
			"owners":      Strings("User or team names of the owners."),
			"reviewers":   Strings("User names (or one team name) of the reviewers."),
			"extension":   OpenObject("Custom property values.", Props{}),
		}, "glossary", "name", "description"),
		Output: writeOutput("glossaryTerm"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": a.String("name"), "description": a.String("description"),
				"glossary": a.String("glossary")}
			setIf(body, "displayName", a, "displayName")
			setIf(body, "parent", a, "parentTerm")
			if l := a.Strings("synonyms"); len(l) > 0 {
				body["synonyms"] = fqnList(l)
			}
			for _, f := range []string{"owners", "reviewers"} {
				if l := a.Strings(f); len(l) > 0 {
					body[f] = principalNames(l)
				}
			}
			if ext := a.Object("extension"); ext != nil {
				body["extension"] = ext
			}
			res, err := env.Entities.Create(ctx, p, "glossaryTerm", body)
			if err != nil {
				return nil, err
			}
			return written("glossaryTerm", res), nil
		},
	}
}
