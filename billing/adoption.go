package billing

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Adoption bounds and definitions. A billable user is a user entity that is not a
// bot. A user is activated once they have any ledger entry, active when they have one
// in the last 30 days, dormant when activated but not active, and engaged when active
// on at least engagedDays distinct UTC days of the last 30.
const (
	DefaultWeeks    = 12
	MaxWeeks        = 104
	activeDays      = 30
	engagedDays     = 4
	DefaultPageSize = 25
	MaxPageSize     = 100
	maxSearch       = 200
	maxPage         = 1000000
)

// User statuses of the adoption directory.
const (
	StatusActive         = "active"
	StatusDormant        = "dormant"
	StatusNeverActivated = "neverActivated"
	StatusDeleted        = "deleted"
)

// UserAggregate is one user's activity over a window.
type UserAggregate struct {
	User       string             `json:"user"`
	Actions    int64              `json:"actions"`
	Credits    float64            `json:"credits"`
	ActiveDays int                `json:"activeDays"`
	LastActive int64              `json:"lastActiveTs,omitempty"`
	Features   map[string]float64 `json:"features"`
}

// SeriesPoint is one point of an active-user series.
type SeriesPoint struct {
	Date  string `json:"date"`
	Users int    `json:"users"`
}

// Funnel is the activation funnel of the billable users.
type Funnel struct {
	BillableUsers int `json:"billableUsers"`
	Activated     int `json:"activated"`
	Active        int `json:"active30Days"`
	Engaged       int `json:"engaged"`
}

// FeatureAdoption is how many users used a feature in the window.
type FeatureAdoption struct {
	Feature         string  `json:"feature"`
	Users           int     `json:"users"`
	PercentBillable float64 `json:"percentOfBillableUsers"`
	Actions         int64   `json:"actions"`
	Credits         float64 `json:"credits"`
}

// Adoption is the adoption report.
type Adoption struct {
	Days              int               `json:"days"`
	Weeks             int               `json:"weeks"`
	DailyActiveUsers  []SeriesPoint     `json:"dailyActiveUsers"`
	WeeklyActiveUsers []SeriesPoint     `json:"weeklyActiveUsers"`
	Funnel            Funnel            `json:"funnel"`
	Features          []FeatureAdoption `json:"features"`
	Users             []UserAggregate   `json:"users"`
}

// AdoptionSummary is the lighter summary.
type AdoptionSummary struct {
	Weeks             int           `json:"weeks"`
	Funnel            Funnel        `json:"funnel"`
	Active7Days       int           `json:"active7Days"`
	WeeklyActiveUsers []SeriesPoint `json:"weeklyActiveUsers"`
}

func boundWeeks(w int) (int, error) {
	if w == 0 {
		return DefaultWeeks, nil
	}
	if w < 1 || w > MaxWeeks {
		return 0, meridian.Errorf(meridian.EInvalid, "weeks must be 1 to %d", MaxWeeks)
	}
	return w, nil
}

// activity is what the adoption reports know of each user from the ledger.
type activity struct {
	first, last map[string]int64          // all time
	days        map[string]map[int64]bool // active UTC days in the scanned window
	agg         map[string]*UserAggregate
	dayUsers    map[int64]map[string]bool
	feat        map[string]map[string]bool
	featAgg     map[string]*agg
}

