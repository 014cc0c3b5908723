package tools

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Knowledge for assistants: context memories, knowledge articles (pages) and reading
// any knowledge entity whole or by its most relevant passages.

// Context memory and article enums, as schema/kinds/contextMemory.json and page.json
// declare them.
var (
	memoryTypes  = []string{"Fact", "Definition", "Instruction", "Preference", "Example"}
	memoryScopes = []string{"User", "Team", "Organization"}
	pageTypes    = []string{"Article", "Page"}
	// knowledgeTypes are the entity types get_knowledge_content reads.
	knowledgeTypes = []string{"glossaryTerm", "metric", "page", "contextMemory"}
)

const (
	// writtenTextLimit caps the long text fields (content, answer) in a write tool's
	// answer; the stored text is whole and get_knowledge_content reads it.
	writtenTextLimit = 2000
	// maxQueryChars bounds get_knowledge_content's query.
	maxQueryChars = 1000
	// passagesDefault and passagesMax bound the passages get_knowledge_content returns.
	passagesDefault = 3
	passagesMax     = 10
)

func createContextMemory(env *Env) *Tool {
	return &Tool{
		Name:  "create_context_memory",
		Title: "Create context memory",
		Description: "Remember a question and its answer for assistants (e.g. \"When does our fiscal year start?\" → " +
			"\"On 1 February.\"). Upserts by name: calling again with the same name updates the memory. " +
			"memoryType says what it is (Fact, Definition, Instruction, Preference, Example); memoryScope who it " +
			"applies to (User, Team, Organization)." + confirmFirst,
		Input: Object(Props{
			"name":        String("Memory name, unique; reuse it to update the memory, e.g. fiscal_year_start."),
			"question":    String("The question the memory answers (at most 10,000 characters)."),
			"answer":      String("The answer, markdown (at most 100,000 characters)."),
			"memoryType":  Enum("What kind of knowledge it is (default Fact on create).", memoryTypes...),
			"memoryScope": Enum("Who it applies to (default Organization on create).", memoryScopes...),
			"description": String("Markdown description."),
			"source":      String("Where the answer comes from: a URL or a note."),
			"owners":      Strings("User or team names of the owners."),
			"tags":        Strings("Tag or glossary term FQNs."),
			"domains":     Strings("Domain FQNs."),
		}, "name", "question", "answer"),
		Aliases: map[string]string{"type": "memoryType", "scope": "memoryScope"},
		Output:  writeOutput("contextMemory"),
		Write:   true, Destructive: true, Idempotent: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": strings.TrimSpace(a.String("name")), "question": a.String("question"),
				"answer": a.String("answer")}
			for _, f := range []string{"memoryType", "memoryScope", "description", "source"} {
				setIf(body, f, a, f)
			}
			if err := env.knowledgeRefs(ctx, p, a, body); err != nil {
				return nil, err
			}
			res, err := env.Entities.CreateOrUpdate(ctx, p, "contextMemory", body)
			if err != nil {
				return nil, err
			}
			m := written("contextMemory", res)
			TrimText(m, "answer", writtenTextLimit)
			return m, nil
		},
	}
}

