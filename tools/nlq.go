package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// nlq_search: a natural-language request read by rules into filters, plus hybrid
// retrieval on the words left. The rules are deterministic and check the catalog's
// own names: entity types named in the text ("tables", "glossary terms"), tiers
// ("tier 1"), tags and classifications that exist ("PII"), owners that exist ("owned by
// alice", "my"), services by name or type ("in snowflake"), domains by name,
// "without description", and time ("updated in the last 3 days", "created last week").
// No language model is involved.

const (
	// nlqDefaultLimit and nlqMaxLimit bound nlq_search's results.
	nlqDefaultLimit = 10
	nlqMaxLimit     = 50
	// nlqVocabulary bounds the names of each kind read to recognise them in the text.
	nlqVocabulary = 1000
)

// nlqFiller are the words of a request that carry no search meaning once the filters
// are read ("show me all", "which … are there").
var nlqFiller = map[string]bool{
	"show": true, "me": true, "list": true, "find": true, "get": true, "give": true, "all": true, "any": true,
	"every": true, "the": true, "a": true, "an": true, "which": true, "what": true, "that": true, "are": true,
	"is": true, "there": true, "please": true, "with": true, "of": true, "in": true, "from": true, "on": true,
	"by": true, "for": true, "do": true, "we": true, "have": true, "has": true, "and": true, "or": true, "to": true,
	"our": true, "whose": true, "where": true, "search": true, "about": true, "i": true,
}

// nlqInterpretation is what nlq_search read in a request.
type nlqInterpretation struct {
	EntityTypes        []string `json:"entityTypes,omitempty"`
	Tags               []string `json:"tags,omitempty"`
	Owners             []string `json:"owners,omitempty"`
	Services           []string `json:"services,omitempty"`
	Domains            []string `json:"domains,omitempty"`
	MissingDescription bool     `json:"missingDescription,omitempty"`
	UpdatedSince       int64    `json:"updatedSince,omitempty"`
	Notes              []string `json:"notes,omitempty"`
	ResidualQuery      string   `json:"residualQuery"`
	Mode               string   `json:"mode"`
}

func nlqSearch(env *Env) *Tool {
	return &Tool{
		Name:  "nlq_search",
		Title: "Natural-language search",
		Description: "Search the catalog with a request in plain English, e.g. \"PII tables in snowflake owned by alice " +
			"without description\" or \"dashboards about revenue updated in the last 7 days\". The request is read into " +
			"filters (entity types, tags and tiers, owners, services, domains, missing descriptions, time) checked " +
			"against the catalog's own names, and the rest of the words are searched by meaning and keywords. The " +
			"answer shows the interpretation (the filters derived and the residual query) beside the results.",
		Input: Object(Props{
			"query":           String("The request in plain words; \"*\" lists everything in the index.").Default("*"),
			"limit":           Integer("Results (1–50; larger values are clamped).").Min(1).Max(nlqMaxLimit).Default(nlqDefaultLimit),
			"include_deleted": Boolean("Include soft-deleted entities.").Default(false),
			"index":           String("Entity type or index name to search, e.g. table or table_search_index; dataAsset (the default) or all.").Default("dataAsset"),
			"cursor":          Cursor(),
		}),
		Aliases: map[string]string{"includeDeleted": "include_deleted", "size": "limit", "entityType": "index"},
		Output: Object(pageProps(Props{
			"query": String("The request."),
			"interpretation": OpenObject("How the request was read.", Props{
				"entityTypes":        Strings("Entity types named."),
				"tags":               Strings("Tag FQNs required (any of them)."),
				"owners":             Strings("Owner names required (any of them)."),
				"services":           Strings("Service names required (any of them)."),
				"domains":            Strings("Domain FQNs required (any of them)."),
				"missingDescription": Boolean("Only entities without a description."),
				"updatedSince":       Integer("Only entities changed since this time (epoch milliseconds)."),
				"notes":              Strings("Remarks on the reading, e.g. names not found in the catalog."),
				"residualQuery":      String("The words searched after the filters were read; * when none."),
				"mode":               String("hybrid (words searched by meaning and keywords) or keyword (filters only)."),
			}),
			"results":       Array("The hits of this page, best first.", semanticHitSchema()),
			"totalFound":    Integer("Matches found."),
			"returnedCount": Integer("Hits in this result."),
		})),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			text := strings.TrimSpace(a.String("query"))
			if text == "" {
				text = "*"
			}
			if len([]rune(text)) > search.MaxQueryLength {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'query' is longer than the maximum of %d characters", search.MaxQueryLength),
					"Ask a shorter request")
			}
			scope, err := env.searchKinds(a.String("index"))
			if err != nil {
				return nil, err
			}
			offset, err := offsetOf(a, "")
			if err != nil {
				return nil, err
			}
			in := env.interpret(ctx, p, text, time.Now())
			kinds := scope
			if len(in.EntityTypes) > 0 {
				kinds = in.EntityTypes
			}
			hits, total, err := env.nlqRetrieve(ctx, p, in, kinds, a.Bool("include_deleted"))
			if err != nil {
				return nil, err
			}
			rows := []any{}
			for _, h := range hits[min(offset, len(hits)):min(offset+a.Int("limit"), len(hits))] {
				rows = append(rows, semanticRow(h))
			}
			out := map[string]any{"query": text, "interpretation": in, "totalFound": total}
			return env.fitPage(out, "results", rows, offset, len(hits)), nil
		},
	}
}

