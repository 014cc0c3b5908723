package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// Semantic discovery: retrieval by meaning. semantic_search is the vector side of the
// typed search service; search_company_context, find_context and nlq_search retrieve
// hybrid (keyword plus vector, fused; see search.Engine), so a natural question finds
// the asset whose words it does not share. Every answer is what the calling principal
// may see, within the result budget, paged by an opaque cursor.

const (
	// semanticDefaultSize and semanticMaxSize bound a page of the semantic tools.
	semanticDefaultSize = 10
	semanticMaxSize     = 50
	// hitPassageChars is the longest matched passage a hit carries.
	hitPassageChars = 300
	// nlqCandidates is how many hybrid candidates nlq_search filters by the conditions
	// the search service cannot test (owners, domains, description, time).
	nlqCandidates = 200
)

// semanticFilterKeys are the keys of semantic_search's filters, with the field each
// filters on.
var semanticFilterKeys = map[string]search.Field{
	"entityType": search.FieldEntityType,
	"service":    search.FieldService,
	"tags":       search.FieldTags,
}

// companyKinds are the kinds of the organisation's knowledge, as search_company_context
// searches them: knowledge articles, context memories, glossary terms, metrics,
// domains and data products.
var companyKinds = append(append([]string{}, knowledgeTypes...), kindDomain, kindDataProduct)

// semanticHitSchema is the output schema of one semantic hit.
func semanticHitSchema() Schema {
	return OpenObject("One matching entity, best first.", Props{
		"id":                   String("Entity id."),
		"name":                 String("Entity name."),
		"displayName":          String("Display name."),
		"fullyQualifiedName":   String("Fully qualified name; pass it as fqn to get_entity_details or get_asset_context."),
		"entityType":           String("Entity type."),
		"description":          String("Description, trimmed past 500 characters."),
		"descriptionTruncated": Boolean("True when description was shortened."),
		"service":              String("Name of the entity's service."),
		"owners":               Strings("Owner names."),
		"tags":                 Strings("Tag and glossary term FQNs."),
		"deleted":              Boolean("Soft-deleted."),
		"score":                Number("Relevance: cosine similarity (semantic_search) or the fused score; higher is better."),
		"passage":              String("The passage of the entity's indexed text that matched best."),
		"passageTruncated":     Boolean("True when passage was shortened."),
	})
}

// semanticRow is a hit as the semantic tools answer it: hitOf plus the passage.
func semanticRow(h search.Hit) map[string]any {
	row := hitOf(h, nil)
	if p := strings.TrimSpace(h.Passage); p != "" {
		row["passage"] = p
		TrimText(row, "passage", hitPassageChars)
	}
	return row
}

// semanticQuery checks the query argument: required, at most search.MaxQueryLength
// characters. It returns the text trimmed.
func semanticQuery(a Args) (string, error) {
	q := strings.TrimSpace(a.String("query"))
	if q == "" {
		return "", withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'query' is required"),
			"Ask in plain words, e.g. \"which table has customer orders?\"")
	}
	if len([]rune(q)) > search.MaxQueryLength {
		return "", withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'query' is longer than the maximum of %d characters", search.MaxQueryLength),
			"Ask a shorter question")
	}
	return q, nil
}

// retrieve runs a question over kinds: hybrid retrieval of text ("*" lists every match
// by keyword instead), with the K best of each side covering the page asked.
func (e *Env) retrieve(ctx context.Context, p *meridian.Principal, text string, kinds []string, filters []search.Filter, from, size int) (search.Result, error) {
	q := search.Query{Mode: search.Hybrid, Text: text, Kinds: kinds, Filters: filters, From: from, Size: size,
		K: min(max(search.DefaultK, from+size), search.MaxK)}
	if text == "*" {
		q.Mode, q.Text, q.K = search.Keyword, "", 0
	} else if words := search.Words(text); len(words) > search.MaxTerms {
		q.Terms = words[:search.MaxTerms] // the keyword side's words; the vector side reads all of Text
	}
	res, err := e.Search.Search(ctx, p, q)
	return res, semanticHint(err)
}

// semanticHint adds a hint to the search service's errors.
func semanticHint(err error) error {
	if err == nil || hintOf(err) != "" {
		return err
	}
	if msg := meridian.ErrorMessage(err); strings.Contains(msg, "not available") {
		return withHint(err, "This server has no embedder for semantic search; use search_metadata (keyword search)")
	}
	return searchHint(err)
}

