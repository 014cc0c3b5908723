package postgres

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// Keyword search on search_docs (migrations/0001_init.sql): a tsvector over the name
// (weight A), display name (B), description (C) and column words (D) with a GIN index,
// and a pg_trgm index on the name words for typo-tolerant matches.
//
// Matching: every query word must occur, or start a word ('word':* in a tsquery), in
// one of the text fields. A query without words matches every document. When a
// one-word query matches nothing, the search falls back to trigram similarity on the
// name words (similarity above 0.3, or word similarity above 0.6 so that one word of a
// longer name can match), so "custmer" still finds "customer".
//
// Ranking mirrors store/sqlite's, so both drivers order hits alike:
//
//	4*tier + nameBonus + ts_rank('{0.05, 0.2, 0.6, 1.0}', tsv, query)
//
// tier is 4 when every word matches in the name, 3 in the name or display name, 2 in
// those or the description, 1 otherwise (some word only in column names). nameBonus is
// 2 when the name's words equal the query's words, 1 when they start with them. ts_rank
// is below 1, so it orders hits only within a tier and bonus. Fuzzy hits score their
// trigram similarity (below 1), under every exact hit. A query without words scores 1.
// Ties are broken by FQN (byte order), then id.
const (
	rankWeights = `'{0.05, 0.2, 0.6, 1.0}'::float4[]`
	exactScore  = `(4 * CASE WHEN tsv @@ to_tsquery('simple', %[2]s::text) THEN 4
 WHEN tsv @@ to_tsquery('simple', %[3]s::text) THEN 3
 WHEN tsv @@ to_tsquery('simple', %[4]s::text) THEN 2 ELSE 1 END
 + CASE WHEN name_words = %[5]s::text THEN 2 WHEN starts_with(name_words, %[5]s::text) THEN 1 ELSE 0 END
 + ts_rank(` + rankWeights + `, tsv, to_tsquery('simple', %[1]s::text)))::float8`
	fuzzyMatch = `(similarity(name_words, %[1]s::text) > 0.3 OR word_similarity(%[1]s::text, name_words) > 0.6)`
	fuzzyScore = `greatest(similarity(name_words, %[1]s::text), word_similarity(%[1]s::text, name_words))::float8`
)

// Index adds or replaces the search document of an entity. The filter fields
// (service, tags, owners, domains) are stored lower-cased, so term filters compare
// case-insensitively; the source keeps the original spelling.
func (t *tx) Index(ctx context.Context, d search.Doc) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO search_docs
(id, kind, fqn, name_words, display_words, description_words, column_words, service, tags, owners, domains,
 deleted, source)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, fqn = excluded.fqn, name_words = excluded.name_words,
    display_words = excluded.display_words, description_words = excluded.description_words,
    column_words = excluded.column_words, service = excluded.service, tags = excluded.tags,
    owners = excluded.owners, domains = excluded.domains, deleted = excluded.deleted, source = excluded.source`,
		d.ID, d.Kind, d.FQN, d.Name, d.DisplayName, d.Description, d.Columns, strings.ToLower(d.Service),
		lower(d.Tags), lower(d.Owners), lower(d.Domains), d.Deleted, string(d.Source))
	if err != nil {
		return fmt.Errorf("postgres: index: %w", err)
	}
	return nil
}

// Unindex removes an entity's search document; removing a missing one is not an error.
func (t *tx) Unindex(ctx context.Context, id string) error {
	if err := t.write(); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, "DELETE FROM search_docs WHERE id = $1", id); err != nil {
		return fmt.Errorf("postgres: unindex: %w", err)
	}
	return nil
}

// lower returns the values lower-cased, never nil (the columns are NOT NULL arrays).
func lower(l []string) []string {
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, strings.ToLower(s))
	}
	return out
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

// tsquery returns the tsquery text requiring every word as a prefix, optionally only
// in the given weights ("A", "AB", …): 'cust':*A & 'ord':*A. The words were checked by
// isWord, so quoting them cannot change the expression's structure.
func tsquery(words []string, weights string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = "'" + w + "':*" + weights
	}
	return strings.Join(parts, " & ")
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
		vals := lower(f.Values)
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

// Search runs a keyword search: one page of hits, best first, the count of every match
// and the aggregations asked for.
func (t *tx) Search(ctx context.Context, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	var terms []string
	for _, term := range q.Terms {
		if term == "" {
			continue
		}
		if !isWord(term) {
			return search.Result{}, meridian.Errorf(meridian.EInvalid, "Invalid search term %q", term)
		}
		terms = append(terms, term)
	}

	var args params
	where, err := searchFilters(q, &args)
	if err != nil {
		return search.Result{}, err
	}
	if len(terms) == 0 {
		return t.search(ctx, where, "1.0::float8", args, len(args), q)
	}
	all := args.add(tsquery(terms, ""))
	where = append(where, "tsv @@ to_tsquery('simple', "+all+"::text)")
	n := len(args) // the count query binds only the parameters of where
	score := fmt.Sprintf(exactScore, all, args.add(tsquery(terms, "A")), args.add(tsquery(terms, "AB")),
		args.add(tsquery(terms, "ABC")), args.add(strings.Join(terms, " ")))
	res, err := t.search(ctx, where, score, args, n, q)
	if err != nil || res.Total > 0 || len(terms) != 1 {
		return res, err
	}
	// One word that matches nothing: try a typo-tolerant match on the name.
	args = nil
	where, _ = searchFilters(q, &args)
	term := args.add(terms[0])
	where = append(where, fmt.Sprintf(fuzzyMatch, term))
	return t.search(ctx, where, fmt.Sprintf(fuzzyScore, term), args, len(args), q)
}

// search counts the documents matching where, whose parameters are args[:n], and
// returns the page q asks for, ordered by score, with the aggregations q asks for.
func (t *tx) search(ctx context.Context, where []string, score string, args params, n int, q search.Query) (search.Result, error) {
	filter := " WHERE " + strings.Join(where, " AND ")
	res := search.Result{Hits: []search.Hit{}}
	if err := t.tx.QueryRow(ctx, "SELECT COUNT(*) FROM search_docs"+filter, args[:n]...).Scan(&res.Total); err != nil {
		return search.Result{}, fmt.Errorf("postgres: search count: %w", err)
	}
	if q.Size > 0 && q.From < res.Total {
		query := "SELECT id, kind, fqn, source, " + score + " AS score FROM search_docs" + filter +
			" ORDER BY score DESC, fqn, id LIMIT " + args.add(q.Size) + " OFFSET " + args.add(q.From)
		rows, err := t.tx.Query(ctx, query, args...)
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
		if res.Aggregations, err = t.aggregate(ctx, q, res.Total, where, args[:n:n]); err != nil {
			return search.Result{}, err
		}
	}
	return res, nil
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