// nlqRetrieve runs an interpretation: keyword search on the filters alone when no
// words are left, hybrid retrieval of the words otherwise; then the conditions the
// search service cannot test in that mode are tested on the candidates' documents.
func (e *Env) nlqRetrieve(ctx context.Context, p *meridian.Principal, in nlqInterpretation, kinds []string, deleted bool) ([]search.Hit, int, error) {
	var filters, later []search.Filter
	add := func(f search.Field, values []string) {
		if len(values) > 0 {
			filters = append(filters, search.Filter{Field: f, Values: values})
		}
	}
	add(search.FieldService, in.Services)
	add(search.FieldTags, in.Tags)
	if deleted {
		add(search.FieldDeleted, []string{"true", "false"})
	}
	for _, f := range []search.Filter{{Field: search.FieldOwners, Values: in.Owners}, {Field: search.FieldDomains, Values: in.Domains}} {
		switch {
		case len(f.Values) == 0:
		case in.Mode == "keyword":
			filters = append(filters, f)
		default:
			later = append(later, f) // vector retrieval keeps no owners or domains
		}
	}
	res, err := e.retrieve(ctx, p, in.ResidualQuery, kinds, filters, 0, nlqCandidates)
	if err != nil {
		return nil, 0, err
	}
	if len(later) == 0 && !in.MissingDescription && in.UpdatedSince == 0 {
		return res.Hits, res.Total, nil
	}
	var kept []search.Hit
	for _, h := range res.Hits {
		if nlqKeeps(h, in, later) {
			kept = append(kept, h)
		}
	}
	return kept, len(kept), nil
}

// nlqKeeps tests the conditions left for after retrieval on a hit's document.
func nlqKeeps(h search.Hit, in nlqInterpretation, later []search.Filter) bool {
	var src map[string]any
	if json.Unmarshal(h.Source, &src) != nil {
		return false
	}
	if d, _ := src["description"].(string); in.MissingDescription && strings.TrimSpace(d) != "" {
		return false
	}
	if in.UpdatedSince > 0 {
		at, _ := src["updatedAt"].(float64)
		if int64(at) < in.UpdatedSince {
			return false
		}
	}
	for _, f := range later {
		var have []any
		if f.Field == search.FieldOwners {
			have = refNames(src["owners"])
		} else {
			have = fqnsOf(src["domains"])
		}
		if !slices.ContainsFunc(have, func(v any) bool {
			return slices.ContainsFunc(f.Values, func(w string) bool { return strings.EqualFold(fmt.Sprint(v), w) })
		}) {
			return false
		}
	}
	return true
}

// nlqTokens splits text into lower-case words of letters and digits.
func nlqTokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// phrases is a request's words, each consumed at most once by the rules.
type phrases struct {
	words []string
	used  []bool
}

// take finds the phrase (words) among the unused words, marks it used and reports
// where it started, or -1.
func (ph *phrases) take(phrase []string) int {
	if len(phrase) == 0 {
		return -1
	}
outer:
	for i := 0; i+len(phrase) <= len(ph.words); i++ {
		for j, w := range phrase {
			if ph.used[i+j] || ph.words[i+j] != w {
				continue outer
			}
		}
		for j := range phrase {
			ph.used[i+j] = true
		}
		return i
	}
	return -1
}

// drop marks the word at i used when it is one of words.
func (ph *phrases) drop(i int, words ...string) {
	if i >= 0 && i < len(ph.words) && !ph.used[i] && slices.Contains(words, ph.words[i]) {
		ph.used[i] = true
	}
}

