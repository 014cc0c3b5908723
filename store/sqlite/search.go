package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// Ranking. A hit's score is
//
//	4*tier + nameBonus + b/(1+b),  b = -bm25(search_fts, 10, 8, 3, 1)
//
// tier is 4 when every query word matches in the name, 3 when every word matches in
// the name or display name, 2 when in the name, display name or description, and 1
// otherwise (some word only in column names or the parent FQN). nameBonus is 2 when the
// name's words equal the query's words, 1 when they start with them, else 0. b is FTS5's
// BM25 over the columns name, display, description and columns with weights 10, 8, 3
// and 1 (negated: FTS5's bm25 is lower-is-better), squashed below 1 so it only orders
// hits within a tier and bonus. The tiers make "name and display name outrank
// description, which outranks column names" hold whatever the field lengths, which
// plain BM25 does not guarantee when a field is rarely filled. Ties are broken by FQN,
// then id, so the order is stable. A query without words matches every document with
// score 1 (like Elasticsearch's match_all), in FQN order.
const (
	bm25Weights = "10.0, 8.0, 3.0, 1.0"
	tierScore   = `CASE WHEN d.seq IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?) THEN 4
 WHEN d.seq IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?) THEN 3
 WHEN d.seq IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?) THEN 2 ELSE 1 END`
	nameBonus = `CASE WHEN d.name_words = ? THEN 2 WHEN substr(d.name_words, 1, length(?)) = ? THEN 1 ELSE 0 END`
)

// Index adds or replaces the search document of an entity. The search_docs row keeps
// its seq (the FTS rowid) across updates; the FTS row is rewritten.
func (t *tx) Index(ctx context.Context, d search.Doc) error {
	if err := t.write(); err != nil {
		return err
	}
	tags, owners, domains := lowerJSON(d.Tags), lowerJSON(d.Owners), lowerJSON(d.Domains)
	var seq int64
	err := t.queryRow(ctx, stmtIndexDoc,
		d.ID, d.Kind, d.FQN, d.Name, strings.ToLower(d.Service), boolInt(d.Deleted), tags, owners, domains,
		string(d.Source)).Scan(&seq)
	if err != nil {
		return fmt.Errorf("sqlite: index: %w", err)
	}
	if _, err := t.exec(ctx, stmtIndexDeleteFTS, seq); err != nil {
		return fmt.Errorf("sqlite: index: %w", err)
	}
	if _, err := t.exec(ctx, stmtIndexInsertFTS,
		seq, d.Name, d.DisplayName, d.Description, d.Columns); err != nil {
		return fmt.Errorf("sqlite: index: %w", err)
	}
	return nil
}

// Unindex removes an entity's search document; removing a missing one is not an error.
// The search_docs_delete trigger drops the FTS row.
func (t *tx) Unindex(ctx context.Context, id string) error {
	if err := t.write(); err != nil {
		return err
	}
	if _, err := t.exec(ctx, stmtRemoveSearch, id); err != nil {
		return fmt.Errorf("sqlite: unindex: %w", err)
	}
	return nil
}

func lowerJSON(l []string) string {
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, strings.ToLower(s))
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// matchExpr builds an FTS5 MATCH expression: every term as a quoted prefix query,
// implicitly ANDed, each restricted to the columns when columns is not "" (an FTS5
// column filter such as "{name display}"). Double quotes inside a term are doubled, so
// no term can change the expression's structure. Empty terms are skipped.
func matchExpr(terms []string, columns string) string {
	var parts []string
	for _, term := range terms {
		if term == "" {
			continue
		}
		phrase := `"` + strings.ReplaceAll(term, `"`, `""`) + `"*`
		if columns != "" {
			phrase = columns + " : " + phrase
		}
		parts = append(parts, phrase)
	}
	return strings.Join(parts, " ")
}

// in returns "(?, ?, …)" for n values.
func in(n int) string { return "(?" + strings.Repeat(", ?", n-1) + ")" }

