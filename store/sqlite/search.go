package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// Ranking. A hit's score is
//
//	20*matched + 4*tier + nameBonus + b/(1+b),  b = -bm25(search_fts, 10, 8, 3, 1)
//
// matched is the number of query words the document holds (every word, unless the
// search was relaxed: store.KeywordSearch). tier is 4 when every query word matches in
// the name, 3 when every word matches in the name or display name, 2 when in the name,
// display name or description, and 1 otherwise (some word only in column names or the
// parent FQN, or missing). nameBonus is 2 when the name's words equal the query's
// words, 1 when they start with them, else 0. b is FTS5's BM25 over the columns name,
// display, description and columns with weights 10, 8, 3 and 1 (negated: FTS5's bm25
// is lower-is-better), squashed below 1 so it only orders hits within a tier and
// bonus. The tiers make "name and display name outrank description, which outranks
// column names" hold whatever the field lengths, which plain BM25 does not guarantee
// when a field is rarely filled; matched weighs more than all the rest, so a document
// holding more of the words ranks first. Words are compared by their stems (the index
// holds stems: search.StemText). Ties are broken by FQN, then id, so the order is
// stable. A query without words matches every document with score 1 (like
// Elasticsearch's match_all), in FQN order.
const (
	bm25Weights = "10.0, 8.0, 3.0, 1.0"
	// tierScore tests the widest tier first: SQLite builds the set of an IN subquery
	// the first time it is asked, so the narrower tiers' sets (each a full-text match
	// as costly as the search's own) are built only when some document is in the
	// wider one, which few are.
	tierScore = `CASE WHEN seq NOT IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?) THEN 1
 WHEN seq NOT IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?) THEN 2
 WHEN seq NOT IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?) THEN 3 ELSE 4 END`
	nameBonus    = `CASE WHEN d.name_words = ? THEN 2 WHEN substr(d.name_words, 1, length(?)) = ? THEN 1 ELSE 0 END`
	groupMatched = `(d.seq IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?))`
)

// Index adds or replaces the search document of an entity. The search_docs row keeps
// its seq (the FTS rowid) across updates; the FTS row is rewritten with the words'
// stems (held back, see ftsRow), and the vocabulary counts follow the document's words.
// A created entity's document (Doc.Created) is inserted without looking for one to
// replace.
func (t *tx) Index(ctx context.Context, d search.Doc) error {
	if err := t.write(); err != nil {
		return err
	}
	t.indexed = true
	var before string
	insert := stmtIndexNewDoc
	if !d.Created {
		insert = stmtIndexDoc
		if err := t.queryRow(ctx, stmtVocabularyOf, d.ID).Scan(&before); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: index: %w", err)
		}
	}
	var old []string
	if before != "" {
		if err := json.Unmarshal([]byte(before), &old); err != nil {
			return fmt.Errorf("sqlite: index: vocabulary of %s: %w", d.ID, err)
		}
	}
	terms := d.Terms()
	added, removed := store.VocabularyChange(old, terms.Vocabulary)
	// A source that is the snapshot the same write stores is read from it (hitColumns).
	var seq int64
	err := t.queryRow(ctx, insert,
		d.ID, d.Kind, d.FQN, terms.Name, terms.Service, boolInt(d.Deleted), jsonList(terms.Tags), jsonList(terms.Owners),
		jsonList(terms.Domains), string(d.Source), boolInt(d.Snapshot), jsonList(terms.Vocabulary)).Scan(&seq)
	if err != nil {
		return fmt.Errorf("sqlite: index: %w", err)
	}
	if before != "" {
		// A document indexed before: its FTS row is replaced, held or written.
		t.fts = slices.DeleteFunc(t.fts, func(r ftsRow) bool { return r.seq == seq })
		if _, err := t.exec(ctx, stmtIndexDeleteFTS, seq); err != nil {
			return fmt.Errorf("sqlite: index: %w", err)
		}
	}
	t.fts = append(t.fts, ftsRow{seq: seq, name: terms.Name, display: terms.DisplayName,
		description: terms.Description, columns: terms.Columns})
	if len(added)+len(removed) > 0 && t.vocab == nil {
		t.vocab = map[string]int{}
	}
	for _, w := range added {
		t.vocab[w]++
	}
	for _, w := range removed {
		t.vocab[w]--
	}
	return nil
}

