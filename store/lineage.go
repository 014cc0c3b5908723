package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/meridian-catalog/meridian"
)

// Lineage: directed edges from an upstream entity to a downstream one, kept in the
// relationship store as Relation{FromID: upstream, ToID: downstream, Type:
// "upstream"} whose Doc holds the edge's description and lineageDetails.
//
// Choices, where OpenMetadata leaves room:
//   - Adding an edge needs Edit on both ends (OpenMetadata's EDIT_LINEAGE): admins and
//     data stewards may link any entities, a DataConsumer only entities it owns.
//   - Re-adding an existing edge with other details replaces them (entityLineageUpdated);
//     with the same details it changes nothing and records no event.
//   - Every change records one change event in the same transaction, about the
//     downstream (to) entity, which gained or lost an upstream edge: eventType
//     entityLineageAdded, entityLineageUpdated or entityLineageDeleted, and a
//     changeDescription whose fieldsAdded, fieldsUpdated or fieldsDeleted hold
//     "upstreamEdge" with the edge ({fromEntity, toEntity, description?,
//     lineageDetails?}, references in full) as a JSON string. The entity's version
//     does not change, so previousVersion equals currentVersion.
//   - Reads walk the graph breadth first in one read transaction. Soft-deleted
//     entities, and the edges through them, are left out unless IncludeDeleted. A hard
//     delete removes an entity's edges with it.
//   - Lineage links data assets; users, teams, bots, tags, glossaries and
//     data-quality entities cannot be lineage ends.

// relationTypeLineage links an upstream entity to a downstream one.
const relationTypeLineage = "upstream"

// MaxLineageDepth is the deepest walk GetLineage accepts, in each direction.
const MaxLineageDepth = 10

// LineageSources are the accepted lineageDetails.source values (OpenMetadata's).
var LineageSources = []string{"Manual", "ViewLineage", "QueryLineage", "PipelineLineage", "DashboardLineage",
	"DbtLineage", "SparkLineage", "OpenLineage", "ExternalTableLineage", "CrossDatabaseLineage", "ChildAssets"}

// ColumnLineage maps upstream columns (by FQN) to one downstream column.
type ColumnLineage struct {
	FromColumns []string `json:"fromColumns,omitempty"`
	ToColumn    string   `json:"toColumn,omitempty"`
	Function    string   `json:"function,omitempty"`
}

// LineageDetails describe how the downstream entity is derived.
type LineageDetails struct {
	SQLQuery       string              `json:"sqlQuery,omitempty"`
	ColumnsLineage []ColumnLineage     `json:"columnsLineage,omitempty"`
	Pipeline       *meridian.EntityRef `json:"pipeline,omitempty"`
	Source         string              `json:"source,omitempty"`
	Description    string              `json:"description,omitempty"`
}

func (d *LineageDetails) empty() bool {
	return d == nil || (d.SQLQuery == "" && len(d.ColumnsLineage) == 0 && d.Pipeline == nil && d.Source == "" && d.Description == "")
}

// AddLineage is the body of PUT /v1/lineage.
type AddLineage struct {
	Description string    `json:"description,omitempty"`
	Edge        EdgeInput `json:"edge"`
}

// EdgeInput is the edge of an AddLineage: each end named by type and id or
// fullyQualifiedName.
type EdgeInput struct {
	FromEntity     meridian.EntityRef `json:"fromEntity"`
	ToEntity       meridian.EntityRef `json:"toEntity"`
	Description    string             `json:"description,omitempty"`
	LineageDetails *LineageDetails    `json:"lineageDetails,omitempty"`
}

// LineageEdge is one edge of an EntityLineage; the ends are entity ids.
type LineageEdge struct {
	FromEntity     string          `json:"fromEntity"`
	ToEntity       string          `json:"toEntity"`
	Description    string          `json:"description,omitempty"`
	LineageDetails *LineageDetails `json:"lineageDetails,omitempty"`
}

