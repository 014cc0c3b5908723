package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// Context: what an assistant wants in its context about the organisation's catalog, one
// asset, a persona or a user. Every answer is built from the engine's reads (Get, List,
// lineage, test cases) and the typed search service, as the calling principal may see
// them, and fits the result budget: lists carry total, returned and truncated, and the
// long ones page with a cursor (get_persona_context with part).

const (
	// contextDefaultLimit and contextMaxLimit bound the items of each list of the
	// context tools.
	contextDefaultLimit = 10
	contextMaxLimit     = 50
	// userDefaultLimit and userMaxLimit bound get_user_context's lists.
	userDefaultLimit = 20
	userMaxLimit     = 100
	// summaryDescription is the longest description of an item of a context list.
	summaryDescription = 200
	// markdownDescription is the longest description get_asset_context writes in
	// markdown.
	markdownDescription = 4000
	// nearestNodes is the number of nearest lineage nodes listed per direction.
	nearestNodes = 5
	// relatedTermsLimit bounds the glossary terms read for related knowledge.
	relatedTermsLimit = 10
	// scanPage is the page size of the bounded scans over search results.
	scanPage = 1000
	// personaUsersLimit bounds the users of a persona whose ownership is read; it stays
	// within search.MaxFilterValues.
	personaUsersLimit = 50
	// personaAssetsLimit bounds the assets and domains listed for a persona.
	personaAssetsLimit = 500
	// followsLimit bounds the follow relations get_user_context reads.
	followsLimit = 10000
)

// Kind names the context tools read by name. A missing kind degrades its section; a
// missing persona kind is a 404 with a hint.
const (
	kindDomain       = "domain"
	kindDataProduct  = "dataProduct"
	kindMetric       = "metric"
	kindDataContract = "dataContract"
	kindPersona      = "persona"
)

// Tier and certification tags are those of the classifications OpenMetadata names Tier
// and Certification.
const (
	tierClassification          = "Tier"
	certificationClassification = "Certification"
)

// Gap filters of get_user_context.
const (
	gapNone               = "NONE"
	gapMissingDescription = "MISSING_DESCRIPTION"
	gapMissingTier        = "MISSING_TIER"
	gapAny                = "ANY_GAP"
)

// formatArg is the schema of the format argument.
func formatArg() Schema {
	return Enum("Answer as markdown (default), ready to put in a prompt, or as json.", "markdown", "json").Default("markdown")
}

// summarySchema is the output schema of one item of a context list.
func summarySchema(desc string) Schema {
	return OpenObject(desc, Props{
		"entityType":           String("Entity type."),
		"fullyQualifiedName":   String("Fully qualified name; pass it to get_asset_context or get_entity_details."),
		"name":                 String("Name."),
		"displayName":          String("Display name."),
		"description":          String("Description, cut at 200 characters."),
		"descriptionTruncated": Boolean("True when description was cut."),
		"tier":                 String("Tier tag FQN, e.g. Tier.Tier1."),
		"owners":               Strings("Owner names."),
	})
}

// sectionSchema is the output schema of a bounded list section.
func sectionSchema(desc string, item Schema) Schema {
	return OpenObject(desc, Props{
		"items":     Array("The items listed.", item),
		"total":     Integer("How many there are in all."),
		"returned":  Integer("Items listed."),
		"truncated": Boolean("True when not every item is listed; the hint says how to read the rest."),
		"hint":      String("How to read the items not listed."),
	})
}

// summary is an entity's short form in a context list: type, FQN, names, a short
// description, its tier and its owners' names.
func summary(kind string, e map[string]any) map[string]any {
	m := map[string]any{"entityType": kind}
	for _, f := range []string{"fullyQualifiedName", "name", "displayName", "description"} {
		if s, ok := e[f].(string); ok && s != "" {
			m[f] = s
		}
	}
	TrimText(m, "description", summaryDescription)
	if t := tierOf(e["tags"]); t != "" {
		m["tier"] = t
	}
	if owners := refNames(e["owners"]); len(owners) > 0 {
		m["owners"] = owners
	}
	return m
}

// hitSummary is summary for a search hit, from its indexed document.
func hitSummary(h search.Hit) map[string]any {
	var src map[string]any
	_ = json.Unmarshal(h.Source, &src)
	if src == nil {
		src = map[string]any{"fullyQualifiedName": h.FQN}
	}
	return summary(h.Kind, src)
}

// classificationOf returns the classification part of a tag FQN.
func classificationOf(tagFQN string) string {
	c, _, _ := strings.Cut(tagFQN, ".")
	return strings.Trim(c, `"`)
}

// tierOf returns the FQN of the first Tier tag among tag labels, or "".
func tierOf(tags any) string {
	for _, t := range asList(tags) {
		m, _ := t.(map[string]any)
		f, _ := m["tagFQN"].(string)
		if strings.EqualFold(classificationOf(f), tierClassification) {
			return f
		}
	}
	return ""
}

// refNames returns the names of a list of entity references.
func refNames(v any) []any {
	out := []any{}
	for _, r := range asList(v) {
		m, _ := r.(map[string]any)
		if n, ok := m["name"].(string); ok && n != "" {
			out = append(out, n)
		}
	}
	return out
}

// refList keeps the type, name, FQN and display name of a list of entity references.
func refList(v any) []any {
	out := []any{}
	for _, r := range asList(v) {
		m, _ := r.(map[string]any)
		if m == nil {
			continue
		}
		ref := map[string]any{}
		for _, f := range []string{"type", "name", "fullyQualifiedName", "displayName"} {
			if s, ok := m[f].(string); ok && s != "" {
				ref[f] = s
			}
		}
		out = append(out, ref)
	}
	return out
}