// searchFilters turns the kinds, term filters and the deleted switch into SQL
// conditions on search_docs d. Values compare case-insensitively (the stored fields are
// lower-cased at index time).
func searchFilters(q search.Query) ([]string, []any, error) {
	var (
		where []string
		args  []any
	)
	if len(q.Kinds) > 0 {
		where = append(where, "d.kind IN "+in(len(q.Kinds)))
		for _, k := range q.Kinds {
			args = append(args, k)
		}
	}
	deletedFilter := false
	for _, f := range q.Filters {
		vals := make([]any, len(f.Values))
		for i, v := range f.Values {
			vals[i] = strings.ToLower(v)
		}
		switch f.Field {
		case search.FieldEntityType:
			where = append(where, "lower(d.kind) IN "+in(len(vals)))
		case search.FieldService:
			where = append(where, "d.service IN "+in(len(vals)))
		case search.FieldTags, search.FieldOwners, search.FieldDomains:
			// The column name is one of three constants, never caller text.
			where = append(where, "EXISTS (SELECT 1 FROM json_each(d."+string(f.Field)+") j WHERE j.value IN "+in(len(vals))+")")
		case search.FieldDeleted:
			deletedFilter = true
			for i, v := range f.Values {
				b, err := search.DeletedValue(v)
				if err != nil {
					return nil, nil, err
				}
				vals[i] = boolInt(b)
			}
			where = append(where, "d.deleted IN "+in(len(vals)))
		default:
			return nil, nil, meridian.Errorf(meridian.EInvalid, "Unsupported search filter field %s", f.Field)
		}
		args = append(args, vals...)
	}
	switch {
	case q.Deleted != nil:
		where = append(where, "d.deleted = ?")
		args = append(args, boolInt(*q.Deleted))
	case !deletedFilter:
		where = append(where, "d.deleted = 0")
	}
	return where, args, nil
}

// Search runs a keyword search: one page of hits, best first, the count of every match
// and the aggregations asked for.
func (t *tx) Search(ctx context.Context, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	where, args, err := searchFilters(q)
	if err != nil {
		return search.Result{}, err
	}
	expr := matchExpr(q.Terms, "")

	var from, score string
	var scoreArgs []any
	if expr == "" {
		from = " FROM search_docs d"
		score = "1.0"
	} else {
		from = " FROM search_fts JOIN search_docs d ON d.seq = search_fts.rowid"
		where = append([]string{"search_fts MATCH ?"}, where...)
		args = append([]any{expr}, args...)
		phrase := strings.Join(q.Terms, " ")
		score = "(4 * (" + tierScore + ") + (" + nameBonus + ")" +
			" + (-bm25(search_fts, " + bm25Weights + ")) / (1.0 - bm25(search_fts, " + bm25Weights + ")))"
		scoreArgs = []any{matchExpr(q.Terms, "{name}"), matchExpr(q.Terms, "{name display}"),
			matchExpr(q.Terms, "{name display description}"), phrase, phrase, phrase}
	}
	filter := " WHERE " + strings.Join(where, " AND ")

	res := search.Result{Hits: []search.Hit{}}
	if err := t.tx.QueryRowContext(ctx, "SELECT COUNT(*)"+from+filter, args...).Scan(&res.Total); err != nil {
		return search.Result{}, fmt.Errorf("sqlite: search count: %w", err)
	}
	if q.Size > 0 && q.From < res.Total {
		query := "SELECT d.id, d.kind, d.fqn, d.source, " + score + " AS score" + from + filter +
			" ORDER BY score DESC, d.fqn, d.id LIMIT ? OFFSET ?"
		rows, err := t.tx.QueryContext(ctx, query, append(append(scoreArgs, args...), q.Size, q.From)...)
		if err != nil {
			return search.Result{}, fmt.Errorf("sqlite: search: %w", err)
		}
		res.Hits, err = rowscan.All(rows, rowscan.SearchHit)
		rows.Close()
		if err != nil {
			return search.Result{}, fmt.Errorf("sqlite: search: %w", err)
		}
	}
	if len(q.Aggregations) > 0 {
		res.Aggregations, err = t.aggregate(ctx, q, res.Total, from, where, args)
		if err != nil {
			return search.Result{}, err
		}
	}
	return res, nil
}

// aggregate counts the total documents matching where (from and args as the search's)
// by each field q asks for, in one GROUP BY query per field (none when total is 0): the
// largest counts first, ties by key, at most q.BucketLimit() buckets. A document
// counts once per distinct value it holds; documents without a value are left out.
func (t *tx) aggregate(ctx context.Context, q search.Query, total int, from string, where []string, args []any) (map[search.Field][]search.Bucket, error) {
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
			key, count = "d.kind", "COUNT(*)"
		case search.FieldService:
			key, count = "d.service", "COUNT(*)"
			cond = append(cond, "d.service <> ''")
		case search.FieldTags, search.FieldOwners, search.FieldDomains:
			// The column name is one of three constants, never caller text.
			join, key, count = ", json_each(d."+string(f)+") j", "j.value", "COUNT(DISTINCT d.seq)"
		default:
			return nil, meridian.Errorf(meridian.EInvalid, "Unsupported search aggregation %s", f)
		}
		query := "SELECT " + key + ", " + count + " AS n" + from + join + " WHERE " + strings.Join(cond, " AND ") +
			" GROUP BY " + key + " ORDER BY n DESC, " + key + " LIMIT ?"
		rows, err := t.tx.QueryContext(ctx, query, append(args[:len(args):len(args)], q.BucketLimit())...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search aggregation: %w", err)
		}
		out[f], err = rowscan.All(rows, rowscan.Bucket)
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("sqlite: search aggregation: %w", err)
		}
	}
	return out, nil
}
