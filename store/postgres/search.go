package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// Keyword search on search_docs (migrations/0001_init.sql): a tsvector over the stems
// of the name (weight A), display name (B), description (C) and column words (D) with
// a GIN index; search_vocab (0004) and search_vocab_pending (0005) hold the words typo
// correction suggests, and search_terms (0006) the index's terms, which a query word
// is expanded into (vocab.go, termsStarting).
//
// Matching and ranking mirror store/sqlite's, so both drivers answer alike (the flow,
// stop words, typo correction and relaxation are store.KeywordSearch's): a word group
// matches when one of its stems starts a word ('order':* | 'ordr':*, sent as the whole
// terms that start with them), and
//
//	20*matched + 4*tier + nameBonus + ts_rank('{0.05, 0.2, 0.6, 1.0}', tsv, query)
//
// matched is the number of query words the document holds. tier is 4 when every word
// matches in the name, 3 in the name or display name, 2 in those or the description,
// 1 otherwise. nameBonus is 2 when the name's words equal the query's words, 1 when
// they start with them. ts_rank is below 1, so it orders hits only within a tier and
// bonus. A query without words scores 1 (matchAll). Ties are broken by FQN (byte
// order), then id.
//
// When a single word matches nothing at all, even corrected, a search that is not
// Strict falls back to
// trigram similarity on the name words (pg_trgm; similarity above 0.3, or word
// similarity above 0.6), which SQLite has no equivalent for.
const (
	rankWeights = `'{0.05, 0.2, 0.6, 1.0}'::float4[]`
	exactScore  = `(20 * (%[6]s) + 4 * CASE WHEN tsv @@ to_tsquery('simple', %[2]s::text) THEN 4
 WHEN tsv @@ to_tsquery('simple', %[3]s::text) THEN 3
 WHEN tsv @@ to_tsquery('simple', %[4]s::text) THEN 2 ELSE 1 END
 + CASE WHEN name_words = %[5]s::text THEN 2 WHEN starts_with(name_words, %[5]s::text) THEN 1 ELSE 0 END
 + ts_rank(` + rankWeights + `, tsv, to_tsquery('simple', %[1]s::text)))::float8`
	groupMatched = `(tsv @@ to_tsquery('simple', %s::text))::int`
	fuzzyMatch   = `(similarity(name_words, %[1]s::text) > 0.3 OR word_similarity(%[1]s::text, name_words) > 0.6)`
	fuzzyScore   = `greatest(similarity(name_words, %[1]s::text), word_similarity(%[1]s::text, name_words))::float8`
)

// Index adds or replaces the search document of an entity, with the stems of its
// words, and records the changes to the counts of the vocabulary and of the terms. The
// filter fields (service, tags, owners, domains) are stored lower-cased, so term
// filters compare case-insensitively; the source keeps the original spelling. It is
// one statement that answers nothing, so Pipeline can hold it back: the document's
// previous words are read by the statement itself (every part of it sees the rows as
// they were before it), and the words and terms it gains (+1) and loses (-1) are
// appended to search_vocab_pending and search_terms_pending, which no other writer
// waits for (vocab.go).
func (t *tx) Index(ctx context.Context, d search.Doc) error {
	if err := t.write(); err != nil {
		return err
	}
	t.indexed++
	terms := d.Terms()
	var source any = string(d.Source)
	if d.Snapshot {
		source = nil // the snapshot this write stores is read instead (hitSource)
	}
	return t.tx.execOrHold(ctx, wrapErr("index"), indexDoc,
		d.ID, d.Kind, d.FQN, terms.Name, terms.DisplayName, terms.Description, terms.Columns, terms.Service,
		terms.Tags, terms.Owners, terms.Domains, d.Deleted, source, terms.Vocabulary)
}