// rest is the unused words that are not filler.
func (ph *phrases) rest() string {
	var out []string
	for i, w := range ph.words {
		if !ph.used[i] && !nlqFiller[w] {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

var (
	tierRE    = regexp.MustCompile(`\btier\s*-?\s*([1-5])\b`)
	lastNRE   = regexp.MustCompile(`\b(?:in\s+the\s+)?(?:last|past)\s+(\d{1,4})\s+(hour|day|week|month)s?\b`)
	lastOneRE = regexp.MustCompile(`\b(?:in\s+the\s+)?(?:last|past|this)\s+(hour|day|week|month)\b`)
	dayRE     = regexp.MustCompile(`\b(today|yesterday|recently)\b`)
	changeRE  = regexp.MustCompile(`\b(created|updated|changed|modified|added)\b`)
	noDescRE  = regexp.MustCompile(`\b(?:without|with\s+no|no|missing|lacking)\s+(?:a\s+)?descriptions?\b|\bundocumented\b|\bdescriptionless\b`)
	ownerRE   = regexp.MustCompile(`\bowned\s+by\s+([\p{L}\p{N}_.\-@]+)|\bowner\s+(?:is\s+)?([\p{L}\p{N}_.\-@]+)`)
)

var unitDuration = map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour}

// interpret reads a request. Names are looked up in the catalog as p sees it; a lookup
// that fails leaves its rule out.
func (e *Env) interpret(ctx context.Context, p *meridian.Principal, text string, now time.Time) nlqInterpretation {
	in := nlqInterpretation{Mode: "hybrid"}
	low := strings.ToLower(text)

	// Phrase rules on the text, removed before the words are matched.
	if m := tierRE.FindAllStringSubmatch(low, -1); m != nil {
		for _, g := range m {
			in.Tags = append(in.Tags, fmt.Sprintf("%s.%s%s", tierClassification, tierClassification, g[1]))
		}
		low = tierRE.ReplaceAllString(low, " ")
	}
	if noDescRE.MatchString(low) {
		in.MissingDescription = true
		low = noDescRE.ReplaceAllString(low, " ")
	}
	since := time.Duration(0)
	if m := lastNRE.FindStringSubmatch(low); m != nil {
		n, _ := strconv.Atoi(m[1])
		since = time.Duration(n) * unitDuration[m[2]]
		low = lastNRE.ReplaceAllString(low, " ")
	} else if m := lastOneRE.FindStringSubmatch(low); m != nil {
		since = unitDuration[m[1]]
		low = lastOneRE.ReplaceAllString(low, " ")
	} else if m := dayRE.FindStringSubmatch(low); m != nil {
		since = map[string]time.Duration{"today": 24 * time.Hour, "yesterday": 48 * time.Hour, "recently": 7 * 24 * time.Hour}[m[1]]
		low = dayRE.ReplaceAllString(low, " ")
	}
	if since > 0 {
		in.UpdatedSince = now.Add(-since).UnixMilli()
		if m := changeRE.FindString(low); m == "created" || m == "added" {
			in.Notes = append(in.Notes, "Entities keep no creation time: \""+m+"\" is read as changed in that period")
		}
		low = changeRE.ReplaceAllString(low, " ")
	}
	for _, m := range ownerRE.FindAllStringSubmatch(low, -1) {
		name := m[1] + m[2]
		if name == "me" {
			in.Owners = append(in.Owners, p.Name)
		} else if owner := e.ownerName(ctx, p, name); owner != "" {
			in.Owners = append(in.Owners, owner)
		} else {
			in.Notes = append(in.Notes, fmt.Sprintf("No user or team named %q: searched as words", name))
			continue
		}
		low = strings.Replace(low, m[0], " ", 1)
	}

	ph := &phrases{words: nlqTokens(low)}
	ph.used = make([]bool, len(ph.words))
	if i := slices.Index(ph.words, "my"); i >= 0 && p.Name != "" {
		ph.used[i] = true
		in.Owners = append(in.Owners, p.Name)
	}
	for _, v := range e.vocabulary(ctx, p) {
		i := ph.take(v.phrase)
		if i < 0 {
			continue
		}
		switch v.field {
		case search.FieldEntityType:
			in.EntityTypes = appendNew(in.EntityTypes, v.values...)
		case search.FieldTags:
			in.Tags = appendNew(in.Tags, v.values...)
		case search.FieldService:
			in.Services = appendNew(in.Services, v.values...)
			ph.drop(i-1, "in", "from", "on")
		case search.FieldDomains:
			in.Domains = appendNew(in.Domains, v.values...)
			ph.drop(i-1, "in", "of")
			ph.drop(i+len(v.phrase), "domain")
		}
	}
	if len(in.Tags) > search.MaxFilterValues/2 {
		in.Tags = in.Tags[:search.MaxFilterValues/2]
	}
	in.ResidualQuery = ph.rest()
	if in.ResidualQuery == "" {
		in.ResidualQuery, in.Mode = "*", "keyword"
	}
	return in
}

func appendNew(l []string, values ...string) []string {
	for _, v := range values {
		if !slices.Contains(l, v) {
			l = append(l, v)
		}
	}
	return l
}

// ownerName returns the name of the user or team called name, or "".
func (e *Env) ownerName(ctx context.Context, p *meridian.Principal, name string) string {
	for _, kind := range []string{meridian.KindUser, meridian.KindTeam} {
		for _, n := range []string{name, strings.TrimSuffix(name, "'s")} {
			if ent, err := e.Entities.Get(ctx, p, kind, store.ByFQN(n), store.GetOptions{}); err == nil {
				return ent.Name()
			}
		}
	}
	return ""
}

// term is one recognisable phrase of the vocabulary and the filter values it stands for.
type term struct {
	phrase []string
	field  search.Field
	values []string
}

// vocabulary is what interpret recognises, longest phrases first: entity types by
// their words, singular and plural; classifications (every tag of one) and tags by
// name; services by name and by type; domains by name and display name.
func (e *Env) vocabulary(ctx context.Context, p *meridian.Principal) []term {
	var out []term
	add := func(name string, f search.Field, values ...string) {
		if ws := nameWords(name); len(ws) > 0 && len(values) > 0 {
			out = append(out, term{phrase: ws, field: f, values: values})
		}
	}
	for _, k := range e.Registry().Kinds() {
		words := nameWords(k.Name)
		add(k.Name, search.FieldEntityType, k.Name)
		plural := append(append([]string{}, words[:len(words)-1]...), pluralOf(words[len(words)-1]))
		add(strings.Join(plural, " "), search.FieldEntityType, k.Name)
		if len(words) > 1 { // "mlmodel", "glossaryterms"
			add(strings.Join(words, ""), search.FieldEntityType, k.Name)
			add(strings.Join(plural, ""), search.FieldEntityType, k.Name)
		}
	}
	list := func(kind string, fields string) []meridian.Entity {
		k, ok := e.Registry().Kind(kind)
		if !ok {
			return nil
		}
		page, err := e.Entities.List(ctx, p, k.Name, store.ListOptions{Limit: nlqVocabulary, Fields: fields})
		if err != nil {
			return nil
		}
		return page.Data
	}
	tags := list(meridian.KindTag, "")
	for _, c := range list(meridian.KindClassification, "") {
		if strings.EqualFold(c.Name(), tierClassification) {
			continue // tiers are read as "tier N"
		}
		var values []string
		for _, t := range tags {
			if classificationOf(t.FQN()) == c.Name() {
				values = append(values, t.FQN())
			}
		}
		add(c.Name(), search.FieldTags, values...)
	}
	for _, t := range tags {
		if !strings.EqualFold(classificationOf(t.FQN()), tierClassification) {
			add(t.Name(), search.FieldTags, t.FQN())
		}
	}
	byType := map[string][]string{}
	for _, k := range e.Registry().Kinds() {
		if !k.Service {
			continue
		}
		for _, s := range list(k.Name, "") {
			add(s.Name(), search.FieldService, s.Name())
			if st := s.String("serviceType"); st != "" {
				byType[st] = append(byType[st], s.Name())
			}
		}
	}
	for st, names := range byType {
		add(st, search.FieldService, names...)
	}
	for _, d := range list(kindDomain, "") {
		add(d.Name(), search.FieldDomains, d.FQN())
		if dn := d.String("displayName"); dn != "" {
			add(dn, search.FieldDomains, d.FQN())
		}
	}
	// Longest first; among equals, catalog names before entity types ("sales domain").
	slices.SortStableFunc(out, func(a, b term) int {
		isKind := func(t term) int {
			if t.field == search.FieldEntityType {
				return 1
			}
			return 0
		}
		return cmp.Or(len(b.phrase)-len(a.phrase), isKind(a)-isKind(b))
	})
	return out
}

// nameWords splits a name into lower-case words: at camelCase humps and at every
// character that is not a letter or a digit.
func nameWords(name string) []string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
			b.WriteRune(' ')
		}
		b.WriteRune(r)
	}
	return nlqTokens(b.String())
}

// pluralOf is the English plural of a noun as kinds are named.
func pluralOf(w string) string {
	switch {
	case strings.HasSuffix(w, "y") && !strings.HasSuffix(w, "ey"):
		return w[:len(w)-1] + "ies"
	case strings.HasSuffix(w, "s") || strings.HasSuffix(w, "x") || strings.HasSuffix(w, "ch"):
		return w + "es"
	}
	return w + "s"
}