// EntityLineage is the lineage graph around one entity, as OpenMetadata answers it:
// nodes exclude the entity itself; upstream edges were found walking upstream,
// downstream edges walking downstream.
type EntityLineage struct {
	Entity          meridian.EntityRef   `json:"entity"`
	Nodes           []meridian.EntityRef `json:"nodes"`
	UpstreamEdges   []LineageEdge        `json:"upstreamEdges"`
	DownstreamEdges []LineageEdge        `json:"downstreamEdges"`
	// UpstreamDepth and DownstreamDepth give each node's distance from the entity in
	// the direction it was reached (a node in a cycle can be in both).
	UpstreamDepth   map[string]int `json:"-"`
	DownstreamDepth map[string]int `json:"-"`
}

// LineageOptions bound a lineage walk.
type LineageOptions struct {
	Upstream, Downstream int
	IncludeDeleted       bool
}

// edgeDoc is the stored form of an edge's details (Relation.Doc).
type edgeDoc struct {
	Description    string          `json:"description,omitempty"`
	LineageDetails *LineageDetails `json:"lineageDetails,omitempty"`
}

// AddLineage adds the edge, or replaces the details of an existing one. It returns the
// change: entityLineageAdded, entityLineageUpdated, or entityNoChange. Errors: EInvalid
// (an end without type or id/FQN, a self edge, a kind that has no lineage, bad
// details), ENotFound (an end, the pipeline or a column missing), EForbidden (no Edit
// on both ends).
func (s *Entities) AddLineage(ctx context.Context, p *meridian.Principal, a AddLineage) (string, error) {
	change := meridian.EventEntityNoChange
	err := s.inTx(ctx, func(tx Tx) error {
		from, fromDoc, err := s.lineageEnd(ctx, tx, p, "edge.fromEntity", a.Edge.FromEntity)
		if err != nil {
			return err
		}
		to, toDoc, err := s.lineageEnd(ctx, tx, p, "edge.toEntity", a.Edge.ToEntity)
		if err != nil {
			return err
		}
		if from.ID == to.ID {
			return meridian.Errorf(meridian.EInvalid, "Lineage edge from an entity to itself is not allowed")
		}
		doc := edgeDoc{Description: a.Edge.Description, LineageDetails: a.Edge.LineageDetails}
		if doc.Description == "" {
			doc.Description = a.Description
		}
		if err := s.checkDetails(ctx, tx, from, fromDoc, to, toDoc, doc.LineageDetails); err != nil {
			return err
		}
		if doc.LineageDetails.empty() {
			doc.LineageDetails = nil
		}
		var raw []byte
		if doc.Description != "" || doc.LineageDetails != nil {
			raw, _ = json.Marshal(doc)
		}
		existing, err := tx.Relations(ctx, RelationQuery{FromID: from.ID, ToID: to.ID, Type: relationTypeLineage})
		if err != nil {
			return err
		}
		cd := meridian.ChangeDescription{FieldsAdded: []meridian.FieldChange{}, FieldsUpdated: []meridian.FieldChange{},
			FieldsDeleted: []meridian.FieldChange{}, PreviousVersion: to.Version.Float()}
		newValue := edgeChange(from, to, raw)
		switch {
		case len(existing) == 0:
			change = meridian.EventEntityLineageAdded
			cd.FieldsAdded = append(cd.FieldsAdded, meridian.FieldChange{Name: "upstreamEdge", NewValue: newValue})
		case sameEdgeDoc(existing[0].Doc, raw):
			return nil
		default:
			change = meridian.EventEntityLineageUpdated
			cd.FieldsUpdated = append(cd.FieldsUpdated, meridian.FieldChange{Name: "upstreamEdge",
				OldValue: edgeChange(from, to, existing[0].Doc), NewValue: newValue})
		}
		if err := tx.Relate(ctx, Relation{FromID: from.ID, FromKind: from.Kind, ToID: to.ID, ToKind: to.Kind,
			Type: relationTypeLineage, Doc: raw}); err != nil {
			return err
		}
		return s.lineageEvent(ctx, tx, p, change, to, toDoc, &cd)
	})
	return change, err
}

