package vectors

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// ConsumerName is the indexer's name among the outbox consumers; its position, and so
// its backlog (meridian_outbox_pending{consumer="vectors"} on /metrics), is kept under
// it.
const ConsumerName = "vectors"

// JobTypeReindex is the type of the durable job that re-embeds every entity.
const JobTypeReindex = "vectors.reindex"

// modelSetting records the model and dimension the index was last fully built with.
const modelSetting = "vectors.model"

// Indexer keeps the index in step with the catalog: it is an outbox consumer, so it
// runs outside the write transaction, at least once, and resumes after a restart from
// its committed position, a batch of events at a time (store.BatchConsumer). It embeds
// each entity's Document with its embedder and skips an entity whose content hash for
// that model is unchanged; a hard delete removes the entity's vectors, a soft delete
// or restore flips their deleted flag.
type Indexer struct {
	ents  *store.Entities
	index *Index
	emb   Embedder
	log   *slog.Logger
}

var _ store.BatchConsumer = (*Indexer)(nil)

// NewIndexer returns the indexer of ents' catalog into index with emb.
func NewIndexer(ents *store.Entities, index *Index, emb Embedder, log *slog.Logger) *Indexer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Indexer{ents: ents, index: index, emb: emb, log: log}
}

// Name returns ConsumerName.
func (x *Indexer) Name() string { return ConsumerName }

// Embedder returns the indexer's embedder.
func (x *Indexer) Embedder() Embedder { return x.emb }

// Handle indexes the entity of one change event. Events of unknown kinds and those that
// carry no entity are skipped. Errors: the embedder's and the store's; the dispatcher
// delivers the event again later.
func (x *Indexer) Handle(ctx context.Context, ev meridian.ChangeEvent) error {
	return x.HandleBatch(ctx, []meridian.ChangeEvent{ev})
}

// HandleBatch indexes the entities of a batch of change events as Handle would one by
// one, in order, but embeds and writes the entities between two hard deletes together
// (an entity changed twice is indexed once, as of its last event): one write per event
// made indexing a backlog on PostgreSQL slow.
func (x *Indexer) HandleBatch(ctx context.Context, events []meridian.ChangeEvent) error {
	var pending []Item
	flush := func() error {
		_, err := x.PutMany(ctx, pending)
		pending = nil
		return err
	}
	for _, ev := range events {
		switch ev.EventType {
		case meridian.EventEntityDeleted:
			if err := flush(); err != nil {
				return err
			}
			if err := x.index.Delete(ctx, ev.EntityID); err != nil {
				return err
			}
			continue
		case meridian.EventEntityCreated, meridian.EventEntityUpdated, meridian.EventEntitySoftDeleted,
			meridian.EventEntityRestored, meridian.EventEntityFieldsChanged:
		default:
			continue
		}
		k, ok := x.ents.Registry().Kind(ev.EntityType)
		if !ok || ev.Entity == nil {
			continue
		}
		pending = append(pending, Item{Kind: k, Entity: ev.Entity})
	}
	return flush()
}

// Item is one entity to index, with its kind.
type Item struct {
	Kind   *meridian.Kind
	Entity meridian.Entity
}

// Put embeds and stores one entity unless its stored vectors for the embedder's model
// have the same content hash (then only a changed deleted flag is written). It reports
// whether it embedded.
func (x *Indexer) Put(ctx context.Context, k *meridian.Kind, e meridian.Entity) (bool, error) {
	n, err := x.PutMany(ctx, []Item{{k, e}})
	return n > 0, err
}