// section fits items into room characters of JSON: a bounded list with its total, and a
// hint when it is truncated.
func section(items []any, total, room int, hint string) map[string]any {
	n := fitRows(items, room)
	if n == 1 && jsonLen(items[0])+2 > room {
		n = 0 // a section may be empty when the budget is tight; the hint says where the rest is
	}
	out := map[string]any{"items": append([]any{}, items[:n]...), "total": total, "returned": n, "truncated": n < total}
	if n < total {
		out["hint"] = hint
	}
	return out
}

// contextOf runs fn for a section; a failure degrades that section alone: out gets
// <name>Error instead of <name>.
func contextOf(out map[string]any, name string, fn func() (any, error)) {
	v, err := fn()
	if err != nil {
		out[name+"Error"] = meridian.ErrorMessage(err)
		return
	}
	out[name] = v
}

// ----------------------------------------------------------------------------------
// get_company_context

func getCompanyContext(env *Env) *Tool {
	bucket := Object(Props{"key": String("Value."), "count": Integer("Entities.")}, "key", "count")
	count := Object(Props{"entityType": String("Entity type."), "count": Integer("Active entities of the type.")}, "entityType", "count")
	return &Tool{
		Name:  "get_company_context",
		Title: "Get company context",
		Description: "An overview of the organisation's catalog, to start a conversation with: how many entities of each " +
			"type it holds, its domains, data products, glossaries and key metrics, its tiered and certified assets " +
			"(Tier1 first), and the most used tags, owners, services and domains. Each list shows up to limit items " +
			"with its total; search_metadata reads the rest.",
		Input: Object(Props{
			"limit": Integer("Items per list (1–50; larger values are clamped).").Min(1).Max(contextMaxLimit).Default(contextDefaultLimit),
		}),
		Output: OpenObject("The overview.", Props{
			"totalEntities": Integer("Active entities in the catalog, every type."),
			"entityCounts":  Array("Active entities per type, most first.", count),
			"domains":       sectionSchema("Domains.", summarySchema("A domain.")),
			"dataProducts":  sectionSchema("Data products.", summarySchema("A data product.")),
			"glossaries":    sectionSchema("Glossaries.", summarySchema("A glossary.")),
			"metrics":       sectionSchema("Key metrics.", summarySchema("A metric.")),
			"tieredAssets":  sectionSchema("Data assets with a Tier tag, Tier1 first.", summarySchema("An asset.")),
			"certified":     sectionSchema("Data assets with a Certification tag.", summarySchema("An asset.")),
			"topTags":       Array("Tags and glossary terms on the most data assets.", bucket),
			"topOwners":     Array("Owners of the most data assets.", bucket),
			"topServices":   Array("Services with the most data assets.", bucket),
			"topDomains":    Array("Domains with the most data assets.", bucket),
			"truncated":     Boolean("True when a list does not show every item."),
			"total":         Integer("Items in every list."),
			"returned":      Integer("Items listed."),
			"countsError":   String("Why the counts are missing."),
			"hint":          String("What to call next."),
			"topTruncated":  Boolean("True when a top list was cut to fit the result budget."),
		}),
		Aliases: map[string]string{"size": "limit"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			return env.companyContext(ctx, p, a.Int("limit"))
		},
	}
}

func (e *Env) companyContext(ctx context.Context, p *meridian.Principal, limit int) (map[string]any, error) {
	out := map[string]any{"hint": "Call get_asset_context with an asset's entityType and fullyQualifiedName for its full context; search_metadata finds more."}
	assets, err := search.Kinds(e.Registry(), "dataAsset")
	if err != nil {
		return nil, err
	}
	// Counts per type and the top values, from the search service's aggregations.
	res, err := e.Entities.Search(ctx, p, search.Query{Aggregations: []search.Field{search.FieldEntityType}, Buckets: search.MaxBuckets})
	if err != nil {
		out["countsError"] = meridian.ErrorMessage(err)
	} else {
		counts := []any{}
		for _, b := range res.Aggregations[search.FieldEntityType] {
			counts = append(counts, map[string]any{"entityType": b.Key, "count": b.Count})
		}
		out["totalEntities"], out["entityCounts"] = res.Total, counts
	}
	top := map[search.Field]string{search.FieldTags: "topTags", search.FieldOwners: "topOwners", search.FieldService: "topServices", search.FieldDomains: "topDomains"}
	res, err = e.Entities.Search(ctx, p, search.Query{Kinds: assets, Buckets: limit,
		Aggregations: []search.Field{search.FieldTags, search.FieldOwners, search.FieldService, search.FieldDomains}})
	if err == nil {
		// The top lists share a quarter of the budget.
		for field, name := range top {
			list := []any{}
			for _, b := range res.Aggregations[field] {
				list = append(list, map[string]any{"key": b.Key, "count": b.Count})
			}
			if n := fitRows(list, e.Budget/16); n < len(list) {
				list = list[:n]
				out["topTruncated"] = true
			}
			out[name] = list
		}
	}

	// The lists, each fitted into its share of the budget.
	type list struct {
		name  string
		items []any
		total int
		hint  string
	}
	var lists []list
	for _, l := range []struct{ name, kind, fields string }{
		{"domains", kindDomain, "owners,experts"},
		{"dataProducts", kindDataProduct, "owners,domains"},
		{"glossaries", meridian.KindGlossary, "owners"},
		{"metrics", kindMetric, "owners,tags"},
	} {
		items, total, err := e.listSummaries(ctx, p, l.kind, l.fields, limit)
		if err != nil {
			out[l.name+"Error"] = meridian.ErrorMessage(err)
			continue
		}
		lists = append(lists, list{l.name, items, total, fmt.Sprintf("search_metadata with entityType %s and query * lists them all", l.kind)})
	}
	for _, c := range []struct{ name, classification string }{{"tieredAssets", tierClassification}, {"certified", certificationClassification}} {
		items, total, err := e.taggedAssets(ctx, p, assets, c.classification, limit)
		if err != nil {
			out[c.name+"Error"] = meridian.ErrorMessage(err)
			continue
		}
		lists = append(lists, list{c.name, items, total, fmt.Sprintf("search_metadata with queryFilter on tags.tagFQN (a %s tag) lists them all", c.classification)})
	}
	room := e.Budget - jsonLen(out) - 1500
	if len(lists) > 0 {
		room /= len(lists)
	}
	total, returned := 0, 0
	for _, l := range lists {
		s := section(l.items, l.total, room, l.hint)
		out[l.name] = s
		total += l.total
		returned += s["returned"].(int)
	}
	out["total"], out["returned"], out["truncated"] = total, returned, returned < total
	return out, nil
}