// DeleteLineage removes the edge from one entity to another. Errors: EInvalid,
// ENotFound (an end missing, or "Lineage edge not found"), EForbidden.
func (s *Entities) DeleteLineage(ctx context.Context, p *meridian.Principal, fromKind string, fromKey Key, toKind string, toKey Key) error {
	return s.inTx(ctx, func(tx Tx) error {
		ends := make([]Row, 2)
		docs := make([]meridian.Entity, 2)
		for i, end := range []struct {
			kind string
			key  Key
		}{{fromKind, fromKey}, {toKind, toKey}} {
			k, err := s.reg.Lookup(end.kind)
			if err != nil {
				return err
			}
			if end.key.ID != "" {
				if err := checkID(end.key.ID); err != nil {
					return err
				}
			}
			row, err := getRow(ctx, tx, k, end.key, IncludeAll)
			if err != nil {
				return err
			}
			doc, err := s.full(ctx, tx, k, row, map[string]bool{"owners": true})
			if err != nil {
				return err
			}
			if err := s.authorizeOwned(ctx, tx, p, OpEdit, k, doc); err != nil {
				return err
			}
			ends[i], docs[i] = row, doc
		}
		from, to := ends[0], ends[1]
		existing, err := tx.Relations(ctx, RelationQuery{FromID: from.ID, ToID: to.ID, Type: relationTypeLineage})
		if err != nil {
			return err
		}
		if len(existing) == 0 {
			return meridian.Errorf(meridian.ENotFound, "Lineage edge not found")
		}
		if err := tx.Unrelate(ctx, existing[0]); err != nil {
			return err
		}
		cd := meridian.ChangeDescription{FieldsAdded: []meridian.FieldChange{}, FieldsUpdated: []meridian.FieldChange{},
			FieldsDeleted:   []meridian.FieldChange{{Name: "upstreamEdge", OldValue: edgeChange(from, to, existing[0].Doc)}},
			PreviousVersion: to.Version.Float()}
		return s.lineageEvent(ctx, tx, p, meridian.EventEntityLineageDeleted, to, docs[1], &cd)
	})
}

// GetLineage walks the lineage graph around an entity, up to o.Upstream levels
// upstream and o.Downstream levels downstream (0 to MaxLineageDepth each). Errors:
// EInvalid (bad depth or kind), ENotFound, EForbidden.
func (s *Entities) GetLineage(ctx context.Context, p *meridian.Principal, kind string, key Key, o LineageOptions) (EntityLineage, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return EntityLineage{}, err
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"upstreamDepth", o.Upstream}, {"downstreamDepth", o.Downstream}} {
		if d.v < 0 || d.v > MaxLineageDepth {
			return EntityLineage{}, meridian.Errorf(meridian.EInvalid, "%s must be between 0 and %d", d.name, MaxLineageDepth)
		}
	}
	if key.ID != "" {
		if err := checkID(key.ID); err != nil {
			return EntityLineage{}, err
		}
	}
	var out EntityLineage
	err = s.inReadTx(ctx, func(tx Tx) error {
		include := IncludeNonDeleted
		if o.IncludeDeleted {
			include = IncludeAll
		}
		root, err := getRow(ctx, tx, k, key, include)
		if err != nil {
			return err
		}
		doc, err := s.full(ctx, tx, k, root, map[string]bool{"owners": true})
		if err != nil {
			return err
		}
		if err := s.authorize(p, OpView, k, doc, ownersOf(doc)); err != nil {
			return err
		}
		w := &lineageWalk{tx: tx, root: root.ID, rows: map[string]Row{root.ID: root}, includeDeleted: o.IncludeDeleted}
		out.Entity = refOf(root)
		out.UpstreamDepth = map[string]int{}
		out.DownstreamDepth = map[string]int{}
		if out.UpstreamEdges, err = w.walk(ctx, root.ID, o.Upstream, true, out.UpstreamDepth); err != nil {
			return err
		}
		if out.DownstreamEdges, err = w.walk(ctx, root.ID, o.Downstream, false, out.DownstreamDepth); err != nil {
			return err
		}
		out.Nodes = []meridian.EntityRef{}
		for _, id := range w.order {
			out.Nodes = append(out.Nodes, refOf(w.rows[id]))
		}
		return nil
	})
	return out, err
}