// indexDoc is Index's statement. The terms a document gains and loses are read from
// its tsvector as it was (old, one row even for a new document) and as the statement
// writes it (doc's RETURNING).
const indexDoc = `WITH old AS (
    SELECT COALESCE(d.vocab, '{}'::text[]) AS words, COALESCE(tsvector_to_array(d.tsv), '{}'::text[]) AS terms
    FROM (SELECT 1) AS one LEFT JOIN search_docs d ON d.id = $1
), doc AS (
    INSERT INTO search_docs
    (id, kind, fqn, name_words, display_words, description_words, column_words, service, tags, owners, domains,
     deleted, source, vocab)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
    ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, fqn = excluded.fqn, name_words = excluded.name_words,
        display_words = excluded.display_words, description_words = excluded.description_words,
        column_words = excluded.column_words, service = excluded.service, tags = excluded.tags,
        owners = excluded.owners, domains = excluded.domains, deleted = excluded.deleted, source = excluded.source,
        vocab = excluded.vocab
    RETURNING tsvector_to_array(tsv) AS terms
), words AS (
    INSERT INTO search_vocab_pending (word, delta)
    SELECT w, 1 FROM old, unnest($14::text[]) AS w WHERE NOT w = ANY(old.words)
    UNION ALL
    SELECT w, -1 FROM old, unnest(old.words) AS w WHERE NOT w = ANY($14::text[])
)
INSERT INTO search_terms_pending (term, delta)
SELECT t, 1 FROM old, doc, unnest(doc.terms) AS t WHERE NOT t = ANY(old.terms)
UNION ALL
SELECT t, -1 FROM old, doc, unnest(old.terms) AS t WHERE NOT t = ANY(doc.terms)`

// Unindex removes an entity's search document; removing a missing one is not an error.
// The search_docs_vocab trigger takes its words out of the vocabulary and its terms out
// of search_terms.
func (t *tx) Unindex(ctx context.Context, id string) error {
	if err := t.write(); err != nil {
		return err
	}
	t.indexed++
	if _, err := t.tx.Exec(ctx, "DELETE FROM search_docs WHERE id = $1", id); err != nil {
		return fmt.Errorf("postgres: unindex: %w", err)
	}
	return nil
}

// isWord reports whether s is one search word as search.Words makes them: letters
// and digits only. Only such words reach a tsquery.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// operand is one alternative of a word group in a tsquery: a whole term of the index,
// or a prefix matching every term that starts with it.
type operand struct {
	term   string
	prefix bool
}

// tsquery returns the tsquery text of groups of operands, each group matching when one
// of its operands does, optionally only in the given weights ("A", "AB", …):
// ('customer':A | 'cus':*A) & 'order':A. With all every group is required, otherwise
// any. The terms were checked by isWord, so quoting them cannot change the
// expression's structure.
func tsquery(groups [][]operand, all bool, weights string) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		alts := make([]string, len(g))
		for j, o := range g {
			alts[j] = "'" + o.term + "'"
			switch {
			case o.prefix:
				alts[j] += ":*" + weights
			case weights != "":
				alts[j] += ":" + weights
			}
		}
		parts[i] = "(" + strings.Join(alts, " | ") + ")"
	}
	if all {
		return strings.Join(parts, " & ")
	}
	return strings.Join(parts, " | ")
}

// searchFilters turns the kinds, term filters and the deleted switch into conditions
// on search_docs. Values compare case-insensitively.
func searchFilters(q search.Query, args *params) ([]string, error) {
	var where []string
	if len(q.Kinds) > 0 {
		where = append(where, "kind = ANY("+args.add(q.Kinds)+"::text[])")
	}
	deletedFilter := false
	for _, f := range q.Filters {
		vals := search.Lower(f.Values)
		switch f.Field {
		case search.FieldEntityType:
			where = append(where, "lower(kind) = ANY("+args.add(vals)+"::text[])")
		case search.FieldService:
			where = append(where, "service = ANY("+args.add(vals)+"::text[])")
		case search.FieldTags, search.FieldOwners, search.FieldDomains:
			// The column name is one of three constants, never caller text.
			where = append(where, string(f.Field)+" && "+args.add(vals)+"::text[]")
		case search.FieldDeleted:
			deletedFilter = true
			bs := make([]bool, len(vals))
			for i, v := range vals {
				b, err := search.DeletedValue(v)
				if err != nil {
					return nil, err
				}
				bs[i] = b
			}
			where = append(where, "deleted = ANY("+args.add(bs)+"::bool[])")
		default:
			return nil, meridian.Errorf(meridian.EInvalid, "Unsupported search filter field %s", f.Field)
		}
	}
	switch {
	case q.Deleted != nil:
		where = append(where, "deleted = "+args.add(*q.Deleted))
	case !deletedFilter:
		where = append(where, "NOT deleted")
	}
	return where, nil
}