// listSummaries lists up to limit entities of kind, by name, as summaries, with the
// kind's total.
func (e *Env) listSummaries(ctx context.Context, p *meridian.Principal, kind, fields string, limit int) ([]any, int, error) {
	k, err := e.Registry().Lookup(kind)
	if err != nil {
		return nil, 0, err
	}
	page, err := e.Entities.List(ctx, p, k.Name, store.ListOptions{Limit: limit, Fields: fieldsOf(k, strings.Split(fields, ",")...)})
	if err != nil {
		return nil, 0, err
	}
	items := make([]any, 0, len(page.Data))
	for _, d := range page.Data {
		s := summary(k.Name, d)
		if doms := refNames(d["domains"]); len(doms) > 0 {
			s["domains"] = doms
		}
		if exp := refNames(d["experts"]); len(exp) > 0 {
			s["experts"] = exp
		}
		items = append(items, s)
	}
	return items, page.Total, nil
}

// taggedAssets lists up to limit data assets tagged with a tag of the classification,
// tag by tag in name order (Tier1 before Tier2), with the count of every such asset.
func (e *Env) taggedAssets(ctx context.Context, p *meridian.Principal, kinds []string, classification string, limit int) ([]any, int, error) {
	tags, err := e.Entities.List(ctx, p, meridian.KindTag, store.ListOptions{Limit: search.MaxFilterValues, Filters: map[string]string{"parent": classification}})
	if err != nil {
		return nil, 0, err
	}
	items, total := []any{}, 0
	for _, t := range tags.Data {
		size := max(limit-len(items), 0)
		res, err := e.Entities.Search(ctx, p, search.Query{Kinds: kinds, Size: size,
			Filters: []search.Filter{{Field: search.FieldTags, Values: []string{t.FQN()}}}})
		if err != nil {
			return nil, 0, err
		}
		total += res.Total
		for _, h := range res.Hits {
			s := hitSummary(h)
			s["tag"] = t.FQN()
			items = append(items, s)
		}
	}
	return items, total, nil
}

// ----------------------------------------------------------------------------------
// get_asset_context

func getAssetContext(env *Env) *Tool {
	nodes := Array("Nearest nodes, by distance.", OpenObject("A node.", Props{"fqn": String("FQN."), "type": String("Entity type."), "depth": Integer("Distance.")}))
	return &Tool{
		Name:  "get_asset_context",
		Title: "Get asset context",
		Description: "Everything an assistant needs to know about one data asset, as markdown (default) or json: its " +
			"description, columns, owners, tags and glossary terms, tier, domains, a lineage summary (counts and the " +
			"nearest upstream and downstream nodes), its data-quality status (test cases and their latest result), its " +
			"data contract, and the glossary terms it is tagged with. Name it by entityType and fqn, or by fqn alone as " +
			"\"table:svc.db.schema.orders\". Wide tables page their columns within the result budget: follow nextCursor.",
		Input: Object(Props{
			"entityType":  String("Entity type, e.g. table, dashboard, topic, metric."),
			"fqn":         String("Fully qualified name, or \"entityType:fqn\" when entityType is not given."),
			"format":      formatArg(),
			"columnLimit": Integer("Most columns to show (default: as many as fit the result budget).").Min(1).Max(maxColumnLimit),
			"cursor":      Cursor(),
		}, "fqn"),
		Output: OpenObject("The asset's context.", pageProps(Props{
			"format":             Enum("The format of the answer.", "markdown", "json"),
			"markdown":           String("The context as markdown (format markdown)."),
			"entityType":         String("Entity type."),
			"fullyQualifiedName": String("Fully qualified name."),
			"name":               String("Name."),
			"displayName":        String("Display name."),
			"description":        String("Description (json)."),
			"owners":             Array("Owners (json).", OpenObject("", nil)),
			"tags":               Strings("Classification tag FQNs (json)."),
			"glossaryTerms":      Strings("Glossary term FQNs (json)."),
			"tier":               String("Tier tag FQN."),
			"domains":            Strings("Domain FQNs (json)."),
			"columns":            Array("This page of the columns (json).", OpenObject("A column.", Props{"name": String("Name."), "dataType": String("Type.")})),
			"totalColumns":       Integer("Top-level columns."),
			"returnedColumns":    Integer("Columns in this result."),
			"columnOffset":       Integer("Offset of the first column in this result."),
			"lineage": OpenObject("Lineage summary (json).", Props{
				"upstreamCount": Integer("Entities upstream, up to 3 levels."), "downstreamCount": Integer("Entities downstream, up to 3 levels."),
				"upstream": nodes, "downstream": nodes,
			}),
			"lineageError":      String("Why the lineage summary is missing."),
			"quality":           OpenObject("Data-quality status (json): status, counts, test cases.", Props{}),
			"qualityError":      String("Why the quality status is missing."),
			"dataContract":      OpenObject("The asset's data contract, when it has one (json).", Props{}),
			"dataContractError": String("Why the contract is missing."),
			"relatedKnowledge":  Array("Glossary terms the asset is tagged with, with their descriptions (json).", summarySchema("A glossary term.")),
		})),
		Aliases: map[string]string{"entity_id": "fqn", "name": "fqn"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			typ, fqn := strings.TrimSpace(a.String("entityType")), strings.TrimSpace(a.String("fqn"))
			if typ == "" {
				var ok bool
				if typ, fqn, ok = strings.Cut(fqn, ":"); !ok || strings.TrimSpace(typ) == "" || strings.TrimSpace(fqn) == "" {
					return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'entityType' is required unless fqn is written \"entityType:fqn\""),
						"Pass entityType and fqn, e.g. entityType table and fqn mysql_prod.shop.public.orders, or fqn \"table:mysql_prod.shop.public.orders\"")
				}
			}
			k, err := env.kind(typ)
			if err != nil {
				return nil, err
			}
			offset, err := offsetOf(a, "")
			if err != nil {
				return nil, err
			}
			return env.assetContext(ctx, p, k, strings.TrimSpace(fqn), a.String("format"), offset, a.Int("columnLimit"))
		},
	}
}

