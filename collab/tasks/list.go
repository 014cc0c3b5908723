package tasks

import (
	"context"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Query selects tasks: the task kind's filters (type, status, category, assignee,
// createdBy, about as an entity link or an FQN, aboutType), createdAt between StartTs
// and EndTs (epoch ms, 0 for open), and a page as store.ListOptions.
type Query struct {
	Filters map[string]string
	About   string
	StartTs int64
	EndTs   int64
	Options store.ListOptions
}

// MaxScan bounds how many tasks one list request examines when it filters on time: past
// it the page ends early with an after cursor to continue from.
const MaxScan = 10000

// scanChunk is how many tasks a time-window list reads at a time.
const scanChunk = 500

// List answers one page of tasks, ordered by name (TASK-NNNNN: creation order). With a
// time window the engine's pages are read in chunks and filtered on createdAt, at most
// MaxScan tasks per request; the page's total is then the number of matches found in
// the tasks examined. Errors: EInvalid (bad filter, cursor, limit, fields, window).
func (s *Service) List(ctx context.Context, p *meridian.Principal, q Query) (store.Page, error) {
	return s.list(ctx, p, q, nil)
}

// list is List with anyOf, filters with several values of which any matches.
func (s *Service) list(ctx context.Context, p *meridian.Principal, q Query, anyOf map[string][]string) (store.Page, error) {
	o, err := options(q)
	if err != nil {
		return store.Page{}, err
	}
	o.AnyOf = anyOf
	if o.Limit == 0 {
		o.Limit = store.DefaultListLimit
	}
	if q.StartTs == 0 && q.EndTs == 0 {
		return s.ents.List(ctx, p, meridian.KindTask, o)
	}
	return s.scan(ctx, p, o, func(e meridian.Entity) bool { return inWindow(e, q) })
}

// scan answers one page of the tasks o selects that keep accepts, reading the engine's
// pages in chunks, at most MaxScan tasks: a page that stops there answers the cursor
// to go on from, and its total is the matches found.
func (s *Service) scan(ctx context.Context, p *meridian.Principal, o store.ListOptions, keep func(meridian.Entity) bool) (store.Page, error) {
	if o.Before != "" {
		return store.Page{}, meridian.Errorf(meridian.EInvalid, "before is not supported with startTs, endTs or the owned list; page forward with after")
	}
	limit := o.Limit
	if limit <= 0 {
		limit = store.DefaultListLimit
	}
	out := store.Page{Data: []meridian.Entity{}}
	chunk := o
	chunk.Limit = scanChunk
	for scanned := 0; scanned < MaxScan; {
		page, err := s.ents.List(ctx, p, meridian.KindTask, chunk)
		if err != nil {
			return store.Page{}, err
		}
		for i, e := range page.Data {
			scanned++
			if !keep(e) {
				continue
			}
			out.Data = append(out.Data, e)
			if len(out.Data) == limit {
				if i < len(page.Data)-1 || page.After != "" {
					out.After = store.CursorAfter(e)
				}
				out.Total = len(out.Data)
				return out, nil
			}
		}
		if page.After == "" {
			break
		}
		chunk.After = page.After
		if scanned >= MaxScan {
			out.After = page.After
		}
	}
	out.Total = len(out.Data)
	return out, nil
}

// MaxOwned bounds how many owned entities the owned list looks for.
const MaxOwned = 10000

// Owned lists the tasks about entities p owns, directly or through a team p belongs
// to, examining at most MaxScan tasks per request (as a windowed list). Errors: as
// List, EUnauthorized.
func (s *Service) Owned(ctx context.Context, p *meridian.Principal, q Query) (store.Page, error) {
	if p == nil || p.ID == "" {
		return store.Page{}, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	o, err := options(q)
	if err != nil {
		return store.Page{}, err
	}
	owned := map[string]bool{} // "type fqn"
	err = s.ents.InTx(ctx, false, func(tx store.Tx) error {
		owners := []string{p.ID}
		teams, err := tx.Relations(ctx, store.RelationQuery{FromID: p.ID, Type: "teams"})
		if err != nil {
			return err
		}
		for _, t := range teams {
			owners = append(owners, t.ToID)
		}
		for _, id := range owners {
			rels, err := tx.Relations(ctx, store.RelationQuery{ToID: id, Type: "owners"})
			if err != nil {
				return err
			}
			for _, r := range rels {
				if len(owned) >= MaxOwned {
					return nil
				}
				row, err := tx.Get(ctx, r.FromKind, r.FromID)
				if meridian.ErrorCode(err) == meridian.ENotFound {
					continue
				}
				if err != nil {
					return err
				}
				owned[r.FromKind+" "+row.FQN] = true
			}
		}
		return nil
	})
	if err != nil {
		return store.Page{}, err
	}
	return s.scan(ctx, p, o, func(e meridian.Entity) bool {
		link, err := meridian.ParseEntityLink(e.String("about"))
		return err == nil && owned[link.EntityType+" "+link.FQN] && inWindow(e, q)
	})
}

func inWindow(e meridian.Entity, q Query) bool {
	at, _ := e["createdAt"].(float64)
	return int64(at) >= q.StartTs && (q.EndTs == 0 || int64(at) <= q.EndTs)
}

// options turns a query into the engine's list options (without its window).
func options(q Query) (store.ListOptions, error) {
	if q.StartTs < 0 || q.EndTs < 0 || (q.EndTs > 0 && q.StartTs > q.EndTs) {
		return store.ListOptions{}, meridian.Errorf(meridian.EInvalid, "startTs must not be after endTs, both epoch milliseconds")
	}
	o := q.Options
	o.Filters = map[string]string{}
	for k, v := range q.Filters {
		o.Filters[k] = v
	}
	if a := strings.TrimSpace(q.About); a != "" {
		if strings.HasPrefix(a, "<#E::") {
			link, err := meridian.ParseEntityLink(a)
			if err != nil {
				return store.ListOptions{}, err
			}
			a = link.FQN
			o.Filters["aboutType"] = link.EntityType
		}
		fqn, err := meridian.NormalizeFQN(a)
		if err != nil {
			return store.ListOptions{}, meridian.Errorf(meridian.EInvalid, "about: %s", meridian.ErrorMessage(err))
		}
		o.Filters["aboutEntity"] = fqn
	}
	return o, nil
}

// Assigned lists the open and closed tasks assigned to p or to one of p's teams.
// Errors: as List.
func (s *Service) Assigned(ctx context.Context, p *meridian.Principal, q Query) (store.Page, error) {
	if p == nil {
		return store.Page{}, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	return s.list(ctx, p, q, map[string][]string{"assigneeKey": meridian.TaskAssigneeKeys(p)})
}

// Created lists the tasks p created. Errors: as List.
func (s *Service) Created(ctx context.Context, p *meridian.Principal, q Query) (store.Page, error) {
	if p == nil {
		return store.Page{}, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	q.Filters = withFilter(q.Filters, "createdBy", p.Name)
	return s.List(ctx, p, q)
}

// DataAccessRequests lists the data access request tasks. Errors: as List.
func (s *Service) DataAccessRequests(ctx context.Context, p *meridian.Principal, q Query) (store.Page, error) {
	q.Filters = withFilter(q.Filters, "type", meridian.TaskTypeDataAccessRequest)
	return s.List(ctx, p, q)
}

// Count counts the tasks a query selects, without reading them (no time window) or
// among the first MaxScan tasks examined (with one). Errors: as List.
func (s *Service) Count(ctx context.Context, p *meridian.Principal, q Query) (int, error) {
	if q.StartTs == 0 && q.EndTs == 0 {
		o, err := options(q)
		if err != nil {
			return 0, err
		}
		o.Limit, o.After, o.Before = 0, "", ""
		page, err := s.ents.List(ctx, p, meridian.KindTask, o)
		return page.Total, err
	}
	q.Options.Limit = MaxScan
	q.Options.After, q.Options.Before = "", ""
	page, err := s.List(ctx, p, q)
	return len(page.Data), err
}

func withFilter(f map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range f {
		out[a] = b
	}
	out[k] = v
	return out
}