// UpstreamOf lists, in tx, the lineage edges into the entity id (one level), with the
// rows of the entities at their upstream ends by id, soft-deleted ones included; an
// edge whose upstream end is gone is left out. Unlike GetLineage it neither reads the
// entity's document nor authorizes: it is for the engine's own readers, such as the
// knowledge graph's projection, which read as the system.
func UpstreamOf(ctx context.Context, tx Tx, id string) ([]LineageEdge, map[string]Row, error) {
	w := &lineageWalk{tx: tx, root: id, rows: map[string]Row{}, includeDeleted: true}
	edges, err := w.walk(ctx, id, 1, true, map[string]int{})
	return edges, w.rows, err
}

// lineageWalk is one breadth-first walk; rows caches the entities seen and order
// lists the nodes (not the root) in the order they were first reached.
type lineageWalk struct {
	tx             Tx
	root           string
	rows           map[string]Row
	order          []string
	inOrder        map[string]bool
	includeDeleted bool
}

func (w *lineageWalk) row(ctx context.Context, kind, id string) (Row, bool, error) {
	if r, ok := w.rows[id]; ok {
		return r, w.includeDeleted || !r.Deleted, nil
	}
	r, err := w.tx.Get(ctx, kind, id)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return Row{}, false, nil
	}
	if err != nil {
		return Row{}, false, err
	}
	w.rows[id] = r
	return r, w.includeDeleted || !r.Deleted, nil
}

// walk follows edges from root for depth levels, upstream (to the edges' from ends)
// or downstream, and records each reached node's depth.
func (w *lineageWalk) walk(ctx context.Context, root string, depth int, upstream bool, depths map[string]int) ([]LineageEdge, error) {
	if w.inOrder == nil {
		w.inOrder = map[string]bool{}
	}
	edges := []LineageEdge{}
	seenEdge := map[[2]string]bool{}
	visited := map[string]bool{root: true}
	frontier := []string{root}
	for level := 1; level <= depth && len(frontier) > 0; level++ {
		var next []string
		for _, id := range frontier {
			q := RelationQuery{FromID: id, Type: relationTypeLineage}
			if upstream {
				q = RelationQuery{ToID: id, Type: relationTypeLineage}
			}
			rels, err := w.tx.Relations(ctx, q)
			if err != nil {
				return nil, err
			}
			for _, rel := range rels {
				otherID, otherKind := rel.ToID, rel.ToKind
				if upstream {
					otherID, otherKind = rel.FromID, rel.FromKind
				}
				_, ok, err := w.row(ctx, otherKind, otherID)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
				key := [2]string{rel.FromID, rel.ToID}
				if !seenEdge[key] {
					seenEdge[key] = true
					edges = append(edges, edgeOf(rel))
				}
				if visited[otherID] {
					continue
				}
				visited[otherID] = true
				depths[otherID] = level
				if otherID != w.root && !w.inOrder[otherID] {
					w.inOrder[otherID] = true
					w.order = append(w.order, otherID)
				}
				next = append(next, otherID)
			}
		}
		frontier = next
	}
	return edges, nil
}

func edgeOf(rel Relation) LineageEdge {
	e := LineageEdge{FromEntity: rel.FromID, ToEntity: rel.ToID}
	if len(rel.Doc) > 0 {
		var d edgeDoc
		if json.Unmarshal(rel.Doc, &d) == nil {
			e.Description, e.LineageDetails = d.Description, d.LineageDetails
		}
	}
	return e
}

// lineageEnd resolves one end of a new edge and checks the caller may edit it.
func (s *Entities) lineageEnd(ctx context.Context, tx Tx, p *meridian.Principal, field string, ref meridian.EntityRef) (Row, meridian.Entity, error) {
	if strings.TrimSpace(ref.Type) == "" || (ref.ID == "" && ref.FullyQualifiedName == "" && ref.Name == "") {
		return Row{}, nil, meridian.Errorf(meridian.EInvalid, "%s must include type and id or fullyQualifiedName", field)
	}
	k, err := s.reg.Lookup(ref.Type)
	if err != nil {
		return Row{}, nil, err
	}
	if k.NoLineage {
		return Row{}, nil, meridian.Errorf(meridian.EInvalid, "%s: entities of type %s have no lineage", field, k.Name)
	}
	m := map[string]any{"type": k.Name}
	if ref.ID != "" {
		m["id"] = ref.ID
	} else if ref.FullyQualifiedName != "" {
		m["fullyQualifiedName"] = ref.FullyQualifiedName
	} else {
		m["name"] = ref.Name
	}
	row, err := resolveRef(ctx, tx, field, m, []string{k.Name})
	if err != nil {
		return Row{}, nil, err
	}
	doc, err := s.full(ctx, tx, k, row, nil)
	if err != nil {
		return Row{}, nil, err
	}
	if err := s.authorizeOwned(ctx, tx, p, OpEdit, k, doc); err != nil {
		return Row{}, nil, err
	}
	return row, doc, nil
}