// scanActivity reads first and last activity of every user, and the window [from, to)
// in detail.
func (s *Service) scanActivity(ctx context.Context, from, to int64) (*activity, error) {
	if err := s.Drain(ctx); err != nil {
		return nil, err
	}
	a := &activity{first: map[string]int64{}, last: map[string]int64{}, days: map[string]map[int64]bool{},
		agg: map[string]*UserAggregate{}, dayUsers: map[int64]map[string]bool{}, feat: map[string]map[string]bool{}, featAgg: map[string]*agg{}}
	err := s.read(ctx, func(db store.SQL) error {
		rows, err := db.Query(ctx, "SELECT user_name, MIN(ts), MAX(ts) FROM billing_ledger GROUP BY user_name")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u string
			var f, l int64
			if err := rows.Scan(&u, &f, &l); err != nil {
				return err
			}
			a.first[u], a.last[u] = f, l
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	err = s.each(ctx, filter{from: from, to: to}, false, func(e Entry) error {
		d := dayOf(e.Ts)
		if a.days[e.User] == nil {
			a.days[e.User] = map[int64]bool{}
			a.agg[e.User] = &UserAggregate{User: e.User, Features: map[string]float64{}}
		}
		a.days[e.User][d] = true
		u := a.agg[e.User]
		u.Actions++
		u.Features[e.Feature] += creditsOf(e.Credits)
		u.Credits += creditsOf(e.Credits)
		if e.Ts > u.LastActive {
			u.LastActive = e.Ts
		}
		if a.dayUsers[d] == nil {
			a.dayUsers[d] = map[string]bool{}
		}
		a.dayUsers[d][e.User] = true
		if a.feat[e.Feature] == nil {
			a.feat[e.Feature] = map[string]bool{}
			a.featAgg[e.Feature] = &agg{}
		}
		a.feat[e.Feature][e.User] = true
		a.featAgg[e.Feature].count++
		a.featAgg[e.Feature].credits += e.Credits
		return nil
	})
	return a, err
}

// funnel computes the activation funnel over the billable users; the activity's
// window must cover the last 30 days.
func (s *Service) funnel(users []user, a *activity, now int64) Funnel {
	var f Funnel
	since := (dayOf(now) - activeDays + 1) * dayMs
	for _, u := range users {
		if u.IsBot || u.Deleted {
			continue
		}
		f.BillableUsers++
		if _, ok := a.first[u.Name]; ok {
			f.Activated++
		}
		if a.last[u.Name] >= since {
			f.Active++
		}
		n := 0
		for d := range a.days[u.Name] {
			if d*dayMs >= since {
				n++
			}
		}
		if n >= engagedDays {
			f.Engaged++
		}
	}
	return f
}

// weekly is the distinct active users of each of the last weeks ISO weeks (Monday
// start, UTC), the current one included, oldest first.
func weekly(a *activity, weeks int, now time.Time) []SeriesPoint {
	start, _ := WindowBounds(WindowWeekly, now)
	out := make([]SeriesPoint, 0, weeks)
	for i := weeks - 1; i >= 0; i-- {
		ws := start.AddDate(0, 0, -7*i)
		users := map[string]bool{}
		for d := dayOf(ws.UnixMilli()); d < dayOf(ws.UnixMilli())+7; d++ {
			for u := range a.dayUsers[d] {
				users[u] = true
			}
		}
		out = append(out, SeriesPoint{Date: ws.Format(time.DateOnly), Users: len(users)})
	}
	return out
}

func (s *Service) billable(ctx context.Context) ([]user, map[string]bool, error) {
	users, err := s.users(ctx)
	if err != nil {
		return nil, nil, err
	}
	set := map[string]bool{}
	for _, u := range users {
		if !u.IsBot && !u.Deleted {
			set[u.Name] = true
		}
	}
	return users, set, nil
}

// Adoption returns the active-user series (the last days UTC days, the last weeks ISO
// weeks), the activation funnel, feature adoption and per-user aggregates over the
// last days days. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) Adoption(ctx context.Context, p *meridian.Principal, weeks, days int) (Adoption, error) {
	if err := requireAdmin(p); err != nil {
		return Adoption{}, err
	}
	weeks, err := boundWeeks(weeks)
	if err != nil {
		return Adoption{}, err
	}
	if days, err = boundDays(days); err != nil {
		return Adoption{}, err
	}
	now := s.now()
	today := dayOf(now.UnixMilli())
	ws, _ := WindowBounds(WindowWeekly, now)
	from := min((today-int64(max(days, activeDays))+1)*dayMs, ws.AddDate(0, 0, -7*(weeks-1)).UnixMilli())
	a, err := s.scanActivity(ctx, from, (today+1)*dayMs)
	if err != nil {
		return Adoption{}, err
	}
	users, billable, err := s.billable(ctx)
	if err != nil {
		return Adoption{}, err
	}
	out := Adoption{Days: days, Weeks: weeks, Funnel: s.funnel(users, a, now.UnixMilli()), Features: []FeatureAdoption{}, Users: []UserAggregate{}}
	first := today - int64(days) + 1
	for d := first; d <= today; d++ {
		out.DailyActiveUsers = append(out.DailyActiveUsers, SeriesPoint{Date: date(d), Users: len(a.dayUsers[d])})
	}
	out.WeeklyActiveUsers = weekly(a, weeks, now)
	// Feature adoption and per-user aggregates over the last days days.
	win, err := s.scanActivity(ctx, first*dayMs, (today+1)*dayMs)
	if err != nil {
		return Adoption{}, err
	}
	for _, f := range s.prices.FeatureNames() {
		fa := FeatureAdoption{Feature: f}
		for u := range win.feat[f] {
			if billable[u] {
				fa.Users++
			}
		}
		if g := win.featAgg[f]; g != nil {
			fa.Actions, fa.Credits = g.count, creditsOf(g.credits)
		}
		if out.Funnel.BillableUsers > 0 {
			fa.PercentBillable = round2(100 * float64(fa.Users) / float64(out.Funnel.BillableUsers))
		}
		out.Features = append(out.Features, fa)
	}
	for u, g := range win.agg {
		g.ActiveDays = len(win.days[u])
		g.Credits = round6(g.Credits)
		out.Users = append(out.Users, *g)
	}
	sort.Slice(out.Users, func(i, j int) bool {
		if out.Users[i].Credits != out.Users[j].Credits {
			return out.Users[i].Credits > out.Users[j].Credits
		}
		return out.Users[i].User < out.Users[j].User
	})
	return out, nil
}

func round6(v float64) float64 { return creditsOf(microOf(v)) }

// AdoptionSummary returns the funnel, the users active in the last 7 days and the
// weekly active-user series. Errors: EUnauthorized, EForbidden, EInvalid, and the
// store's.
func (s *Service) AdoptionSummary(ctx context.Context, p *meridian.Principal, weeks int) (AdoptionSummary, error) {
	if err := requireAdmin(p); err != nil {
		return AdoptionSummary{}, err
	}
	weeks, err := boundWeeks(weeks)
	if err != nil {
		return AdoptionSummary{}, err
	}
	now := s.now()
	today := dayOf(now.UnixMilli())
	ws, _ := WindowBounds(WindowWeekly, now)
	from := min((today-activeDays+1)*dayMs, ws.AddDate(0, 0, -7*(weeks-1)).UnixMilli())
	a, err := s.scanActivity(ctx, from, (today+1)*dayMs)
	if err != nil {
		return AdoptionSummary{}, err
	}
	users, billable, err := s.billable(ctx)
	if err != nil {
		return AdoptionSummary{}, err
	}
	out := AdoptionSummary{Weeks: weeks, Funnel: s.funnel(users, a, now.UnixMilli()), WeeklyActiveUsers: weekly(a, weeks, now)}
	since := (today - 6) * dayMs
	for u := range billable {
		if a.last[u] >= since {
			out.Active7Days++
		}
	}
	return out, nil
}

// DirectoryUser is one row of the adoption directory.
type DirectoryUser struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Email       string `json:"email,omitempty"`
	Status      string `json:"status"`
	Deleted     bool   `json:"deleted"`
	FirstActive int64  `json:"firstActiveTs,omitempty"`
	LastActive  int64  `json:"lastActiveTs,omitempty"`
	// Last30Days are the user's aggregates over the last 30 UTC days.
	Last30Days struct {
		Actions    int64   `json:"actions"`
		Credits    float64 `json:"credits"`
		ActiveDays int     `json:"activeDays"`
	} `json:"last30Days"`
}