// assetContext gathers an asset's context and shapes it as format asks.
func (e *Env) assetContext(ctx context.Context, p *meridian.Principal, k *meridian.Kind, fqn, format string, offset, limit int) (map[string]any, error) {
	ent, err := e.get(ctx, p, k, fqn, fieldsOf(k, "owners", "tags", "domains", "dataProducts", "columns", "experts"), store.IncludeNonDeleted)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"format": format, "entityType": k.Name, "fullyQualifiedName": ent.FQN(), "name": ent.Name()}
	if d := ent.String("displayName"); d != "" {
		out["displayName"] = d
	}
	var tags, terms []any
	for _, t := range asList(ent["tags"]) {
		m, _ := t.(map[string]any)
		f, _ := m["tagFQN"].(string)
		if m["source"] == "Glossary" {
			terms = append(terms, f)
		} else if f != "" {
			tags = append(tags, f)
		}
	}
	if t := tierOf(ent["tags"]); t != "" {
		out["tier"] = t
	}
	info := map[string]any{"description": ent.String("description"), "owners": refList(ent["owners"]),
		"tags": append([]any{}, tags...), "glossaryTerms": append([]any{}, terms...), "domains": fqnsOf(ent["domains"]),
		"dataProducts": fqnsOf(ent["dataProducts"])}
	if !k.NoLineage {
		contextOf(info, "lineage", func() (any, error) { return e.lineageSummary(ctx, p, k, ent) })
	}
	contextOf(info, "quality", func() (any, error) { return qualitySection(ctx, e, p, k, ent) })
	contextOf(info, "dataContract", func() (any, error) { return e.contractOf(ctx, p, ent.ID()) })
	if info["dataContract"] == nil {
		delete(info, "dataContract")
	}
	info["relatedKnowledge"] = e.relatedKnowledge(ctx, p, terms)
	cols := asList(ent["columns"])
	_, hasCols := ent["columns"]
	if limit == 0 {
		limit = len(cols)
	}
	if format == "json" {
		for key, v := range info {
			if v != nil {
				out[key] = v
			}
		}
		if hasCols {
			rows := []any{}
			if offset < len(cols) {
				rows = clean(cols[offset:min(len(cols), offset+limit)]).([]any)
			}
			Trim(rows)
			Trim(out)
			n := fitRows(rows, e.Budget-jsonLen(out)-600)
			out["columns"] = rows[:n]
			out["totalColumns"], out["returnedColumns"], out["columnOffset"] = len(cols), n, offset
			setPage(out, offset, n, len(cols))
		}
		return out, nil
	}
	md := assetMarkdown(k, ent, out, info)
	if hasCols {
		var b strings.Builder
		b.WriteString(md)
		room := e.Budget - jsonLen(out) - jsonLen(md) - 800
		fmt.Fprintf(&b, "\n## Columns (%d)\n\n| Name | Type | Description |\n| --- | --- | --- |\n", len(cols))
		n := 0
		for i := offset; i < len(cols) && n < limit; i++ {
			line := columnLine(cols[i])
			size := jsonLen(line) - 2
			if size > room && n > 0 {
				break
			}
			room -= size
			b.WriteString(line)
			n++
		}
		if offset+n < len(cols) {
			fmt.Fprintf(&b, "\n_Columns %d–%d of %d shown; call get_asset_context again with cursor %q for the rest._\n",
				offset+1, offset+n, len(cols), EncodeCursor(offset+n))
		}
		md = b.String()
		out["totalColumns"], out["returnedColumns"], out["columnOffset"] = len(cols), n, offset
		setPage(out, offset, n, len(cols))
	}
	out["markdown"] = md
	return out, nil
}

// fqnsOf returns the FQNs of a list of entity references.
func fqnsOf(v any) []any {
	out := []any{}
	for _, r := range asList(v) {
		m, _ := r.(map[string]any)
		if f, ok := m["fullyQualifiedName"].(string); ok {
			out = append(out, f)
		}
	}
	return out
}