// checkDetails validates lineage details and resolves the pipeline to a full
// reference. Column FQNs of a table end must name one of its columns.
func (s *Entities) checkDetails(ctx context.Context, tx Tx, from Row, fromDoc meridian.Entity, to Row, toDoc meridian.Entity, d *LineageDetails) error {
	if d == nil {
		return nil
	}
	if d.Source != "" && !contains(LineageSources, d.Source) {
		return meridian.Errorf(meridian.EInvalid, "lineageDetails.source must be one of %s", strings.Join(LineageSources, ", "))
	}
	if d.Pipeline != nil {
		m := map[string]any{}
		if d.Pipeline.Type != "" {
			m["type"] = d.Pipeline.Type
		}
		if d.Pipeline.ID != "" {
			m["id"] = d.Pipeline.ID
		} else {
			m["fullyQualifiedName"] = d.Pipeline.FullyQualifiedName
		}
		r, err := resolveRef(ctx, tx, "lineageDetails.pipeline", m, []string{"pipeline", "storedProcedure"})
		if err != nil {
			return err
		}
		ref := refOf(r)
		d.Pipeline = &ref
	}
	fromCols, toCols := columnFQNs(from, fromDoc), columnFQNs(to, toDoc)
	for i, cl := range d.ColumnsLineage {
		if cl.ToColumn == "" {
			return meridian.Errorf(meridian.EInvalid, "lineageDetails.columnsLineage[%d].toColumn is required", i)
		}
		if toCols != nil && !toCols[cl.ToColumn] {
			return meridian.Errorf(meridian.EInvalid, "Invalid column name %s: it is not a column of %s", cl.ToColumn, to.FQN)
		}
		for _, c := range cl.FromColumns {
			if fromCols != nil && !fromCols[c] {
				return meridian.Errorf(meridian.EInvalid, "Invalid column name %s: it is not a column of %s", c, from.FQN)
			}
		}
	}
	return nil
}

// columnFQNs returns the FQNs of a table's columns, nested ones included, or nil for
// an entity without columns (whose column names are not checked).
func columnFQNs(r Row, doc meridian.Entity) map[string]bool {
	cols, ok := doc["columns"].([]any)
	if !ok {
		return nil
	}
	out := map[string]bool{}
	var add func(prefix string, cols []any)
	add = func(prefix string, cols []any) {
		for _, c := range cols {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			if name == "" {
				continue
			}
			fqn := prefix + "." + meridian.QuoteName(name)
			out[fqn] = true
			if children, ok := m["children"].([]any); ok {
				add(fqn, children)
			}
		}
	}
	add(r.FQN, cols)
	return out
}

// edgeChange is the JSON-string value of an edge in a change description.
func edgeChange(from, to Row, raw []byte) any {
	m := map[string]any{"fromEntity": refOf(from).Map(), "toEntity": refOf(to).Map()}
	if len(raw) > 0 {
		var d map[string]any
		if json.Unmarshal(raw, &d) == nil {
			for k, v := range d {
				m[k] = v
			}
		}
	}
	return encodeChange(m)
}

func sameEdgeDoc(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// lineageEvent records a lineage change about the downstream entity.
func (s *Entities) lineageEvent(ctx context.Context, tx Tx, p *meridian.Principal, typ string, to Row, toDoc meridian.Entity, cd *meridian.ChangeDescription) error {
	k, _ := s.reg.Kind(to.Kind)
	ev := s.event(p, typ, k, s.masked(k, toDoc), cd)
	ev.ID = meridian.NewID()
	return tx.AppendEvent(ctx, ev)
}