func createArticle(env *Env) *Tool {
	return &Tool{
		Name:  "create_article",
		Title: "Create knowledge article",
		Description: "Write a knowledge article (a knowledge center page) with a markdown body, optionally under a " +
			"parent page: its fullyQualifiedName is then <parent FQN>.<name>. Calling again with the same name and " +
			"parent updates the article." + confirmFirst,
		Input: Object(Props{
			"name":        String("Article name, e.g. Refund_policy (no \"::\")."),
			"content":     String("The markdown body (at most 1,000,000 characters)."),
			"displayName": String("Title shown to readers, e.g. Refund policy."),
			"description": String("Short markdown summary."),
			"parent":      String("FQN of the parent page, e.g. Finance_handbook, for a nested article."),
			"pageType":    Enum("Article (default) or Page (a page that groups articles).", pageTypes...),
			"owners":      Strings("User or team names of the owners."),
			"reviewers":   Strings("User names (or one team name) of the reviewers."),
			"tags":        Strings("Tag or glossary term FQNs."),
			"domains":     Strings("Domain FQNs."),
		}, "name", "content"),
		Aliases: map[string]string{"title": "displayName", "body": "content", "markdown": "content",
			"parentPage": "parent", "parentFqn": "parent"},
		Output: writeOutput("page"),
		Write:  true, Destructive: true, Idempotent: true,
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			body := meridian.Entity{"name": strings.TrimSpace(a.String("name")), "content": a.String("content")}
			for _, f := range []string{"displayName", "description", "pageType"} {
				setIf(body, f, a, f)
			}
			if parent := strings.TrimSpace(a.String("parent")); parent != "" {
				body["parent"] = parent
			}
			if l := a.Strings("reviewers"); len(l) > 0 {
				body["reviewers"] = principalNames(l)
			}
			if err := env.knowledgeRefs(ctx, p, a, body); err != nil {
				return nil, err
			}
			res, err := env.Entities.CreateOrUpdate(ctx, p, "page", body)
			if err != nil {
				if parent, _ := body["parent"].(string); parent != "" && meridian.ErrorCode(err) == meridian.ENotFound &&
					strings.Contains(meridian.ErrorMessage(err), parent) {
					return nil, withHint(err, "parent names an existing page by its fullyQualifiedName; create the parent first, or search_metadata with entityType page")
				}
				return nil, err
			}
			m := written("page", res)
			TrimText(m, "content", writtenTextLimit)
			return m, nil
		},
	}
}

// knowledgeRefs copies the owners, tags and domains arguments into a create body.
func (e *Env) knowledgeRefs(ctx context.Context, p *meridian.Principal, a Args, body meridian.Entity) error {
	if l := a.Strings("owners"); len(l) > 0 {
		body["owners"] = principalNames(l)
	}
	if l := a.Strings("domains"); len(l) > 0 {
		body["domains"] = fqnList(l)
	}
	if l := a.Strings("tags"); len(l) > 0 {
		labels, err := e.tagLabels(ctx, p, l)
		if err != nil {
			return err
		}
		body["tags"] = labels
	}
	return nil
}

func getKnowledgeContent(env *Env) *Tool {
	passage := OpenObject("One passage of the knowledge text.", Props{
		"text":      String("The passage."),
		"field":     String("The field it comes from: description, content, question, answer, …"),
		"heading":   String("The markdown heading the passage sits under, if any."),
		"position":  Integer("Position of the passage in the text, from 0."),
		"score":     Number("Relevance to the query; 0 when nothing matched."),
		"truncated": Boolean("True when the passage is only part of its field's text (the text was cut into passages)."),
	})
	textSection := OpenObject("One field of the knowledge text.", Props{
		"field":     String("Field name."),
		"heading":   String("Heading shown for the field."),
		"text":      String("The field's text."),
		"truncated": Boolean("True when the text was cut to fit the result budget."),
	})
	return &Tool{
		Name:  "get_knowledge_content",
		Title: "Get knowledge content",
		Description: "Read a knowledge entity: a glossaryTerm, metric, page (knowledge article) or contextMemory, by " +
			"entityType and fqn. Without query it returns the whole text (cut to the result budget and flagged " +
			"contentTruncated). With query it returns the most relevant passages (size, default 3, max 10), each " +
			"flagged truncated when it is only part of its field. format markdown (default) adds the text as one " +
			"markdown document; json returns the fields as sections.",
		Input: Object(Props{
			"entityType": Enum("Kind of knowledge entity.", knowledgeTypes...),
			"fqn":        String("Fully qualified name, e.g. BusinessTerms.Revenue or Finance_handbook.Refund_policy."),
			"query":      String("Question or keywords; selects the most relevant passages (at most 1,000 characters)."),
			"size":       Integer("Passages to return with query (1–10; larger values are clamped).").Min(1).Max(passagesMax).Default(passagesDefault),
			"format":     Enum("markdown (default) or json.", "markdown", "json").Default("markdown"),
		}, "entityType", "fqn"),
		Aliases: map[string]string{"name": "fqn"},
		Output: entityOutput("The knowledge entity's text, whole or as its most relevant passages.", Props{
			"format":           String("markdown or json."),
			"markdown":         String("The text as one markdown document (format markdown)."),
			"sections":         Array("The text by field (format json, without query).", textSection),
			"contentTruncated": Boolean("True when the answer holds only part of the text: cut to the budget, or passages only."),
			"totalCharacters":  Integer("Length of the whole text in characters."),
			"query":            String("The query the passages were chosen by."),
			"passages":         Array("The most relevant passages, best first (with query).", passage),
			"totalPassages":    Integer("Passages the text was cut into."),
			"matchedPassages":  Integer("Passages that share a word with the query."),
			"returned":         Integer("Passages in this answer."),
			"owners":           Strings("Owner names."),
			"tags":             Strings("Tag and glossary term FQNs."),
			"hint":             String("What to try next when no passage matched."),
		}),
		Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
			query := strings.TrimSpace(a.String("query"))
			if n := utf8.RuneCountInString(query); n > maxQueryChars {
				return nil, withHint(meridian.Errorf(meridian.EInvalid, "Parameter 'query' is %d characters, over the maximum of %d", n, maxQueryChars),
					"Ask with a few keywords or a short question")
			}
			k, err := env.kind(a.String("entityType"))
			if err != nil {
				return nil, err
			}
			ent, err := env.get(ctx, p, k, a.String("fqn"), fieldsOf(k, "owners", "tags"), store.IncludeNonDeleted)
			if err != nil {
				return nil, err
			}
			return env.knowledgeContent(ctx, k, ent, query, a.Int("size"), a.String("format"))
		},
	}
}