// Search runs a keyword search (store.KeywordSearch): one page of hits, best first,
// the count of every match and the aggregations asked for. A term that is not a word
// is EInvalid.
func (t *tx) Search(ctx context.Context, q search.Query) (search.Result, error) {
	for _, term := range q.Terms {
		if term != "" && !isWord(term) {
			return search.Result{}, meridian.Errorf(meridian.EInvalid, "Invalid search term %q", term)
		}
	}
	// pgx prepares every statement, and PostgreSQL plans a prepared statement once for
	// any parameters (a generic plan) after its fifth run. Knowing neither the tsqueries
	// nor the filters, that plan ranked the same documents slower: the keyword side of
	// a hybrid search at 100,000 tables took 29-32 ms p50 on generic plans and 19-20 on
	// plans made for each statement's parameters. A search's statements are planned
	// for their parameters; planning them costs well under a millisecond.
	if _, err := t.tx.Exec(ctx, "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"); err != nil {
		return search.Result{}, fmt.Errorf("postgres: search: %w", err)
	}
	res, err := store.KeywordSearch(ctx, &keywordIndex{t: t}, q)
	if err != nil || q.Strict || res.Total > 0 || len(res.Searched) != 1 {
		return res, err
	}
	// One word that matches nothing, even corrected: try a trigram match on the name.
	var args params
	where, _ := searchFilters(q, &args)
	term := args.add(search.Stem(res.Searched[0]))
	fuzzy, err := t.search(ctx, where, fmt.Sprintf(fuzzyMatch, term), fmt.Sprintf(fuzzyScore, term), args, len(args), q, nil)
	fuzzy.Searched = res.Searched
	return fuzzy, err
}

// keywordIndex is the tsvector index as store.KeywordSearch drives it, for one search.
// terms keeps each stem's operands (termsStarting), which the search's HasWord and its
// up to three Match calls would otherwise read again.
type keywordIndex struct {
	t     *tx
	terms map[string][]operand
}

// maxPrefixTerms bounds the whole terms one query word is expanded to (termsStarting);
// a word starting more terms stays a prefix.
const maxPrefixTerms = 16

// termsStartingQuery is termsStarting's statement: the terms from $1 (inclusive) to $2
// (exclusive) some document holds, in term order, at most $3, each counted in
// search_terms plus its pending deltas (migrations/0006).
const termsStartingQuery = `SELECT term FROM (
    SELECT term, docs FROM search_terms WHERE term >= $1 AND term < $2
    UNION ALL
    SELECT term, delta FROM search_terms_pending WHERE term >= $1 AND term < $2
) AS t GROUP BY term HAVING sum(docs) > 0 ORDER BY term LIMIT $3`

// termsStarting returns the operands a query stem matches: the terms of the index that
// start with it, as whole terms, or the stem as a prefix when more than maxPrefixTerms
// do (or a term is not a plain word); none when no document holds a term starting
// with it. The GIN index answers a prefix by gathering the posting lists of every term
// under it into a bitmap, in each statement that matches it, while whole terms are
// read lazily and skipped through: 58 against 6 ms for a narrowing level's scan of a
// common word at 100,000 tables. The terms are read in the search's snapshot, so the
// expansion is exact.
func (k *keywordIndex) termsStarting(ctx context.Context, w string) ([]operand, error) {
	if ops, ok := k.terms[w]; ok {
		return ops, nil
	}
	ops, err := k.readTermsStarting(ctx, w)
	if err != nil {
		return nil, err
	}
	if k.terms == nil {
		k.terms = map[string][]operand{}
	}
	k.terms[w] = ops
	return ops, nil
}

// readTermsStarting is termsStarting without the search's memory.
func (k *keywordIndex) readTermsStarting(ctx context.Context, w string) ([]operand, error) {
	prefix := []operand{{term: w, prefix: true}}
	last, size := utf8.DecodeLastRuneInString(w)
	if last == utf8.RuneError || last == utf8.MaxRune {
		return prefix, nil
	}
	// Every term starting with w sorts (byte order) at or after w and before w with
	// its last letter raised by one.
	rows, err := k.t.tx.Query(ctx, termsStartingQuery, w, w[:len(w)-size]+string(last+1), maxPrefixTerms+1)
	if err != nil {
		return nil, fmt.Errorf("postgres: search terms: %w", err)
	}
	terms, err := rowscan.All(rows, rowscan.String)
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("postgres: search terms: %w", err)
	}
	if len(terms) > maxPrefixTerms {
		return prefix, nil
	}
	ops := make([]operand, 0, len(terms))
	for _, t := range terms {
		if !isWord(t) {
			return prefix, nil
		}
		ops = append(ops, operand{term: t})
	}
	return ops, nil
}

