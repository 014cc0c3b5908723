package tools

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

// Metrics: business metrics.

// Metric enums, OpenMetadata's (metric.json), with unitOfMeasurement OTHER.
var (
	metricTypes = []string{"COUNT", "SUM", "AVERAGE", "RATIO", "PERCENTAGE", "MIN", "MAX", "MEDIAN", "MODE",
		"STANDARD_DEVIATION", "VARIANCE", "OTHER"}
	metricUnits = []string{"COUNT", "DOLLARS", "PERCENTAGE", "TIMESTAMP", "SIZE", "REQUESTS", "EVENTS",
		"TRANSACTIONS", "OTHER"}
	metricGranularities = []string{"SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}
	metricLanguages     = []string{"SQL", "Java", "JavaScript", "Python", "External"}
)

func createMetric(env *Env) *Tool {
	return &Tool{
		Name:  "create_metric",
		Title: "Create metric",
		Description: "Create a business metric with its expression (language and code), e.g. SQL " +
			"\"SUM(amount)\". unitOfMeasurement OTHER needs customUnitOfMeasurement." + confirmFirst,
		Input: Object(Props{
			"name":                     String("Metric name (no \"::\")."),
			"metricExpressionLanguage": Enum("Language of the expression.", metricLanguages...),
			"metricExpressionCode":     String("The expression, e.g. SUM(amount)."),
			"description":              String("Markdown description."),
			"displayName":              String("Display name."),
			"metricType":               Enum("What the metric computes.", metricTypes...),
			"unitOfMeasurement":        Enum("Unit of the metric's values.", metricUnits...),
			"customUnitOfMeasurement":  String("Unit name, required when unitOfMeasurement is OTHER."),
			"granularity":              Enum("Time granularity.", metricGranularities...),
			"owners":                   Strings("User or team names of the owners."),
			"reviewers":                Strings("User or team names of the reviewers."),
			"relatedMetrics":           Strings("FQNs of related metrics."),
			"tags":                     Strings("Tag or glossary term FQNs."),
			"domains":                  Strings("Domain FQNs."),
		}, "name", "metricExpressionLanguage", "metricExpressionCode"),
		Output: writeOutput("metric"),
		Write:  true, Destructive: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": a.String("name"), "metricExpression": map[string]any{
				"language": a.String("metricExpressionLanguage"), "code": a.String("metricExpressionCode")}}
			for _, f := range []string{"description", "displayName", "metricType", "unitOfMeasurement",
				"customUnitOfMeasurement", "granularity"} {
				setIf(body, f, a, f)
			}
			for _, f := range []string{"owners", "reviewers"} {
				if l := a.Strings(f); len(l) > 0 {
					body[f] = principalNames(l)
				}
			}
			if l := a.Strings("domains"); len(l) > 0 {
				body["domains"] = fqnList(l)
			}
			if l := a.Strings("relatedMetrics"); len(l) > 0 {
				refs, err := env.entityRefs(ctx, p, "relatedMetrics", "metric", l)
				if err != nil {
					return nil, err
				}
				body["relatedMetrics"] = refs
			}
			if l := a.Strings("tags"); len(l) > 0 {
				labels, err := env.tagLabels(ctx, p, l)
				if err != nil {
					return nil, err
				}
				body["tags"] = labels
			}
			res, err := env.Entities.Create(ctx, p, "metric", body)
			if err != nil {
				return nil, err
			}
			return written("metric", res), nil
		},
	}
}