// PutMany is Put of several entities, with one read of their stored hashes, one Embed
// call and one write; an entity given twice is indexed as its last item. It returns how
// many it embedded.
func (x *Indexer) PutMany(ctx context.Context, items []Item) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	model, dim := x.emb.Model(), x.emb.Dimension()
	var docs []Document
	var ids []string
	at := map[string]int{} // entity → its index in docs
	for _, it := range items {
		doc := DocumentOf(it.Kind, it.Entity)
		if i, ok := at[doc.Entry.EntityID]; ok {
			docs[i] = doc
			continue
		}
		at[doc.Entry.EntityID] = len(docs)
		docs, ids = append(docs, doc), append(ids, doc.Entry.EntityID)
	}
	have, err := x.index.storedMany(ctx, ids, model, dim)
	if err != nil {
		return 0, err
	}
	var changed []Document
	var texts []string
	for _, doc := range docs {
		st, found := have[doc.Entry.EntityID]
		if found && st.hash == doc.Entry.Hash {
			if st.deleted != doc.Entry.Deleted {
				if err := x.index.SetDeleted(ctx, doc.Entry.EntityID, doc.Entry.Deleted); err != nil {
					return 0, err
				}
			}
			continue
		}
		changed = append(changed, doc)
		texts = append(texts, doc.Chunks...)
	}
	if len(changed) == 0 {
		return 0, nil
	}
	vecs, err := x.emb.Embed(ctx, texts)
	if err != nil {
		return 0, err
	}
	if len(vecs) != len(texts) {
		return 0, fmt.Errorf("vectors: the embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	entries := make([]Entry, len(changed))
	for i, doc := range changed {
		entries[i] = doc.Entry
		entries[i].Model, entries[i].Dim = model, dim
		for _, t := range doc.Chunks {
			entries[i].Chunks = append(entries[i].Chunks, Chunk{Text: t, Vector: vecs[0]})
			vecs = vecs[1:]
		}
	}
	return len(entries), x.index.UpsertMany(ctx, entries)
}

// ReindexResult is the result of a reindex job.
type ReindexResult struct {
	Model    string `json:"model"`
	Entities int    `json:"entities"`
	Embedded int    `json:"embedded"`
	Pruned   int64  `json:"pruned"`
}

// reindexCheckpoint is where a reindex job resumes: the kinds done and the cursor in
// the current one.
type reindexCheckpoint struct {
	Kind  int           `json:"kind"`
	After *store.Cursor `json:"after,omitempty"`
	Done  int           `json:"done"`
}

// reindexPage is how many entities one step of a reindex reads.
const reindexPage = 200

// Reindex embeds every entity (deleted ones too, flagged) with the indexer's embedder,
// skipping those already current for its model, then removes the vectors of every
// other model and records the model as the index's. It reports its percentage and a
// checkpoint to progress (nil for none), and resumes from the checkpoint in cp.
// Errors: the embedder's and the store's.
func (x *Indexer) Reindex(ctx context.Context, progress store.JobProgress, cp json.RawMessage) (ReindexResult, error) {
	var at reindexCheckpoint
	if len(cp) > 0 {
		_ = json.Unmarshal(cp, &at) // a bad checkpoint starts over
	}
	total, err := x.countAll(ctx)
	if err != nil {
		return ReindexResult{}, err
	}
	res := ReindexResult{Model: x.emb.Model()}
	kinds := x.ents.Registry().Kinds()
	for ; at.Kind < len(kinds); at.Kind, at.After = at.Kind+1, nil {
		k := kinds[at.Kind]
		for {
			var ents []meridian.Entity
			var n int
			err := x.ents.InTx(ctx, false, func(tx store.Tx) error {
				rows, _, err := tx.List(ctx, store.ListQuery{Kind: k.Name, Include: store.IncludeAll, After: at.After, Limit: reindexPage})
				if err != nil {
					return err
				}
				n = len(rows)
				for _, r := range rows {
					_, e, err := x.ents.Load(ctx, tx, meridian.System, store.OpView, k.Name, store.ByID(r.ID), store.IncludeAll)
					if err != nil {
						return err
					}
					ents = append(ents, e)
				}
				if n > 0 {
					last := rows[n-1]
					at.After = &store.Cursor{Name: last.Name, ID: last.ID}
				}
				return nil
			})
			if err != nil {
				return res, err
			}
			items := make([]Item, len(ents))
			for i, e := range ents {
				items[i] = Item{Kind: k, Entity: e}
			}
			embedded, err := x.PutMany(ctx, items)
			if err != nil {
				return res, err
			}
			res.Embedded += embedded
			at.Done += n
			res.Entities = at.Done
			if progress != nil && total > 0 {
				if err := progress.Progress(ctx, min(99, at.Done*100/total), at); err != nil {
					return res, err
				}
			}
			if n < reindexPage {
				break
			}
		}
	}
	pruned, err := x.index.Prune(ctx, x.emb.Model(), x.emb.Dimension())
	if err != nil {
		return res, err
	}
	res.Pruned = pruned
	return res, x.ents.InTx(ctx, true, func(tx store.Tx) error {
		return tx.PutSetting(ctx, modelSetting, x.modelKey())
	})
}

func (x *Indexer) modelKey() string { return fmt.Sprintf("%s@%d", x.emb.Model(), x.emb.Dimension()) }

// countAll counts every entity, deleted or not, for the progress percentage.
func (x *Indexer) countAll(ctx context.Context) (int, error) {
	total := 0
	err := x.ents.InTx(ctx, false, func(tx store.Tx) error {
		for _, k := range x.ents.Registry().Kinds() {
			_, n, err := tx.List(ctx, store.ListQuery{Kind: k.Name, Include: store.IncludeAll})
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}

// Current reports whether the index was last fully built with the indexer's model and
// dimension. A catalog whose model changed (or that never had vectors) is not.
func (x *Indexer) Current(ctx context.Context) (bool, error) {
	var v string
	err := x.ents.InTx(ctx, false, func(tx store.Tx) error {
		var err error
		v, err = tx.Setting(ctx, modelSetting)
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return nil
		}
		return err
	})
	return v == x.modelKey(), err
}

// Starter starts durable jobs; store/jobs.Service is one.
type Starter interface {
	Start(ctx context.Context, p *meridian.Principal, typ string, params any, run store.JobFunc) (string, error)
}

// StartReindex starts Reindex as a durable job of type JobTypeReindex started by p, and
// returns its id; register ResumeReindex for the type so a restart continues it.
// Errors: those of Starter.Start.
func (x *Indexer) StartReindex(ctx context.Context, jobs Starter, p *meridian.Principal) (string, error) {
	return jobs.Start(ctx, p, JobTypeReindex, map[string]string{"model": x.modelKey()},
		func(ctx context.Context, progress store.JobProgress) (any, error) {
			return x.Reindex(ctx, progress, nil)
		})
}

// ResumeReindex continues a reindex job from its checkpoint.
func (x *Indexer) ResumeReindex(ctx context.Context, checkpoint json.RawMessage, progress store.JobProgress) (any, error) {
	return x.Reindex(ctx, progress, checkpoint)
}