// operands turns groups of query stems into groups of operands (termsStarting). A
// group no term starts with becomes its first stem as a whole term, which no document
// holds, so that the group matches nothing as it did.
func (k *keywordIndex) operands(ctx context.Context, groups [][]string) ([][]operand, error) {
	out := make([][]operand, len(groups))
	for i, g := range groups {
		for _, w := range g {
			ops, err := k.termsStarting(ctx, w)
			if err != nil {
				return nil, err
			}
			for _, o := range ops {
				if !slices.Contains(out[i], o) {
					out[i] = append(out[i], o)
				}
			}
		}
		if len(out[i]) == 0 && len(g) > 0 {
			out[i] = []operand{{term: g[0]}}
		}
	}
	return out, nil
}

// HasWord implements store.KeywordIndex.
func (k *keywordIndex) HasWord(ctx context.Context, stem string) (bool, error) {
	ops, err := k.termsStarting(ctx, stem)
	return len(ops) > 0, err
}

// Vocabulary implements store.KeywordIndex.
func (k *keywordIndex) Vocabulary(ctx context.Context, w string) ([]search.WordCount, error) {
	first, _ := utf8.DecodeRuneInString(w)
	n, edits := utf8.RuneCountInString(w), search.MaxEdits(w)
	rows, err := k.t.tx.Query(ctx, vocabularyNear, string(first), string(first+1), n-edits, n+edits, store.MaxVocabularyScan)
	if err != nil {
		return nil, fmt.Errorf("postgres: search vocabulary: %w", err)
	}
	out, err := rowscan.All(rows, rowscan.WordCount)
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("postgres: search vocabulary: %w", err)
	}
	return out, nil
}

// Match implements store.KeywordIndex.
func (k *keywordIndex) Match(ctx context.Context, q search.Query, stems [][]string, all bool) (search.Result, error) {
	var args params
	where, err := searchFilters(q, &args)
	if err != nil {
		return search.Result{}, err
	}
	if len(stems) == 0 {
		return k.t.matchAll(ctx, where, args, q)
	}
	groups, err := k.operands(ctx, stems)
	if err != nil {
		return search.Result{}, err
	}
	query := args.add(tsquery(groups, all, ""))
	match := "tsv @@ to_tsquery('simple', " + query + "::text)"
	n := len(args) // the count query binds only the parameters of where and match
	matched := fmt.Sprint(len(groups))
	if !all {
		each := make([]string, len(groups))
		for i, g := range groups {
			each[i] = fmt.Sprintf(groupMatched, args.add(tsquery([][]operand{g}, true, "")))
		}
		matched = strings.Join(each, " + ")
	}
	phrase := make([]string, len(stems))
	for i, g := range stems {
		phrase[i] = g[0]
	}
	score := fmt.Sprintf(exactScore, query, args.add(tsquery(groups, true, "A")), args.add(tsquery(groups, true, "AB")),
		args.add(tsquery(groups, true, "ABC")), args.add(strings.Join(phrase, " ")), matched)
	var levels []string
	if !all {
		levels = store.NarrowingLevels(groups, func(g [][]operand) string { return tsquery(g, true, "") }, " | ")
	}
	return k.t.search(ctx, where, match, score, args, n, q, levels)
}

// pageQuery ranks the documents matching a filter (%[2]s) by a score (%[1]s) and
// answers one page (LIMIT %[3]s OFFSET %[4]s), each hit with the count of documents
// ranked. The ranking carries each document's id, FQN and score alone, never its source
// or tsvector (OFFSET 0 keeps the planner from merging the inner query into the outer):
// counting through a window over whole rows wrote every ranked row to a temporary file
// (17 MB for 25,000 documents). The page's sources are read by id afterwards.
const pageQuery = `SELECT r.id, d.kind, r.fqn, ` + hitSource + `, r.score, r.ranked FROM (
    SELECT id, fqn, score, count(*) OVER () AS ranked FROM (
        SELECT id, fqn, %[1]s AS score FROM search_docs%[2]s OFFSET 0
    ) AS m ORDER BY score DESC, fqn, id LIMIT %[3]s OFFSET %[4]s
) AS r JOIN search_docs d ON d.id = r.id ORDER BY r.score DESC, r.fqn, r.id`