// Directory is a page of the adoption directory.
type Directory struct {
	Page     int             `json:"page"`
	PageSize int             `json:"pageSize"`
	Total    int             `json:"total"`
	Data     []DirectoryUser `json:"data"`
}

// DirectoryQuery are the parameters of the directory.
type DirectoryQuery struct {
	Page, PageSize  int
	Search, Status  string
	Sort, Direction string
}

// Sort keys of the directory.
var directorySorts = []string{"name", "credits", "actions", "activeDays", "lastActive", "status"}

// AdoptionUsers returns a page of the billable users (non-bot users: never-activated,
// dormant, active and soft-deleted ones), each with a status and 30-day aggregates.
// search matches name, display name or e-mail (case-insensitive substring); status
// keeps one status; sort is name (default), credits, actions, activeDays, lastActive or
// status; direction asc (default for name) or desc (default otherwise). page counts
// from 0. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) AdoptionUsers(ctx context.Context, p *meridian.Principal, q DirectoryQuery) (Directory, error) {
	if err := requireAdmin(p); err != nil {
		return Directory{}, err
	}
	if q.PageSize == 0 {
		q.PageSize = DefaultPageSize
	}
	switch {
	case q.Page < 0 || q.Page > maxPage:
		return Directory{}, meridian.Errorf(meridian.EInvalid, "page must be 0 to %d", maxPage)
	case q.PageSize < 1 || q.PageSize > MaxPageSize:
		return Directory{}, meridian.Errorf(meridian.EInvalid, "pageSize must be 1 to %d", MaxPageSize)
	case len(q.Search) > maxSearch:
		return Directory{}, meridian.Errorf(meridian.EInvalid, "search is longer than %d characters", maxSearch)
	}
	if q.Status != "" && q.Status != StatusActive && q.Status != StatusDormant && q.Status != StatusNeverActivated && q.Status != StatusDeleted {
		return Directory{}, meridian.Errorf(meridian.EInvalid, "status must be one of %s, %s, %s, %s", StatusActive, StatusDormant, StatusNeverActivated, StatusDeleted)
	}
	if q.Sort == "" {
		q.Sort = "name"
	}
	known := false
	for _, k := range directorySorts {
		known = known || k == q.Sort
	}
	if !known {
		return Directory{}, meridian.Errorf(meridian.EInvalid, "sort must be one of %v", directorySorts)
	}
	if q.Direction == "" {
		q.Direction = "desc"
		if q.Sort == "name" || q.Sort == "status" {
			q.Direction = "asc"
		}
	}
	if q.Direction != "asc" && q.Direction != "desc" {
		return Directory{}, meridian.Errorf(meridian.EInvalid, "direction must be asc or desc")
	}
	now := s.now().UnixMilli()
	since := (dayOf(now) - activeDays + 1) * dayMs
	a, err := s.scanActivity(ctx, since, (dayOf(now)+1)*dayMs)
	if err != nil {
		return Directory{}, err
	}
	users, err := s.users(ctx)
	if err != nil {
		return Directory{}, err
	}
	needle := strings.ToLower(strings.TrimSpace(q.Search))
	var rows []DirectoryUser
	for _, u := range users {
		if u.IsBot {
			continue
		}
		if needle != "" && !strings.Contains(strings.ToLower(u.Name), needle) && !strings.Contains(strings.ToLower(u.DisplayName), needle) &&
			!strings.Contains(strings.ToLower(u.Email), needle) {
			continue
		}
		d := DirectoryUser{Name: u.Name, DisplayName: u.DisplayName, Email: u.Email, Deleted: u.Deleted}
		first, activated := a.first[u.Name]
		if activated {
			d.FirstActive, d.LastActive = first, a.last[u.Name]
		}
		switch {
		case u.Deleted:
			d.Status = StatusDeleted
		case !activated:
			d.Status = StatusNeverActivated
		case d.LastActive >= since:
			d.Status = StatusActive
		default:
			d.Status = StatusDormant
		}
		if g := a.agg[u.Name]; g != nil {
			d.Last30Days.Actions, d.Last30Days.Credits, d.Last30Days.ActiveDays = g.Actions, round6(g.Credits), len(a.days[u.Name])
		}
		if q.Status != "" && d.Status != q.Status {
			continue
		}
		rows = append(rows, d)
	}
	less := func(x, y DirectoryUser) int {
		c := 0
		switch q.Sort {
		case "credits":
			c = cmpF(x.Last30Days.Credits, y.Last30Days.Credits)
		case "actions":
			c = cmpF(float64(x.Last30Days.Actions), float64(y.Last30Days.Actions))
		case "activeDays":
			c = cmpF(float64(x.Last30Days.ActiveDays), float64(y.Last30Days.ActiveDays))
		case "lastActive":
			c = cmpF(float64(x.LastActive), float64(y.LastActive))
		case "status":
			c = strings.Compare(x.Status, y.Status)
		}
		if c == 0 {
			return strings.Compare(x.Name, y.Name)
		}
		return c
	}
	sort.SliceStable(rows, func(i, j int) bool {
		c := less(rows[i], rows[j])
		if q.Direction == "desc" {
			return c > 0
		}
		return c < 0
	})
	out := Directory{Page: q.Page, PageSize: q.PageSize, Total: len(rows), Data: []DirectoryUser{}}
	lo := q.Page * q.PageSize
	if lo < len(rows) {
		out.Data = rows[lo:min(lo+q.PageSize, len(rows))]
	}
	return out, nil
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