// knowledgeField is a field that holds knowledge text, with the heading it is shown
// under. Fields are read by name, whatever the kind: a context memory has question and
// answer, an article content, a glossary term synonyms, a metric its expression.
type knowledgeField struct{ field, heading string }

var knowledgeFields = []knowledgeField{
	{"question", "Question"}, {"answer", "Answer"}, {"description", "Description"}, {"content", ""},
	{"synonyms", "Synonyms"}, {"metricExpression", "Expression"},
}

// textSection is one field's knowledge text.
type textSection struct {
	field, heading, text string
}

// sectionsOf returns the knowledge text of an entity, field by field, in reading order.
func sectionsOf(e meridian.Entity) []textSection {
	var out []textSection
	for _, kf := range knowledgeFields {
		var text string
		switch v := e[kf.field].(type) {
		case string:
			text = v
		case []any:
			var parts []string
			for _, x := range v {
				if s, ok := x.(string); ok && s != "" {
					parts = append(parts, s)
				}
			}
			text = strings.Join(parts, ", ")
		case map[string]any:
			if code, _ := v["code"].(string); code != "" {
				text = code
				if lang, _ := v["language"].(string); lang != "" {
					text = fmt.Sprintf("%s (%s)", code, lang)
				}
			}
		}
		if text = strings.TrimSpace(text); text != "" {
			out = append(out, textSection{field: kf.field, heading: kf.heading, text: text})
		}
	}
	return out
}