// existingKinds keeps the kinds of names the registry holds, in order, without repeats.
func (e *Env) existingKinds(names ...[]string) []string {
	var out []string
	for _, list := range names {
		for _, n := range list {
			if _, ok := e.Registry().Kind(n); ok && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// fitPage fits rows into the budget beside out and records the page on out under
// name: the rows returned, returnedCount and the paging contract.
func (e *Env) fitPage(out map[string]any, name string, rows []any, offset, total int) map[string]any {
	Trim(rows)
	n := fitRows(rows, e.Budget-jsonLen(out)-400)
	out[name] = rows[:n]
	out["returnedCount"] = n
	setPage(out, offset, n, total)
	return out
}

// pageArgs reads the cursor (or from) and size of a semantic tool.
func pageArgs(a Args, sizeArg string) (offset, size int, err error) {
	if offset, err = offsetOf(a, "from"); err != nil {
		return 0, 0, err
	}
	size = a.Int(sizeArg)
	if offset+size > search.MaxK {
		return 0, 0, withHint(meridian.Errorf(meridian.EInvalid, "Cannot page past the %d best matches", search.MaxK),
			"Ask a more precise question instead of paging this deep")
	}
	return offset, size, nil
}

// ----------------------------------------------------------------------------------
// semantic_search

func semanticSearch(env *Env) *Tool {
	return &Tool{
		Name:  "semantic_search",
		Title: "Semantic search",
		Description: "Search the catalog by meaning: the question is embedded and compared with every data asset's " +
			"indexed text (name, description, columns, tags, owners, domain, service), so \"tables about customer " +
			"purchases\" finds order_transactions although no word matches. Each hit has its similarity score (0–1) " +
			"and the passage that matched. Narrow with filters (entityType, service, tags: arrays of values) and " +
			"threshold; k is how many nearest entities are considered. Use search_metadata for exact keywords.",
		Input: Object(Props{
			"query": String("The question or description, in plain words."),
			"filters": Object(Props{
				"entityType": Strings("Entity types to search, e.g. [\"table\", \"dashboard\"] (default: every data asset)."),
				"service":    Strings("Service names."),
				"tags":       Strings("Tag or glossary term FQNs, e.g. [\"PII.Sensitive\"]."),
			}),
			"size":      Integer("Hits per page (1–50; larger values are clamped).").Min(1).Max(semanticMaxSize).Default(semanticDefaultSize),
			"k":         Integer("Nearest entities considered before the threshold and paging (1–1000).").Min(1).Max(search.MaxK).Default(search.DefaultK),
			"threshold": Number("Lowest similarity kept, 0.0 to 1.0.").Min(0).Default(0.0),
			"from":      Integer("Offset of the first hit.").Min(0).Default(0),
			"cursor":    Cursor(),
		}, "query"),
		Output: Object(pageProps(Props{
			"query":         String("The query as run."),
			"results":       Array("The hits of this page, most similar first.", semanticHitSchema()),
			"totalFound":    Integer("Hits among the k nearest that reach the threshold."),
			"returnedCount": Integer("Hits in this result."),
		})),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			text, err := semanticQuery(a)
			if err != nil {
				return nil, err
			}
			th := 0.0
			if v, ok := a["threshold"].(float64); ok {
				th = v
			}
			if th < 0 || th > 1 {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'threshold' must be between 0.0 and 1.0, got %v", th),
					"Pass a similarity between 0.0 (keep every hit) and 1.0, e.g. 0.3")
			}
			kinds, filters, err := env.semanticFilters(a.Object("filters"))
			if err != nil {
				return nil, err
			}
			offset, size, err := pageArgs(a, "size")
			if err != nil {
				return nil, err
			}
			res, err := env.Search.Search(ctx, p, search.Query{Mode: search.Vector, Text: text, K: a.Int("k"), Threshold: th,
				Kinds: kinds, Filters: filters, From: offset, Size: size})
			if err != nil {
				return nil, semanticHint(err)
			}
			rows := make([]any, 0, len(res.Hits))
			for _, h := range res.Hits {
				rows = append(rows, semanticRow(h))
			}
			return env.fitPage(map[string]any{"query": text, "totalFound": res.Total}, "results", rows, offset, res.Total), nil
		},
	}
}

// semanticFilters reads semantic_search's filters: the kinds (every data asset unless
// entityType names some) and the term filters. An unknown key is EInvalid naming the
// known ones.
func (e *Env) semanticFilters(m map[string]any) ([]string, []search.Filter, error) {
	known := make([]string, 0, len(semanticFilterKeys))
	for k := range semanticFilterKeys {
		known = append(known, k)
	}
	sort.Strings(known)
	var kinds []string
	var filters []search.Filter
	for _, key := range sortedKeys(m) {
		field, ok := semanticFilterKeys[key]
		if !ok {
			return nil, nil, withHint(meridian.Errorf(meridian.EInvalid, "Unknown filter '%s' (known filters: %s)", key, strings.Join(known, ", ")),
				unknownHint(key, known))
		}
		v, err := coerce("filters."+key, m[key], Strings(""))
		if err != nil {
			return nil, nil, err
		}
		var values []string
		for _, x := range v.([]any) {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				values = append(values, strings.TrimSpace(s))
			}
		}
		if len(values) == 0 {
			continue
		}
		if field != search.FieldEntityType {
			filters = append(filters, search.Filter{Field: field, Values: values})
			continue
		}
		for _, t := range values {
			k, err := e.kind(t)
			if err != nil {
				return nil, nil, err
			}
			kinds = append(kinds, k.Name)
		}
	}
	if kinds == nil {
		var err error
		if kinds, err = search.Kinds(e.Registry(), "dataAsset"); err != nil {
			return nil, nil, err
		}
	}
	return kinds, filters, nil
}

// ----------------------------------------------------------------------------------
// search_company_context

func searchCompanyContext(env *Env) *Tool {
	return &Tool{
		Name:  "search_company_context",
		Title: "Search company context",
		Description: "Search the organisation's knowledge by meaning and keywords: knowledge articles, context memories " +
			"(remembered questions and answers), glossary terms, metrics, domains and data products. Use it to learn " +
			"what the company means by a term, how a metric is defined or what the team already knows, before " +
			"answering. Each hit has the passage that matched; get_knowledge_content reads one whole. Page with nextCursor.",
		Input: Object(Props{
			"query":  String("The question or terms, in plain words; \"*\" lists all the knowledge."),
			"size":   Integer("Hits per page (1–50; larger values are clamped).").Min(1).Max(semanticMaxSize).Default(semanticDefaultSize),
			"cursor": Cursor(),
		}, "query"),
		Output: Object(pageProps(Props{
			"query":         String("The query as run."),
			"entityTypes":   Strings("The entity types searched."),
			"results":       Array("The hits of this page, best first.", semanticHitSchema()),
			"totalFound":    Integer("Matches found."),
			"returnedCount": Integer("Hits in this result."),
		})),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			text, err := semanticQuery(a)
			if err != nil {
				return nil, err
			}
			offset, size, err := pageArgs(a, "size")
			if err != nil {
				return nil, err
			}
			kinds := env.existingKinds(companyKinds)
			res, err := env.retrieve(ctx, p, text, kinds, nil, offset, size)
			if err != nil {
				return nil, err
			}
			rows := make([]any, 0, len(res.Hits))
			for _, h := range res.Hits {
				rows = append(rows, semanticRow(h))
			}
			out := map[string]any{"query": text, "entityTypes": kinds, "totalFound": res.Total}
			return env.fitPage(out, "results", rows, offset, res.Total), nil
		},
	}
}

// ----------------------------------------------------------------------------------
// find_context