// matchAllPage answers a page of a search without words (%[1]s the filter, then LIMIT
// and OFFSET): every document scores 1, in FQN order, which the search_docs_fqn index
// (migrations/0008) gives without ranking every document, as pageQuery would.
const matchAllPage = `SELECT d.id, d.kind, d.fqn, ` + hitSource + `, 1.0::float8 FROM search_docs d%[1]s
ORDER BY d.fqn, d.id LIMIT %[2]s OFFSET %[3]s`

// hitSource is the source of a hit of search_docs d: the one stored with it or, when
// none is (the document of a snapshot, migrations/0009), the snapshot of the entity's
// current version, which the write that indexed it stored, with its entityType added.
const hitSource = `COALESCE(d.source, jsonb_build_object('entityType', d.kind) || ` + rowscan.HitSnapshot + `)`

// matchAll answers a search without words: the page q asks for, in FQN order, the
// count of the documents matching where (whose parameters are args) and the
// aggregations q asks for.
func (t *tx) matchAll(ctx context.Context, where []string, args params, q search.Query) (search.Result, error) {
	filter := " WHERE " + strings.Join(where, " AND ")
	res := search.Result{Hits: []search.Hit{}}
	if err := t.count(ctx, filter, args, q, &res); err != nil {
		return search.Result{}, err
	}
	if q.Size > 0 && q.From < res.Total {
		pageArgs := slices.Clone(args)
		rows, err := t.tx.Query(ctx, fmt.Sprintf(matchAllPage, filter, pageArgs.add(q.Size), pageArgs.add(q.From)), pageArgs...)
		if err != nil {
			return search.Result{}, fmt.Errorf("postgres: search: %w", err)
		}
		res.Hits, err = rowscan.All(rows, rowscan.SearchHit)
		rows.Close()
		if err != nil {
			return search.Result{}, fmt.Errorf("postgres: search: %w", err)
		}
	}
	if len(q.Aggregations) > 0 {
		var err error
		if res.Aggregations, err = t.aggregate(ctx, q, res.Total, where, args); err != nil {
			return search.Result{}, err
		}
	}
	return res, nil
}

// countUpTo counts the documents matching filter up to the limit in parameter $limit.
func countUpTo(filter string, limit int) string {
	return "SELECT COUNT(*) FROM (SELECT 1 FROM search_docs" + filter + " LIMIT $" + strconv.Itoa(limit) + ") c"
}

// search counts the documents matching where and match, whose parameters are
// args[:n], and returns the page q asks for, ordered by score, with the aggregations q
// asks for. levels, from the most words held down, are tsqueries of the documents an
// any-word page may come from (narrowing): the page is ranked among the first level's
// documents that fill it, still scored on the whole question, so scores do not change;
// an any-word question otherwise ranks most of a large catalog. A level's documents all
// match, so its page is filtered by the level alone: the index would otherwise read
// every word's documents twice, once for each expression.
//
// Each statement that matches prefixes against the index costs about the same however
// few rows it answers (the index reads every document holding a word that starts with
// one of them), so as few are sent as the answer allows. A page statement also counts
// the documents it ranked (count(*) OVER ()): ranking every match, it counts the total;
// ranking a level's, it tells whether the level filled the page, and when the level
// holds q.CountUpTo documents or more, so does the whole match. The total is counted
// on its own only when neither tells it: no page asked for, a page past the last
// document, or a level that filled the page with fewer than q.CountUpTo documents.
func (t *tx) search(ctx context.Context, where []string, match, score string, args params, n int, q search.Query, levels []string) (search.Result, error) {
	base := " WHERE " + strings.Join(where, " AND ")
	where = append(where[:len(where):len(where)], match)
	filter := base + " AND " + match
	res := search.Result{Hits: []search.Hit{}}
	counted := false
	if q.Size > 0 {
		need := max(q.From+q.Size, 1)
		page := func(filter string, args params) ([]search.Hit, int, error) {
			query := fmt.Sprintf(pageQuery, score, filter, args.add(q.Size), args.add(q.From))
			rows, err := t.tx.Query(ctx, query, args...)
			if err != nil {
				return nil, 0, fmt.Errorf("postgres: search: %w", err)
			}
			defer rows.Close()
			hits, ranked := []search.Hit{}, 0
			for rows.Next() {
				var h search.Hit
				if err := rows.Scan(&h.ID, &h.Kind, &h.FQN, &h.Source, &h.Score, &ranked); err != nil {
					return nil, 0, fmt.Errorf("postgres: search: %w", err)
				}
				hits = append(hits, h)
			}
			if err := rows.Err(); err != nil {
				return nil, 0, fmt.Errorf("postgres: search: %w", err)
			}
			return hits, ranked, nil // ranked is 0 when the page is past the last document
		}
		filled := false
		for _, level := range levels {
			largs := slices.Clone(args)
			hits, ranked, err := page(base+" AND tsv @@ to_tsquery('simple', "+largs.add(level)+"::text)", largs)
			if err != nil {
				return search.Result{}, err
			}
			if ranked >= need {
				res.Hits, filled = hits, true
				if q.CountUpTo > 0 && ranked >= q.CountUpTo {
					res.Total, counted = q.CountUpTo, true
				}
				break
			}
		}
		if !filled {
			hits, ranked, err := page(filter, slices.Clone(args))
			if err != nil {
				return search.Result{}, err
			}
			res.Hits = hits
			if ranked > 0 || q.From == 0 {
				res.Total, counted = ranked, true
				if q.CountUpTo > 0 {
					res.Total = min(res.Total, q.CountUpTo)
				}
			}
		}
	}
	if !counted {
		if err := t.count(ctx, filter, args[:n], q, &res); err != nil {
			return search.Result{}, err
		}
	}
	if len(q.Aggregations) > 0 {
		var err error
		if res.Aggregations, err = t.aggregate(ctx, q, res.Total, where, args[:n:n]); err != nil {
			return search.Result{}, err
		}
	}
	return res, nil
}