// lineageSummary counts the entities up to defaultToolDepth levels upstream and
// downstream and names the nearest ones.
func (e *Env) lineageSummary(ctx context.Context, p *meridian.Principal, k *meridian.Kind, ent meridian.Entity) (map[string]any, error) {
	l, err := e.Entities.GetLineage(ctx, p, k.Name, store.ByID(ent.ID()), store.LineageOptions{Upstream: defaultToolDepth, Downstream: defaultToolDepth})
	if err != nil {
		return nil, err
	}
	side := func(depths map[string]int) []any {
		var ids []string
		for id := range depths {
			ids = append(ids, id)
		}
		byID := map[string]meridian.EntityRef{}
		for _, n := range l.Nodes {
			byID[n.ID] = n
		}
		sort.Slice(ids, func(i, j int) bool {
			if depths[ids[i]] != depths[ids[j]] {
				return depths[ids[i]] < depths[ids[j]]
			}
			return byID[ids[i]].FullyQualifiedName < byID[ids[j]].FullyQualifiedName
		})
		out := []any{}
		for _, id := range ids[:min(len(ids), nearestNodes)] {
			out = append(out, map[string]any{"fqn": byID[id].FullyQualifiedName, "type": byID[id].Type, "depth": depths[id]})
		}
		return out
	}
	return map[string]any{"upstreamCount": len(l.UpstreamDepth), "downstreamCount": len(l.DownstreamDepth),
		"upstream": side(l.UpstreamDepth), "downstream": side(l.DownstreamDepth), "depth": defaultToolDepth}, nil
}

// contractOf finds the data contract whose entity is the asset id: a bounded scan of
// the contracts' indexed documents (search.MaxWindow of them at most). No contract is
// nil.
func (e *Env) contractOf(ctx context.Context, p *meridian.Principal, id string) (any, error) {
	k, ok := e.Registry().Kind(kindDataContract)
	if !ok {
		return nil, nil
	}
	for from := 0; from < search.MaxWindow; from += scanPage {
		res, err := e.Entities.Search(ctx, p, search.Query{Kinds: []string{k.Name}, From: from, Size: scanPage})
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			var doc struct {
				Entity struct {
					ID string `json:"id"`
				} `json:"entity"`
				Status      string `json:"entityStatus"`
				Description string `json:"description"`
				Name        string `json:"name"`
			}
			if json.Unmarshal(h.Source, &doc) != nil || doc.Entity.ID != id {
				continue
			}
			c := map[string]any{"name": doc.Name, "fullyQualifiedName": h.FQN}
			if doc.Status != "" {
				c["status"] = doc.Status
			}
			if doc.Description != "" {
				c["description"] = doc.Description
			}
			return c, nil
		}
		if from+scanPage >= res.Total {
			break
		}
	}
	return nil, nil
}

// relatedKnowledge reads the glossary terms the asset is tagged with (the first
// relatedTermsLimit), as summaries; terms the caller may not read are left out.
func (e *Env) relatedKnowledge(ctx context.Context, p *meridian.Principal, terms []any) []any {
	out := []any{}
	for _, t := range terms[:min(len(terms), relatedTermsLimit)] {
		f, _ := t.(string)
		term, err := e.Entities.Get(ctx, p, meridian.KindGlossaryTerm, store.ByFQN(f), store.GetOptions{})
		if err != nil {
			continue
		}
		s := summary(meridian.KindGlossaryTerm, term)
		if syn := asList(term["synonyms"]); len(syn) > 0 {
			s["synonyms"] = syn
		}
		out = append(out, s)
	}
	return out
}