func findContext(env *Env) *Tool {
	item := OpenObject("One relevant asset or piece of knowledge.", Props{
		"entityType":           String("Entity type."),
		"fullyQualifiedName":   String("Fully qualified name; pass it to get_asset_context."),
		"name":                 String("Name."),
		"displayName":          String("Display name."),
		"description":          String("Description, cut at 200 characters."),
		"descriptionTruncated": Boolean("True when description was cut."),
		"tier":                 String("Tier tag FQN."),
		"owners":               Strings("Owner names."),
		"tags":                 Strings("Tag and glossary term FQNs."),
		"score":                Number("Fused relevance; higher is better."),
		"matched":              String("Why it matched: the passage of its text closest to the question."),
		"matchedTruncated":     Boolean("True when matched was cut."),
	})
	return &Tool{
		Name:  "find_context",
		Title: "Find context",
		Description: "The data assets and knowledge most relevant to a question, as an assistant wants them in its " +
			"context: name, type, FQN, a description excerpt, owners, tags and why each matched. Searches tables, " +
			"dashboards, pipelines and every data asset together with glossary terms, metrics, knowledge articles, " +
			"context memories, domains and data products, by meaning and keywords. Markdown (default) is ready to put " +
			"in a prompt; json gives the same items as objects. Follow up with get_asset_context.",
		Input: Object(Props{
			"query":  String("The question, in plain words, e.g. \"how do we measure monthly churn?\""),
			"size":   Integer("Items (1–50; larger values are clamped).").Min(1).Max(semanticMaxSize).Default(semanticDefaultSize),
			"format": formatArg(),
			"cursor": Cursor(),
		}, "query"),
		Output: Object(pageProps(Props{
			"query":         String("The question."),
			"format":        Enum("The format of the answer.", "markdown", "json"),
			"markdown":      String("The context as markdown (format markdown)."),
			"results":       Array("The items, most relevant first (format json).", item),
			"totalFound":    Integer("Matches found."),
			"returnedCount": Integer("Items in this result."),
		})),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			text, err := semanticQuery(a)
			if err != nil {
				return nil, err
			}
			offset, size, err := pageArgs(a, "size")
			if err != nil {
				return nil, err
			}
			assets, err := search.Kinds(env.Registry(), "dataAsset")
			if err != nil {
				return nil, err
			}
			res, err := env.retrieve(ctx, p, text, env.existingKinds(assets, companyKinds), nil, offset, size)
			if err != nil {
				return nil, err
			}
			format := a.String("format")
			out := map[string]any{"query": text, "format": format, "totalFound": res.Total}
			rows := make([]any, 0, len(res.Hits))
			for _, h := range res.Hits {
				rows = append(rows, contextItem(h))
			}
			if format == "json" {
				return env.fitPage(out, "results", rows, offset, res.Total), nil
			}
			blocks := make([]any, len(rows))
			for i, r := range rows {
				blocks[i] = contextMarkdown(offset+i+1, r.(map[string]any))
			}
			header := fmt.Sprintf("# Context for: %s\n\n", text)
			if len(blocks) == 0 {
				header += "Nothing in the catalog matches this question. Try other words, or search_metadata with keywords.\n"
			}
			out["markdown"] = header
			n := fitRows(blocks, env.Budget-jsonLen(out)-400)
			var md strings.Builder
			md.WriteString(header)
			for _, b := range blocks[:n] {
				md.WriteString(b.(string))
			}
			if offset+n < res.Total {
				fmt.Fprintf(&md, "\n_%d more: call find_context again with the cursor._\n", res.Total-offset-n)
			}
			out["markdown"] = md.String()
			out["returnedCount"] = n
			setPage(out, offset, n, res.Total)
			return out, nil
		},
	}
}

// contextItem is one find_context item: the summary of the hit's document, its tags,
// score and matched passage.
func contextItem(h search.Hit) map[string]any {
	var src map[string]any
	_ = json.Unmarshal(h.Source, &src)
	if src == nil {
		src = map[string]any{"fullyQualifiedName": h.FQN}
	}
	m := summary(h.Kind, src)
	tags := []any{}
	for _, t := range asList(src["tags"]) {
		if f, ok := t.(map[string]any)["tagFQN"].(string); ok {
			tags = append(tags, f)
		}
	}
	if len(tags) > 0 {
		m["tags"] = tags
	}
	m["score"] = math.Round(h.Score*10000) / 10000
	if p := strings.TrimSpace(h.Passage); p != "" {
		m["matched"] = p
		TrimText(m, "matched", hitPassageChars)
	}
	return m
}

// contextMarkdown renders item number i of find_context as a markdown block.
func contextMarkdown(i int, m map[string]any) string {
	var b strings.Builder
	name, _ := m["displayName"].(string)
	if name == "" {
		name, _ = m["name"].(string)
	}
	fmt.Fprintf(&b, "%d. **%s** (%v) `%v`\n", i, name, m["entityType"], m["fullyQualifiedName"])
	if d, ok := m["description"].(string); ok {
		fmt.Fprintf(&b, "   %s\n", strings.Join(strings.Fields(d), " "))
	}
	var facts []string
	if t, ok := m["tier"].(string); ok {
		facts = append(facts, "tier "+t)
	}
	for _, f := range []string{"owners", "tags"} {
		if l := asList(m[f]); len(l) > 0 {
			facts = append(facts, fmt.Sprintf("%s: %s", f, joinAny(l)))
		}
	}
	if len(facts) > 0 {
		fmt.Fprintf(&b, "   - %s\n", strings.Join(facts, "; "))
	}
	if w, ok := m["matched"].(string); ok {
		fmt.Fprintf(&b, "   - matched: \"%s\"\n", strings.Join(strings.Fields(w), " "))
	}
	return b.String()
}

func joinAny(l []any) string {
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ", ")
}