// count counts the documents matching filter, whose parameters are args, into
// res.Total: up to q.CountUpTo when it is above 0.
func (t *tx) count(ctx context.Context, filter string, args params, q search.Query, res *search.Result) error {
	count, countArgs := "SELECT COUNT(*) FROM search_docs"+filter, args
	if q.CountUpTo > 0 {
		count, countArgs = countUpTo(filter, len(args)+1), append(slices.Clone(args), q.CountUpTo)
	}
	if err := t.tx.QueryRow(ctx, count, countArgs...).Scan(&res.Total); err != nil {
		return fmt.Errorf("postgres: search count: %w", err)
	}
	return nil
}

// aggregate counts the total documents matching where (whose parameters are args) by
// each field q asks for, in one GROUP BY query per field (none when total is 0): the
// largest counts first, ties by key in byte order, at most q.BucketLimit() buckets. A
// document counts once per distinct value it holds; documents without a value are
// left out.
func (t *tx) aggregate(ctx context.Context, q search.Query, total int, where []string, args params) (map[search.Field][]search.Bucket, error) {
	out := make(map[search.Field][]search.Bucket, len(q.Aggregations))
	for _, f := range q.Aggregations {
		out[f] = []search.Bucket{}
		if total == 0 {
			continue
		}
		var join, key, count string
		cond := where[:len(where):len(where)]
		switch f {
		case search.FieldEntityType:
			key, count = "kind", "count(*)"
		case search.FieldService:
			key, count = "service", "count(*)"
			cond = append(cond, "service <> ''")
		case search.FieldTags, search.FieldOwners, search.FieldDomains:
			// The column name is one of three constants, never caller text.
			join, key, count = " CROSS JOIN LATERAL unnest("+string(f)+") AS v(value)", "v.value", "count(DISTINCT id)"
		default:
			return nil, meridian.Errorf(meridian.EInvalid, "Unsupported search aggregation %s", f)
		}
		bind := args[:len(args):len(args)]
		query := "SELECT " + key + ", " + count + " AS n FROM search_docs" + join + " WHERE " + strings.Join(cond, " AND ") +
			" GROUP BY " + key + ` ORDER BY n DESC, ` + key + ` COLLATE "C" LIMIT ` + bind.add(q.BucketLimit())
		rows, err := t.tx.Query(ctx, query, bind...)
		if err != nil {
			return nil, fmt.Errorf("postgres: search aggregation: %w", err)
		}
		out[f], err = rowscan.All(rows, rowscan.Bucket)
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("postgres: search aggregation: %w", err)
		}
	}
	return out, nil
}