// assetMarkdown writes everything but the columns as markdown.
func assetMarkdown(k *meridian.Kind, ent meridian.Entity, out, info map[string]any) string {
	var b strings.Builder
	title := ent.FQN()
	if d := ent.String("displayName"); d != "" {
		title = d + " (" + ent.FQN() + ")"
	}
	fmt.Fprintf(&b, "# %s %s\n\n", k.Name, title)
	desc := ent.String("description")
	switch {
	case desc == "":
		b.WriteString("_No description._\n")
	case len([]rune(desc)) > markdownDescription:
		b.WriteString(cut(desc, markdownDescription) + " … _(description cut; get_entity_details has it whole)_\n")
	default:
		b.WriteString(desc + "\n")
	}
	line := func(label string, v any) {
		if l := asList(v); len(l) > 0 {
			parts := make([]string, len(l))
			for i, x := range l {
				if m, ok := x.(map[string]any); ok {
					parts[i] = fmt.Sprintf("%v (%v)", m["name"], m["type"])
				} else {
					parts[i] = fmt.Sprint(x)
				}
			}
			fmt.Fprintf(&b, "- **%s:** %s\n", label, strings.Join(parts, ", "))
		} else {
			fmt.Fprintf(&b, "- **%s:** none\n", label)
		}
	}
	b.WriteString("\n## Summary\n\n")
	line("Owners", info["owners"])
	if t, ok := out["tier"].(string); ok {
		fmt.Fprintf(&b, "- **Tier:** %s\n", t)
	} else {
		b.WriteString("- **Tier:** none\n")
	}
	line("Tags", info["tags"])
	line("Glossary terms", info["glossaryTerms"])
	line("Domains", info["domains"])
	if dp := asList(info["dataProducts"]); len(dp) > 0 {
		line("Data products", dp)
	}
	if l, ok := info["lineage"].(map[string]any); ok {
		b.WriteString("\n## Lineage\n\n")
		for _, dir := range []string{"upstream", "downstream"} {
			fmt.Fprintf(&b, "- **%s:** %v entities within %d levels", strings.ToUpper(dir[:1])+dir[1:], l[dir+"Count"], defaultToolDepth)
			var names []string
			for _, n := range asList(l[dir]) {
				m := n.(map[string]any)
				names = append(names, fmt.Sprintf("%v (%v, %v)", m["fqn"], m["type"], m["depth"]))
			}
			if len(names) > 0 {
				b.WriteString("; nearest: " + strings.Join(names, ", "))
			}
			b.WriteString("\n")
		}
	} else if msg, ok := info["lineageError"].(string); ok {
		fmt.Fprintf(&b, "\n## Lineage\n\n_Unavailable: %s_\n", msg)
	}
	if q, ok := info["quality"].(map[string]any); ok {
		fmt.Fprintf(&b, "\n## Data quality\n\n- **Status:** %v (%v tests: %v passed, %v failed, %v never run)\n",
			q["status"], q["total"], q["success"], q["failed"], q["neverRun"])
		for _, t := range asList(q["tests"]) {
			m := t.(map[string]any)
			fmt.Fprintf(&b, "- %v: %v", m["name"], m["testCaseStatus"])
			if r, ok := m["result"].(string); ok {
				fmt.Fprintf(&b, " — %s", r)
			}
			b.WriteString("\n")
		}
	} else if msg, ok := info["qualityError"].(string); ok {
		fmt.Fprintf(&b, "\n## Data quality\n\n_Unavailable: %s_\n", msg)
	}
	b.WriteString("\n## Data contract\n\n")
	if c, ok := info["dataContract"].(map[string]any); ok {
		fmt.Fprintf(&b, "- **%v**", c["fullyQualifiedName"])
		if s, ok := c["status"]; ok {
			fmt.Fprintf(&b, " (%v)", s)
		}
		if d, ok := c["description"].(string); ok {
			b.WriteString(": " + shorten(d, summaryDescription))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("_None._\n")
	}
	if rk := asList(info["relatedKnowledge"]); len(rk) > 0 {
		b.WriteString("\n## Related knowledge\n\n")
		for _, t := range rk {
			m := t.(map[string]any)
			fmt.Fprintf(&b, "- **%v**", m["fullyQualifiedName"])
			if d, ok := m["description"].(string); ok {
				b.WriteString(": " + d)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// columnLine is one column as a markdown table row.
func columnLine(c any) string {
	m, _ := c.(map[string]any)
	cell := func(v any) string {
		s, _ := v.(string)
		s = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
		return shorten(s, summaryDescription)
	}
	typ := cell(m["dataTypeDisplay"])
	if typ == "" {
		typ = cell(m["dataType"])
	}
	return fmt.Sprintf("| %s | %s | %s |\n", cell(m["name"]), typ, cell(m["description"]))
}

// ----------------------------------------------------------------------------------
// get_user_context

func getUserContext(env *Env) *Tool {
	item := summarySchema("An asset.")
	item["properties"].(map[string]any)["gaps"] = Strings("What the asset lacks: MISSING_DESCRIPTION, MISSING_TIER.")
	item["properties"].(map[string]any)["ownedVia"] = String("The owner through which the user owns it: the user, or a team's name.")
	return &Tool{
		Name:  "get_user_context",
		Title: "Get user context",
		Description: "A user's context (by default the caller's): their teams, the data assets they own (directly or " +
			"through a team) and those they follow, each with a short summary. gaps lists only owned assets that lack " +
			"something: MISSING_DESCRIPTION, MISSING_TIER or ANY_GAP. Owned assets page with nextCursor; followed " +
			"assets are listed on the first page.",
		Input: Object(Props{
			"user":          String("User name; default the caller."),
			"gaps":          Enum("Only owned assets with this gap.", gapNone, gapMissingDescription, gapMissingTier, gapAny).Default(gapNone),
			"limit":         Integer("Owned assets per page (1–100).").Min(1).Max(userMaxLimit).Default(userDefaultLimit),
			"followedLimit": Integer("Followed assets to list (1–100).").Min(1).Max(userMaxLimit).Default(userDefaultLimit),
			"cursor":        Cursor(),
		}),
		Output: OpenObject("The user's context.", pageProps(Props{
			"user":     OpenObject("The user.", Props{"name": String("Name."), "displayName": String("Display name."), "fullyQualifiedName": String("FQN.")}),
			"teams":    Array("Teams the user belongs to.", OpenObject("A team.", Props{"name": String("Name.")})),
			"gaps":     String("The gap filter applied."),
			"owned":    Array("This page of the owned assets.", item),
			"followed": sectionSchema("Assets the user follows (first page only).", summarySchema("An asset.")),
			"ownedScanLimited": Boolean("True when the user owns more assets than a gap filter scans (10,000); " +
				"the gaps listed come from the first 10,000."),
		})),
		Aliases: map[string]string{"userName": "user", "name": "user", "ownedFilter": "gaps", "ownedLimit": "limit", "size": "limit"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			offset, err := offsetOf(a, "")
			if err != nil {
				return nil, err
			}
			return env.userContext(ctx, p, strings.TrimSpace(a.String("user")), a.String("gaps"), offset, a.Int("limit"), a.Int("followedLimit"))
		},
	}
}

func (e *Env) userContext(ctx context.Context, p *meridian.Principal, name, gaps string, offset, limit, followedLimit int) (map[string]any, error) {
	key := store.ByID(p.ID)
	if name != "" {
		key = store.ByFQN(nameFQN(name))
	} else if p.ID == "" {
		key = store.ByFQN(nameFQN(p.Name))
	}
	user, err := e.Entities.Get(ctx, p, meridian.KindUser, key, store.GetOptions{Fields: "teams"})
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil, withHint(err, "Pass an existing user name, or omit user for the caller; search_metadata with entityType user finds users")
	}
	if err != nil {
		return nil, err
	}
	out := map[string]any{"user": summary(meridian.KindUser, user), "teams": refList(user["teams"]), "gaps": gaps}
	// Owned: the user's assets and their teams', through the owners filter of search,
	// checked against the owners' ids in each document.
	ownerIDs := map[string]string{user.ID(): user.Name()}
	names := []string{user.Name()}
	for _, t := range asList(user["teams"]) {
		m, _ := t.(map[string]any)
		id, _ := m["id"].(string)
		n, _ := m["name"].(string)
		if id != "" && n != "" && len(names) < search.MaxFilterValues {
			ownerIDs[id] = n
			names = append(names, n)
		}
	}
	kinds, err := search.Kinds(e.Registry(), "dataAsset")
	if err != nil {
		return nil, err
	}
	q := search.Query{Kinds: kinds, Filters: []search.Filter{{Field: search.FieldOwners, Values: names}}}
	var rows []any
	// consumed[i] is how far the offset advances when rows[:i+1] are returned; all is
	// how far it advances when every row is.
	var consumed []int
	total, all := 0, 0
	if gaps == gapNone {
		q.From, q.Size = offset, min(limit, max(search.MaxWindow-offset, 0))
		res, err := e.Entities.Search(ctx, p, q)
		if err != nil {
			return nil, searchHint(err)
		}
		total, all = res.Total, len(res.Hits)
		for i, h := range res.Hits {
			if s := ownedSummary(h, ownerIDs, user.ID()); s != nil {
				rows = append(rows, s)
				consumed = append(consumed, i+1)
			}
		}
	} else {
		// A bounded scan of the first search.MaxWindow owned assets, filtered by gap.
		q.Size = scanPage
		for q.From = 0; q.From < search.MaxWindow; q.From += scanPage {
			res, err := e.Entities.Search(ctx, p, q)
			if err != nil {
				return nil, searchHint(err)
			}
			out["ownedScanLimited"] = res.Total > search.MaxWindow
			for _, h := range res.Hits {
				s := ownedSummary(h, ownerIDs, user.ID())
				if s == nil || !hasGap(s, gaps) {
					continue
				}
				if total >= offset && len(rows) < limit {
					rows = append(rows, s)
					consumed = append(consumed, len(rows))
				}
				total++
			}
			if q.From+scanPage >= res.Total {
				break
			}
		}
		all = len(rows)
	}
	if rows == nil {
		rows = []any{}
	}
	if offset == 0 {
		contextOf(out, "followed", func() (any, error) { return e.followed(ctx, p, user.ID(), followedLimit) })
	}
	Trim(rows)
	n := fitRows(rows, e.Budget-jsonLen(out)-800)
	out["owned"] = rows[:n]
	advance := all
	if n < len(rows) {
		advance = consumed[n-1]
	}
	setPage(out, offset, advance, max(total, offset+advance))
	out["returned"] = n
	return out, nil
}

// ownedSummary is the summary of an owned asset with its gaps and the owner through
// which the user owns it; nil when none of the document's owners is the user or one of
// their teams.
func ownedSummary(h search.Hit, ownerIDs map[string]string, userID string) map[string]any {
	var src map[string]any
	_ = json.Unmarshal(h.Source, &src)
	via := ""
	for _, o := range asList(src["owners"]) {
		m, _ := o.(map[string]any)
		id, _ := m["id"].(string)
		if n, ok := ownerIDs[id]; ok && (via == "" || id == userID) {
			via = n
			if id == userID {
				via = "user"
			}
		}
	}
	if via == "" {
		return nil
	}
	s := summary(h.Kind, src)
	s["ownedVia"] = via
	gaps := []any{}
	if d, _ := src["description"].(string); strings.TrimSpace(d) == "" {
		gaps = append(gaps, gapMissingDescription)
	}
	if s["tier"] == nil {
		gaps = append(gaps, gapMissingTier)
	}
	s["gaps"] = gaps
	return s
}

// hasGap reports whether a summary made by ownedSummary has the gap asked for.
func hasGap(s map[string]any, gap string) bool {
	for _, g := range asList(s["gaps"]) {
		if gap == gapAny || g == gap {
			return true
		}
	}
	return false
}

// followed lists the first limit entities the user follows that the caller may read,
// with the count of every follow (at most followsLimit are read).
func (e *Env) followed(ctx context.Context, p *meridian.Principal, userID string, limit int) (map[string]any, error) {
	var rels []store.Relation
	err := e.Entities.InTx(ctx, false, func(tx store.Tx) error {
		var err error
		rels, err = tx.Relations(ctx, store.RelationQuery{ToID: userID, Type: "followers"})
		return err
	})
	if err != nil {
		return nil, err
	}
	rels = rels[:min(len(rels), followsLimit)]
	items := []any{}
	for _, r := range rels {
		if len(items) >= limit {
			break
		}
		k, ok := e.Registry().Kind(r.FromKind)
		if !ok {
			continue
		}
		ent, err := e.Entities.Get(ctx, p, k.Name, store.ByID(r.FromID), store.GetOptions{Fields: fieldsOf(k, "owners", "tags")})
		switch meridian.ErrorCode(err) {
		case "":
			items = append(items, summary(k.Name, ent))
		case meridian.ENotFound, meridian.EForbidden:
		default:
			return nil, err
		}
	}
	Trim(items)
	hint := "Raise followedLimit (up to 100) to list more; followed assets that are deleted or hidden from the caller are left out"
	s := section(items, len(rels), e.Budget/4, hint)
	if len(items) < len(rels) {
		s["truncated"], s["hint"] = true, hint
	}
	return s, nil
}

// ----------------------------------------------------------------------------------
// get_persona_context

func getPersonaContext(env *Env) *Tool {
	return &Tool{
		Name:  "get_persona_context",
		Title: "Get persona context",
		Description: "A persona's context: its description and instructions, the users who have it, and the domains and " +
			"data assets those users own. Long answers come in parts: start with part 1 and read the next part while " +
			"hasMore is true.",
		Input: Object(Props{
			"name": String("Persona name (its fullyQualifiedName)."),
			"part": Integer("Part to read, from 1.").Min(1).Default(1),
		}, "name"),
		Output: OpenObject("One part of the persona's context.", pageProps(Props{
			"persona":      OpenObject("The persona: name, displayName, description and instructions.", Props{"name": String("Name.")}),
			"part":         Integer("This part, from 1."),
			"totalParts":   Integer("Number of parts."),
			"nextPart":     Integer("The part to read next, while hasMore."),
			"users":        Array("Users with the persona, in this part.", summarySchema("A user.")),
			"domains":      Array("Domains those users own, in this part.", summarySchema("A domain.")),
			"assets":       Array("Data assets those users own, in this part.", summarySchema("An asset.")),
			"usersTotal":   Integer("Users with the persona."),
			"domainsTotal": Integer("Domains they own."),
			"assetsTotal":  Integer("Data assets they own."),
			"listsLimited": Boolean("True when a list holds only its first 500 items (or the first 50 users)."),
		})),
		Aliases: map[string]string{"persona": "name", "fqn": "name", "personaName": "name"},
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			return env.personaContext(ctx, p, strings.TrimSpace(a.String("name")), a.Int("part"))
		},
	}
}

func (e *Env) personaContext(ctx context.Context, p *meridian.Principal, name string, part int) (map[string]any, error) {
	k, ok := e.Registry().Kind(kindPersona)
	if !ok {
		return nil, withHint(meridian.Errorf(meridian.ENotFound, "Personas are not available on this server"),
			"Use get_user_context for a user's context, or get_company_context for the catalog's")
	}
	persona, err := e.Entities.Get(ctx, p, k.Name, store.ByFQN(name), store.GetOptions{Fields: fieldsOf(k, "users", "owners", "domains")})
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil, withHint(err, fmt.Sprintf("No persona is named %q; search_metadata with entityType %s and query * lists them", name, k.Name))
	}
	if err != nil {
		return nil, err
	}
	head := map[string]any{"name": persona.Name(), "fullyQualifiedName": persona.FQN()}
	for f, v := range persona {
		if s, ok := v.(string); ok && s != "" && (f == "displayName" || f == "description" || strings.Contains(strings.ToLower(f), "instruction") || strings.Contains(strings.ToLower(f), "prompt")) {
			head[f] = s
		}
	}
	Trim(head)
	type row struct {
		list string
		item map[string]any
	}
	var rows []row
	limited := false
	users := asList(persona["users"])
	var names []string
	for _, u := range users {
		m, _ := u.(map[string]any)
		n, _ := m["name"].(string)
		if n == "" {
			continue
		}
		if len(names) == personaUsersLimit {
			limited = true
			break
		}
		names = append(names, n)
		s := map[string]any{"entityType": meridian.KindUser, "name": n}
		for _, f := range []string{"fullyQualifiedName", "displayName"} {
			if v, ok := m[f].(string); ok && v != "" {
				s[f] = v
			}
		}
		rows = append(rows, row{"users", s})
	}
	totals := map[string]int{"users": len(users)}
	if len(names) > 0 {
		assets, err := search.Kinds(e.Registry(), "dataAsset")
		if err != nil {
			return nil, err
		}
		for _, l := range []struct {
			list  string
			kinds []string
		}{{"domains", []string{kindDomain}}, {"assets", assets}} {
			if _, ok := e.Registry().Kind(l.kinds[0]); !ok {
				continue
			}
			res, err := e.Entities.Search(ctx, p, search.Query{Kinds: l.kinds, Size: personaAssetsLimit,
				Filters: []search.Filter{{Field: search.FieldOwners, Values: names}}})
			if err != nil {
				return nil, searchHint(err)
			}
			totals[l.list] = res.Total
			limited = limited || res.Total > len(res.Hits)
			for _, h := range res.Hits {
				rows = append(rows, row{l.list, hitSummary(h)})
			}
		}
	}
	// Parts: rows in order, each part filling the room the budget leaves.
	out := map[string]any{"persona": head, "usersTotal": totals["users"], "domainsTotal": totals["domains"],
		"assetsTotal": totals["assets"], "listsLimited": limited}
	room := e.Budget - jsonLen(out) - 1500
	var starts []int // index of each part's first row
	used := room
	var lm lengths
	for i, r := range rows {
		Trim(r.item)
		size := lm.jsonLen(r.item) + 1
		if used+size > room {
			starts = append(starts, i)
			used = 0
		}
		used += size
	}
	if len(starts) == 0 {
		starts = []int{0}
	}
	if part > len(starts) {
		return nil, withHint(meridian.Errorf(meridian.EInvalid, "Part %d is past the last part, %d", part, len(starts)),
			"Start with part 1 and read the next part while hasMore is true")
	}
	from, to := starts[part-1], len(rows)
	if part < len(starts) {
		to = starts[part]
	}
	lists := map[string][]any{"users": {}, "domains": {}, "assets": {}}
	for _, r := range rows[from:to] {
		lists[r.list] = append(lists[r.list], r.item)
	}
	for name, l := range lists {
		out[name] = l
	}
	more := part < len(starts)
	out["part"], out["totalParts"], out["hasMore"], out["truncated"] = part, len(starts), more, more
	out["total"], out["returned"] = len(rows), to-from
	if more {
		out["nextPart"] = part + 1
	}
	return out, nil
}