// knowledgeContent shapes get_knowledge_content's answer for one entity.
func (e *Env) knowledgeContent(ctx context.Context, k *meridian.Kind, ent meridian.Entity, query string, size int, format string) (map[string]any, error) {
	title := ent.String("displayName")
	if title == "" {
		title = ent.Name()
	}
	out := map[string]any{"entityType": k.Name, "id": ent.ID(), "name": ent.Name(), "fullyQualifiedName": ent.FQN(),
		"format": format, "owners": refValues(ent["owners"], "name"), "tags": refValues(ent["tags"], "tagFQN")}
	if dn := ent.String("displayName"); dn != "" {
		out["displayName"] = dn
	}
	if v, ok := ent["version"]; ok {
		out["version"] = v
	}
	secs := sectionsOf(ent)
	total := 0
	for _, s := range secs {
		total += utf8.RuneCountInString(s.text)
	}
	out["totalCharacters"] = total

	if query == "" {
		// The whole text, within what the budget leaves after the rest of the answer.
		room := e.Budget - jsonLen(out) - 1000
		fitted, short := fitSections(secs, room)
		out["contentTruncated"] = short
		if format == "json" {
			rows := make([]any, 0, len(fitted))
			for _, s := range fitted {
				rows = append(rows, map[string]any{"field": s.field, "heading": s.heading, "text": s.text,
					"truncated": short && s.text != textOf(secs, s.field)})
			}
			out["sections"] = rows
		} else {
			out["markdown"] = renderMarkdown(title, fitted, short)
		}
		if short {
			out["hint"] = "The text is longer than one answer: pass query to read the passages about your question"
		}
		return out, nil
	}

	passages := splitPassages(secs)
	texts := make([]string, len(passages))
	for i, ps := range passages {
		texts[i] = ps.heading + "\n" + ps.text
	}
	scores, err := passageScorer.ScorePassages(ctx, query, texts)
	if err != nil {
		return nil, err
	}
	order, matched := rankPassages(scores, size)
	rows := make([]any, 0, len(order))
	var md strings.Builder
	fmt.Fprintf(&md, "# %s\n\nPassages about %q (%d of %d):\n", title, query, len(order), len(passages))
	for _, i := range order {
		ps := passages[i]
		row := map[string]any{"text": ps.text, "field": ps.field, "position": i, "score": round3(scores[i]), "truncated": ps.partial}
		if ps.heading != "" {
			row["heading"] = ps.heading
		}
		rows = append(rows, row)
		md.WriteString("\n")
		if ps.heading != "" {
			fmt.Fprintf(&md, "**%s**\n\n", ps.heading)
		}
		md.WriteString(ps.text)
		if ps.partial {
			md.WriteString(" […]")
		}
		md.WriteString("\n")
	}
	out["query"] = query
	out["passages"] = rows
	out["totalPassages"] = len(passages)
	out["matchedPassages"] = matched
	out["returned"] = len(rows)
	out["contentTruncated"] = len(rows) < len(passages) || anyPartial(passages, order)
	if matched == 0 {
		out["hint"] = fmt.Sprintf("No passage shares a word with %q; these are the first passages. Try other words, or omit query to read the whole text", query)
	}
	if format != "json" {
		out["markdown"] = md.String()
	}
	return out, nil
}

// fitSections returns the sections cut to room characters in all, and whether any text
// was cut or left out.
func fitSections(secs []textSection, room int) ([]textSection, bool) {
	room = max(room, 200)
	var out []textSection
	used := 0
	for _, s := range secs {
		n := utf8.RuneCountInString(s.text) + utf8.RuneCountInString(s.heading) + 8
		if used+n <= room {
			out = append(out, s)
			used += n
			continue
		}
		if left := room - used - utf8.RuneCountInString(s.heading) - 8; left > 0 {
			s.text = cut(s.text, left)
			out = append(out, s)
		}
		return out, true
	}
	return out, false
}

func textOf(secs []textSection, field string) string {
	for _, s := range secs {
		if s.field == field {
			return s.text
		}
	}
	return ""
}

// renderMarkdown renders the sections as one markdown document under the title.
func renderMarkdown(title string, secs []textSection, short bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", title)
	for _, s := range secs {
		b.WriteString("\n")
		if s.heading != "" {
			fmt.Fprintf(&b, "## %s\n\n", s.heading)
		}
		b.WriteString(s.text)
		b.WriteString("\n")
	}
	if short {
		b.WriteString("\n[…] (cut to fit the answer; pass query to read the passages about a question)\n")
	}
	return b.String()
}

// refNames returns the key of every object in a reference or tag list.
func refValues(v any, key string) []any {
	out := []any{}
	for _, x := range asList(v) {
		if m, ok := x.(map[string]any); ok {
			if s, _ := m[key].(string); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func anyPartial(ps []passageText, order []int) bool {
	for _, i := range order {
		if ps[i].partial {
			return true
		}
	}
	return false
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }
