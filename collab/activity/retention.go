package activity

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// domainKind is the kind whose FQNs name the domains of per-domain retentions.
const domainKind = "domain"

// Settings are the activity stream's retention (activityStreamConfig).
type Settings struct {
	// RetentionDays is the global retention.
	RetentionDays int `json:"retentionDays"`
	// Domains are the domains with their own retention, by domain FQN.
	Domains []DomainRetention `json:"domains"`
}

// DomainRetention is one domain's own retention.
type DomainRetention struct {
	Domain        string `json:"domain"`
	RetentionDays int    `json:"retentionDays"`
}

// Settings returns the retention settings; the global retention is
// DefaultRetentionDays until set.
func (s *Service) Settings(ctx context.Context) (Settings, error) {
	out := Settings{RetentionDays: DefaultRetentionDays, Domains: []DomainRetention{}}
	err := store.InModuleTx(ctx, s.db, false, func(db store.SQL) error {
		rows, err := db.Query(ctx, "SELECT domain, days FROM activity_retention ORDER BY domain")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d DomainRetention
			if err := rows.Scan(&d.Domain, &d.RetentionDays); err != nil {
				return err
			}
			if d.Domain == "" {
				out.RetentionDays = d.RetentionDays
			} else {
				out.Domains = append(out.Domains, d)
			}
		}
		return rows.Err()
	})
	return out, err
}

func checkDays(what string, days int) error {
	if days < MinRetentionDays || days > MaxRetentionDays {
		return meridian.Errorf(meridian.EInvalid, "%s must be between %d and %d days", what, MinRetentionDays, MaxRetentionDays)
	}
	return nil
}

// PutSettings replaces the retention settings; only admins may. Each domain must
// exist and appear once. Errors: EForbidden, EInvalid (days out of bounds, a repeated
// or blank domain, too many domains), ENotFound (no such domain).
func (s *Service) PutSettings(ctx context.Context, p *meridian.Principal, in Settings) (Settings, error) {
	if p == nil {
		return Settings{}, meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if !p.IsAdmin() {
		return Settings{}, meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [EditActivitySettings] not allowed", p.Name)
	}
	if err := checkDays("retentionDays", in.RetentionDays); err != nil {
		return Settings{}, err
	}
	if len(in.Domains) > MaxDomainRetentions {
		return Settings{}, meridian.Errorf(meridian.EInvalid, "At most %d domains may have their own retention", MaxDomainRetentions)
	}
	seen := map[string]bool{}
	for i, d := range in.Domains {
		if strings.TrimSpace(d.Domain) == "" {
			return Settings{}, meridian.Errorf(meridian.EInvalid, "domains[%d].domain is required", i)
		}
		if len(d.Domain) > maxFilter || strings.ContainsRune(d.Domain, 0) || !utf8.ValidString(d.Domain) {
			return Settings{}, meridian.Errorf(meridian.EInvalid, "domains[%d].domain must be a fully qualified name of at most %d bytes", i, maxFilter)
		}
		if seen[d.Domain] {
			return Settings{}, meridian.Errorf(meridian.EInvalid, "domains[%d].domain %s is repeated", i, d.Domain)
		}
		seen[d.Domain] = true
		if err := checkDays("domains["+strconv.Itoa(i)+"].retentionDays", d.RetentionDays); err != nil {
			return Settings{}, err
		}
	}
	err := s.ents.InTx(ctx, true, func(tx store.Tx) error {
		for _, d := range in.Domains {
			if _, _, err := s.ents.Load(ctx, tx, p, store.OpView, domainKind, store.ByFQN(d.Domain), store.IncludeNonDeleted); err != nil {
				return err
			}
		}
		db := tx.SQL()
		if _, err := db.Exec(ctx, "DELETE FROM activity_retention"); err != nil {
			return err
		}
		if _, err := db.Exec(ctx, "INSERT INTO activity_retention (domain, days) VALUES ('', $1)", in.RetentionDays); err != nil {
			return err
		}
		for _, d := range in.Domains {
			if _, err := db.Exec(ctx, "INSERT INTO activity_retention (domain, days) VALUES ($1, $2)", d.Domain, d.RetentionDays); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Settings{}, err
	}
	out := Settings{RetentionDays: in.RetentionDays, Domains: append([]DomainRetention{}, in.Domains...)}
	sort.Slice(out.Domains, func(i, j int) bool { return out.Domains[i].Domain < out.Domains[j].Domain })
	return out, nil
}

// PruneResult is what a retention run deleted.
type PruneResult struct {
	Deleted int64 `json:"deleted"`
	// Cutoff is the global cutoff: events before it (epoch ms) were deleted, unless
	// their domain has its own retention.
	Cutoff int64 `json:"cutoff"`
}

// Prune deletes the events older than their retention, counted back from the
// service's clock, a batch at a time. It is idempotent. Errors: the store's.
func (s *Service) Prune(ctx context.Context) (PruneResult, error) {
	set, err := s.Settings(ctx)
	if err != nil {
		return PruneResult{}, err
	}
	now := s.c.Now()
	cutoff := func(days int) int64 { return now.Add(-time.Duration(days) * 24 * time.Hour).UnixMilli() }
	res := PruneResult{Cutoff: cutoff(set.RetentionDays)}
	// Events of the domains without their own retention, and of no domain.
	args := []any{res.Cutoff}
	var marks []string
	for _, d := range set.Domains {
		args = append(args, d.Domain)
		marks = append(marks, "$"+strconv.Itoa(len(args)))
	}
	where := "ts < $1"
	if len(marks) > 0 {
		where += " AND domain NOT IN (" + strings.Join(marks, ", ") + ")"
	}
	n, err := s.deleteBatches(ctx, where, args)
	res.Deleted += n
	if err != nil {
		return res, err
	}
	for _, d := range set.Domains {
		n, err := s.deleteBatches(ctx, "domain = $1 AND ts < $2", []any{d.Domain, cutoff(d.RetentionDays)})
		res.Deleted += n
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// deleteBatches deletes the events matching where, pruneBatch per transaction, so a
// large backlog never holds the write lock for long.
func (s *Service) deleteBatches(ctx context.Context, where string, args []any) (int64, error) {
	var total int64
	limit := "$" + strconv.Itoa(len(args)+1)
	for {
		var n int64
		err := store.InModuleTx(ctx, s.db, true, func(db store.SQL) error {
			var err error
			n, err = db.Exec(ctx, "DELETE FROM activity_events WHERE id IN (SELECT id FROM activity_events WHERE "+where+
				" LIMIT "+limit+")", append(args, pruneBatch)...)
			return err
		})
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// StartRetention starts the durable retention job now and returns its id. Errors:
// those of the jobs service (ETooManyRequests), EInternal when no jobs service is set.
func (s *Service) StartRetention(ctx context.Context) (string, error) {
	if s.c.Jobs == nil {
		return "", meridian.Errorf(meridian.EInternal, "no jobs service is configured")
	}
	return s.c.Jobs.Start(ctx, meridian.System, JobTypeRetention, struct{}{}, s.RunRetention)
}

// RunRetention is the retention job's body, and its resumer after a restart: pruning
// is idempotent, so a job that was interrupted simply prunes again.
func (s *Service) RunRetention(ctx context.Context, progress store.JobProgress) (any, error) {
	res, err := s.Prune(ctx)
	if err != nil {
		return nil, err
	}
	if progress != nil {
		_ = progress.Progress(ctx, 100, nil)
	}
	return res, nil
}

// Run starts the retention job at once and then every Interval, until ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.c.Interval)
	defer t.Stop()
	for {
		if s.c.Jobs != nil {
			if _, err := s.StartRetention(ctx); err != nil && ctx.Err() == nil {
				s.c.Logger.Warn("the activity retention job did not start", "err", err)
			}
		} else if _, err := s.Prune(ctx); err != nil && ctx.Err() == nil {
			s.c.Logger.Warn("pruning the activity stream failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