// Unindex removes an entity's search document; removing a missing one is not an error.
// The search_docs_delete trigger drops the FTS row.
func (t *tx) Unindex(ctx context.Context, id string) error {
	if err := t.write(); err != nil {
		return err
	}
	t.indexed = true
	if err := t.flushHeld(ctx); err != nil {
		return err
	}
	if _, err := t.exec(ctx, stmtRemoveSearch, id); err != nil {
		return fmt.Errorf("sqlite: unindex: %w", err)
	}
	return nil
}

// ftsRow is a full-text row held back by Index until the transaction's next statement
// that could see or change it: a search, a removal, any module SQL (savepoints
// included), or COMMIT. SQLite's FTS5 writes its pending rows out as a new index segment
// at every statement that opens a statement journal (an upsert, for one), so rows
// inserted one per create cost a segment each, and the merges that follow; held and
// inserted together, the creates of one commit make one segment.
type ftsRow struct {
	seq                                 int64
	name, display, description, columns string
}

// flushHeld writes what Index held back: the full-text rows (see ftsRow), and the
// changes of the vocabulary's counts, summed per word, so that the creates of one
// commit, which share most of their words, update each word's count once.
func (t *tx) flushHeld(ctx context.Context) error {
	rows := t.fts
	t.fts = nil
	for _, r := range rows {
		if _, err := t.exec(ctx, stmtIndexInsertFTS, r.seq, r.name, r.display, r.description, r.columns); err != nil {
			return fmt.Errorf("sqlite: index: %w", err)
		}
	}
	if len(t.vocab) == 0 {
		return nil
	}
	added, removed := map[string]int{}, map[string]int{}
	for w, n := range t.vocab {
		switch {
		case n > 0:
			added[w] = n
		case n < 0:
			removed[w] = n
		}
	}
	clear(t.vocab)
	for _, c := range []struct {
		stmt  stmtID
		words map[string]int
	}{{stmtVocabularyAdd, added}, {stmtVocabularyRemove, removed}} {
		if len(c.words) == 0 {
			continue
		}
		b, err := json.Marshal(c.words)
		if err != nil {
			return fmt.Errorf("sqlite: index: %w", err)
		}
		if _, err := t.exec(ctx, c.stmt, string(b)); err != nil {
			return fmt.Errorf("sqlite: index: %w", err)
		}
	}
	return nil
}

// jsonList is l as a JSON array, [] when empty.
func jsonList(l []string) string {
	if l == nil {
		l = []string{}
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// matchExpr builds an FTS5 MATCH expression over groups of alternative terms (as
// ftsTerm quotes them): a group matches when the document holds one of its terms; with
// all every group is required, otherwise any. columns, when not "", restricts the match
// to those columns (an FTS5 column filter such as "{name display}"). Empty groups are
// skipped.
func matchExpr(groups [][]string, all bool, columns string) string {
	var parts []string
	for _, g := range groups {
		if len(g) > 0 {
			parts = append(parts, "("+strings.Join(g, " OR ")+")")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	op := " AND "
	if !all {
		op = " OR "
	}
	expr := strings.Join(parts, op)
	if columns != "" {
		expr = columns + " : (" + expr + ")"
	}
	return expr
}

// ftsTerm quotes w as an FTS5 string (double quotes doubled, so no word can change an
// expression's structure); with prefix it matches every term starting with w.
func ftsTerm(w string, prefix bool) string {
	q := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	if prefix {
		q += "*"
	}
	return q
}

// maxPrefixTerms bounds the indexed terms one query word is expanded to (prefixTerms);
// a word starting more terms stays a prefix query.
const maxPrefixTerms = 16

// prefixTerms turns groups of query stems into groups of FTS5 terms: a stem matches
// every indexed term starting with it. FTS5 answers a prefix query ("custom"*) by
// merging the whole document lists of every term it covers, again in each of the
// several MATCH expressions a search runs (about 8 ms each for a word held by a third
// of 100,000 tables), while exact terms are read lazily and skipped through. So a stem
// becomes the exact terms starting with it, read once from search_terms, unless more
// than maxPrefixTerms do, or it has 2 or 3 letters (search_fts keeps prefix indexes of
// those lengths, which answer a prefix at once). Empty stems are dropped.
func (k *keywordIndex) prefixTerms(ctx context.Context, groups [][]string) ([][]string, error) {
	out := make([][]string, len(groups))
	for i, g := range groups {
		for _, w := range g {
			if w == "" {
				continue
			}
			terms, err := k.termsStarting(ctx, w)
			if err != nil {
				return nil, err
			}
			for _, t := range terms {
				if !slices.Contains(out[i], t) {
					out[i] = append(out[i], t)
				}
			}
		}
	}
	return out, nil
}

// termsStarting returns the FTS5 alternatives of the stem w: the indexed terms that
// start with it, quoted exact, or w as a prefix (see prefixTerms). A stem no term
// starts with stays a prefix, which matches nothing.
func (k *keywordIndex) termsStarting(ctx context.Context, w string) ([]string, error) {
	if terms, ok := k.terms[w]; ok {
		return terms, nil
	}
	if k.shared {
		if terms, ok := k.view.get(w); ok {
			k.terms[w] = terms
			return terms, nil
		}
	}
	terms, err := k.readTermsStarting(ctx, w)
	if err != nil {
		return nil, err
	}
	k.terms[w] = terms
	if k.shared {
		k.view.put(w, terms)
	}
	return terms, nil
}

// readTermsStarting is termsStarting without the search's memory.
func (k *keywordIndex) readTermsStarting(ctx context.Context, w string) ([]string, error) {
	last, size := utf8.DecodeLastRuneInString(w)
	if n := utf8.RuneCountInString(w); n == 2 || n == 3 || last == utf8.RuneError || last == utf8.MaxRune {
		return []string{ftsTerm(w, true)}, nil
	}
	// Every term starting with w sorts at or after w and before w with its last
	// letter raised by one.
	upper := w[:len(w)-size] + string(last+1)
	rows, err := k.t.tx.QueryContext(ctx, "SELECT term FROM search_terms WHERE term >= ? AND term < ? LIMIT ?",
		w, upper, maxPrefixTerms+1)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search terms: %w", err)
	}
	terms, err := rowscan.All(rows, rowscan.String)
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: search terms: %w", err)
	}
	if len(terms) == 0 || len(terms) > maxPrefixTerms {
		return []string{ftsTerm(w, true)}, nil
	}
	for i, t := range terms {
		terms[i] = ftsTerm(t, false)
	}
	return terms, nil
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

// Search runs a keyword search (store.KeywordSearch): one page of hits, best first,
// the count of every match and the aggregations asked for.
func (t *tx) Search(ctx context.Context, q search.Query) (search.Result, error) {
	if err := t.flushHeld(ctx); err != nil {
		return search.Result{}, err
	}
	k := &keywordIndex{t: t, terms: map[string][]string{}, empty: map[string]bool{}}
	if !t.writable {
		// A write transaction's search sees its own uncommitted terms: it shares none.
		k.view, k.shared = t.termsAt(ctx)
	}
	return store.KeywordSearch(ctx, k, q)
}

// keywordIndex is the FTS5 index as store.KeywordSearch drives it, for one search.
// terms keeps each stem's FTS5 alternatives (termsStarting), which the search's HasWord
// and its up to three Match calls would otherwise read again; when shared, view is the
// database's term cache (terms.go) at the search's start, which the searches after it
// read too. empty holds the MATCH expressions that the search counted no document of
// (with its filters, the same in every Match call): a page's ranking need not test
// whether a document is in one of them.
type keywordIndex struct {
	t      *tx
	terms  map[string][]string
	view   termView
	shared bool
	empty  map[string]bool
}

// HasWord implements store.KeywordIndex.
func (k *keywordIndex) HasWord(ctx context.Context, stem string) (bool, error) {
	terms, err := k.termsStarting(ctx, stem)
	if err != nil {
		return false, err
	}
	var one int
	err = k.t.tx.QueryRowContext(ctx, "SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT 1",
		matchExpr([][]string{terms}, true, "")).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: search vocabulary: %w", err)
	}
	return true, nil
}

// Vocabulary implements store.KeywordIndex.
func (k *keywordIndex) Vocabulary(ctx context.Context, w string) ([]search.WordCount, error) {
	first, _ := utf8.DecodeRuneInString(w)
	n, edits := utf8.RuneCountInString(w), search.MaxEdits(w)
	rows, err := k.t.tx.QueryContext(ctx, `SELECT word, docs FROM search_vocab
WHERE word >= ? AND word < ? AND length(word) BETWEEN ? AND ? AND docs > 0 ORDER BY word LIMIT ?`,
		string(first), string(first+1), n-edits, n+edits, store.MaxVocabularyScan)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search vocabulary: %w", err)
	}
	out, err := rowscan.All(rows, rowscan.WordCount)
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: search vocabulary: %w", err)
	}
	return out, nil
}

// Match implements store.KeywordIndex.
func (k *keywordIndex) Match(ctx context.Context, q search.Query, groups [][]string, all bool) (search.Result, error) {
	t := k.t
	where, args, err := searchFilters(q)
	if err != nil {
		return search.Result{}, err
	}
	terms, err := k.prefixTerms(ctx, groups)
	if err != nil {
		return search.Result{}, err
	}
	expr := matchExpr(terms, all, "")

	from := " FROM search_docs d"
	if expr != "" {
		// search_docs_match (migrations/0005) covers the filters on kind and deleted
		// and the ranking's columns: the planner would read the table by rowid.
		from = " FROM search_fts JOIN search_docs d INDEXED BY search_docs_match ON d.seq = search_fts.rowid"
		where = append([]string{"search_fts MATCH ?"}, where...)
		args = append([]any{expr}, args...)
	}
	filter := " WHERE " + strings.Join(where, " AND ")

	res := search.Result{Hits: []search.Hit{}}
	countUpTo := "SELECT COUNT(*) FROM (SELECT 1" + from + filter + " LIMIT ?)"
	count, countArgs := "SELECT COUNT(*)"+from+filter, args
	if q.CountUpTo > 0 {
		count, countArgs = countUpTo, append(slices.Clone(args), q.CountUpTo)
	}
	if err := t.tx.QueryRowContext(ctx, count, countArgs...).Scan(&res.Total); err != nil {
		return search.Result{}, fmt.Errorf("sqlite: search count: %w", err)
	}
	if expr != "" && res.Total == 0 {
		k.empty[expr] = true
	}
	var levels []string
	pageArgs := args
	if expr != "" && !all && q.Size > 0 && q.From < res.Total {
		if levels, err = t.narrow(ctx, terms, max(q.From+q.Size, 1), countUpTo, args, k.empty); err != nil {
			return search.Result{}, err
		}
		if len(levels) > 0 {
			pageArgs = slices.Clone(args)
			pageArgs[0] = levels[len(levels)-1]
		}
	}
	if q.Size > 0 && q.From < res.Total {
		var rows *sql.Rows
		if expr == "" {
			rows, err = t.matchAll(ctx, q, from+filter, pageArgs)
		} else {
			rows, err = t.page(ctx, q, groups, terms, all, levels, k.empty, from+filter, pageArgs)
		}
		if err != nil {
			return search.Result{}, fmt.Errorf("sqlite: search: %w", err)
		}
		res.Hits, err = rowscan.All(rows, searchHit)
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

// hitColumns are the columns of a hit of search_docs d that searchHit reads before its
// score: its id, kind and FQN, its source, and whether that is a snapshot's
// (migrations/0009): a document of a snapshot reads the snapshot of the entity's
// current version, which the write that indexed it stored.
const hitColumns = `d.id, d.kind, d.fqn, CASE WHEN d.snapshot THEN ` + rowscan.HitSnapshot + ` ELSE d.source END, d.snapshot`

// searchHit reads a hit: hitColumns and the score.
func searchHit(s rowscan.Scanner) (search.Hit, error) {
	var h search.Hit
	var snapshot bool
	if err := s.Scan(&h.ID, &h.Kind, &h.FQN, &h.Source, &snapshot, &h.Score); err != nil {
		return h, err
	}
	if snapshot && len(h.Source) > 2 { // an object with members, as the write saw it
		h.Source = search.SourceOf(h.Kind, h.Source)
	}
	return h, nil
}

// page reads one page of hits of a search with words: the ids and scores of the page's
// documents are chosen first, and only their sources are read, as SQLite's sorter
// would otherwise carry every matching document's source (several KB each, on overflow
// pages) to keep the best few. from is the FROM and WHERE clauses of the matching
// documents, with args. The parts of each document's score (scoring) are computed
// once, in a subquery that OFFSET 0 keeps SQLite from flattening into the ranking: the
// ranking uses BM25 and the words matched twice each, and each use would cost FTS5
// another call.
func (t *tx) page(ctx context.Context, q search.Query, groups, terms [][]string, all bool, levels []string, empty map[string]bool, from string, args []any) (*sql.Rows, error) {
	sc := scoring(groups, terms, all, levels, empty)
	return t.tx.QueryContext(ctx, "SELECT "+hitColumns+", p.score FROM (SELECT seq, fqn, id, "+sc.score+
		" AS score FROM (SELECT d.seq AS seq, d.fqn AS fqn, d.id AS id, "+sc.parts+from+" LIMIT -1 OFFSET 0)"+
		" ORDER BY score DESC, fqn, id LIMIT ? OFFSET ?) p JOIN search_docs d ON d.seq = p.seq ORDER BY p.score DESC, p.fqn, p.id",
		slices.Concat(sc.scoreArgs, sc.partArgs, args, []any{q.Size, q.From})...)
}

// matchAll reads one page of a search without words: every document scores 1, in FQN
// order. For one kind, search_docs_kind_deleted_fqn (migrations/0008) gives that order
// without a sort; for several, or for all (the kinds the index holds), each kind's
// first From+Size documents are read in that order and only those are sorted (SQLite
// would otherwise sort every document of those kinds: 330 ms at 100,000 tables). from
// is the FROM and WHERE clauses of the matching documents, with args.
func (t *tx) matchAll(ctx context.Context, q search.Query, from string, args []any) (*sql.Rows, error) {
	var perKind []string
	if kinds := slices.Compact(slices.Sorted(slices.Values(q.Kinds))); len(kinds) > 1 {
		perKind = kinds
	} else if len(kinds) == 0 {
		var err error
		if perKind, err = t.indexedKinds(ctx); err != nil {
			return nil, err
		}
	}
	query, args, err := matchAllPage(q, perKind, from, args)
	if err != nil {
		return nil, err
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// matchAllPage returns the query of matchAll's page: from the documents of from (with
// args) when perKind is empty, else from each of perKind's first From+Size documents.
func matchAllPage(q search.Query, perKind []string, from string, args []any) (string, []any, error) {
	ranked := "SELECT d.seq AS seq, d.fqn AS fqn, d.id AS id" + from + " ORDER BY d.fqn, d.id LIMIT ? OFFSET ?"
	rankedArgs := slices.Concat(args, []any{q.Size, q.From})
	if len(perKind) > 0 {
		arms := make([]string, len(perKind))
		rankedArgs = nil
		for i, k := range perKind {
			one := q
			one.Kinds = []string{k}
			where, whereArgs, err := searchFilters(one)
			if err != nil {
				return "", nil, err
			}
			arms[i] = "SELECT * FROM (SELECT d.seq AS seq, d.fqn AS fqn, d.id AS id FROM search_docs d WHERE " +
				strings.Join(where, " AND ") + " ORDER BY d.fqn, d.id LIMIT ?)"
			rankedArgs = append(append(rankedArgs, whereArgs...), q.From+q.Size)
		}
		ranked = strings.Join(arms, " UNION ALL ") + " ORDER BY fqn, id LIMIT ? OFFSET ?"
		rankedArgs = append(rankedArgs, q.Size, q.From)
	}
	return "SELECT " + hitColumns + ", 1.0 FROM (" + ranked +
		") p JOIN search_docs d ON d.seq = p.seq ORDER BY p.fqn, p.id", rankedArgs, nil
}

// indexedKinds returns the kinds of the documents in the index, each found in the
// order of search_docs_kind_deleted_fqn by one seek past the last: a few dozen seeks,
// where reading the kind of every document would read them all.
func (t *tx) indexedKinds(ctx context.Context) ([]string, error) {
	rows, err := t.tx.QueryContext(ctx, `WITH RECURSIVE k(kind) AS (
SELECT (SELECT min(kind) FROM search_docs)
UNION ALL
SELECT (SELECT min(kind) FROM search_docs WHERE kind > k.kind) FROM k WHERE k.kind IS NOT NULL)
SELECT kind FROM k WHERE kind IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search kinds: %w", err)
	}
	kinds, err := rowscan.All(rows, rowscan.String)
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: search kinds: %w", err)
	}
	return kinds, nil
}

// narrow picks the documents an any-word page can come from: the first of
// store.NarrowingLevels whose documents fill the page (need, From+Size), which
// an any-word question otherwise scores across most of a large catalog (1 to 2 s at
// 100,000 tables). count counts a MATCH's documents up to a limit, with args (the
// first is the MATCH expression) and the limit, need, after them. narrow returns the
// levels it counted, the chosen one last, or nil when none fills the page; it adds
// those it counted no document of to empty.
func (t *tx) narrow(ctx context.Context, groups [][]string, need int, count string, args []any, empty map[string]bool) ([]string, error) {
	levels := store.NarrowingLevels(groups, func(g [][]string) string { return matchExpr(g, true, "") }, " OR ")
	for i, level := range levels {
		levelArgs := append(slices.Clone(args), need)
		levelArgs[0] = level
		var n int
		if err := t.tx.QueryRowContext(ctx, count, levelArgs...).Scan(&n); err != nil {
			return nil, fmt.Errorf("sqlite: search count: %w", err)
		}
		if n >= need {
			return levels[:i+1], nil
		}
		if n == 0 {
			empty[level] = true
		}
	}
	return nil, nil
}

// score is a page's ranking (see Ranking) in two parts: parts, the select-list columns
// m (the words matched), bonus and b (BM25) of each matching document, with partArgs;
// and score, the ranking expression over those columns and seq, with scoreArgs. The
// tier is in score: only a document holding every word can have a tier above 1, so
// its full-text subqueries run only when some document does.
type score struct {
	parts, score        string
	partArgs, scoreArgs []any
}

// scoring returns the ranking of a page for the query's stems (groups, for the name
// bonus) and FTS5 terms, which hold some word.
//
// When narrow chose a level, the page's MATCH expression is the OR of every level-group
// subset of terms: BM25 sums over the expression's phrases, and FTS5 counts a phrase
// only in the subsets that match, so a document holding j groups has each of its
// phrases counted C(j-1, level-1) times. Dividing by that gives the whole
// expression's BM25, so a page's scores do not depend on narrowing. levels are narrow's;
// empty holds expressions known to match no document the page ranks.
func scoring(groups, terms [][]string, all bool, levels []string, empty map[string]bool) score {
	matched := fmt.Sprint(len(terms))
	var matchedArgs []any
	level := 0
	switch {
	case len(levels) > 0:
		// A narrowed document holds level groups, and one more for each higher
		// level (up to all of them) it is in. Those sets are smaller than the page:
		// narrow went on to lower levels only while they were. An empty one adds
		// nothing, and building its set would cost as much as a search.
		level = len(terms) - len(levels)
		each := []string{fmt.Sprint(level)}
		for _, e := range slices.Concat([]string{matchExpr(terms, true, "")}, levels[:len(levels)-1]) {
			if empty[e] {
				continue
			}
			each = append(each, groupMatched)
			matchedArgs = append(matchedArgs, e)
		}
		matched = strings.Join(each, " + ")
	case !all:
		each := make([]string, len(terms))
		for i, g := range terms {
			each[i] = groupMatched
			matchedArgs = append(matchedArgs, matchExpr([][]string{g}, true, ""))
		}
		matched = strings.Join(each, " + ")
	}
	bm := "b"
	if level > 0 {
		var cases strings.Builder
		for j := level; j <= len(terms); j++ {
			fmt.Fprintf(&cases, " WHEN %d THEN %d.0", j, binomial(j-1, level-1))
		}
		bm = "(b / (CASE m" + cases.String() + " END))"
	}
	phrase := make([]string, len(groups))
	for i, g := range groups {
		phrase[i] = g[0]
	}
	p := strings.Join(phrase, " ")
	return score{
		parts:     "(" + matched + ") AS m, (" + nameBonus + ") AS bonus, bm25(search_fts, " + bm25Weights + ") AS b",
		partArgs:  slices.Concat(matchedArgs, []any{p, p, p}),
		score:     fmt.Sprintf("(20 * m + 4 * (CASE WHEN m < %d THEN 1 ELSE %s END) + bonus + (-%s) / (1.0 - %s))", len(terms), tierScore, bm, bm),
		scoreArgs: []any{matchExpr(terms, true, "{name display description}"), matchExpr(terms, true, "{name display}"), matchExpr(terms, true, "{name}")},
	}
}

// binomial is n choose r.
func binomial(n, r int) int {
	b := 1
	for i := 1; i <= r; i++ {
		b = b * (n - r + i) / i
	}
	return b
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
