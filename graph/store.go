package graph

import (
	"slices"
	"sort"
	"sync"

	"github.com/tggo/goRDFlib/term"
)

// Store is the embedded triple store: every term is stored once in a dictionary and
// named by a uint32 id, every triple is three ids, and three indexes (by subject, by
// predicate, by object) list the triples holding an id, so that any pattern is answered
// from the shortest list of its bound positions. Triples belong to descriptions (an
// entity and the nodes it owns): replacing a description removes exactly the triples it
// put. A triple put by two descriptions is counted twice and stays until both are gone.
// Terms no triple uses any more are freed.
//
// Store is safe for concurrent use: queries hold the read lock for their whole
// evaluation (so each sees one state), writes take the write lock.
type Store struct {
	mu sync.RWMutex

	dict     map[string]uint32 // term key → id
	terms    []term.Term       // id → term; id 0 is unused
	termRefs []uint32          // id → triples using it (per position)
	freeTerm []uint32

	triples    []tripleRec
	freeTriple []uint32
	live       int

	// byS lists each subject's triples ordered by predicate (so a subject and
	// predicate pair is a binary search); byP and byO are unordered.
	byS, byP, byO termIndex

	owners map[string]*owner // description entity IRI → what it put
	hidden map[uint32]bool   // node ids of soft-deleted descriptions

	// Scratch space of put, kept between calls (the lock is held).
	scratch      map[Term]uint32 // a description's terms → ids
	scratchNodes map[uint32]bool // a description's subjects
	keyBuf       []byte          // a dictionary key being looked up
}

// tripleRec is one stored triple: its term ids, how many descriptions put it, and its
// position in each index list (so removal is O(1)).
type tripleRec struct {
	s, p, o uint32
	refs    uint32
	pos     [3]uint32 // in byS, byP, byO
}

// owner is what one description put in the store.
type owner struct {
	triples []uint32
	nodes   []uint32 // its subjects, hidden while deleted
	deleted bool
}

// NewStore returns an empty store.
func NewStore() *Store {
	s := &Store{}
	s.reset()
	return s
}

func (s *Store) reset() {
	s.dict = map[string]uint32{}
	s.terms = []term.Term{nil}
	s.termRefs = []uint32{0}
	s.freeTerm = nil
	s.triples = []tripleRec{{}}
	s.freeTriple = nil
	s.live = 0
	s.byS, s.byP, s.byO = nil, nil, nil
	s.owners = map[string]*owner{}
	s.hidden = map[uint32]bool{}
}

// Reset empties the store.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
}

// Len returns the number of distinct triples stored, deleted descriptions included.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live
}

// Terms returns the number of distinct terms stored.
func (s *Store) Terms() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.dict)
}

// Apply replaces descriptions as Backend.Apply says.
func (s *Store) Apply(d Delta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, iri := range d.Remove {
		s.removeOwner(iri)
	}
	for _, desc := range d.Put {
		s.removeOwner(desc.Entity)
		s.put(desc)
	}
}

// Load adds descriptions without removing older ones first (after Reset).
func (s *Store) Load(descs []Description) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, desc := range descs {
		if _, ok := s.owners[desc.Entity]; ok {
			s.removeOwner(desc.Entity)
		}
		s.put(desc)
	}
}

func (s *Store) put(desc Description) {
	o := &owner{deleted: desc.Deleted, triples: make([]uint32, 0, len(desc.Triples))}
	// A description names its subject and its columns, and a few predicates, in most
	// of its triples: each term is looked up once. The scratch map is the store's,
	// emptied for each description (the lock is held).
	if s.scratch == nil {
		s.scratch, s.scratchNodes = make(map[Term]uint32), make(map[uint32]bool)
	}
	ids, seenNode := s.scratch, s.scratchNodes
	clear(ids)
	clear(seenNode)
	intern := func(t Term) uint32 {
		if id, ok := ids[t]; ok {
			s.termRefs[id]++
			return id
		}
		id := s.internTerm(t)
		ids[t] = id
		return id
	}
	for _, t := range desc.Triples {
		if t.P.Kind != KindIRI || t.S.Kind == KindLiteral || !convertible(t.S) || !convertible(t.O) {
			continue
		}
		sid, pid, oid := intern(t.S), intern(t.P), intern(t.O)
		id := s.addTriple(sid, pid, oid)
		o.triples = append(o.triples, id)
		if !seenNode[sid] {
			seenNode[sid] = true
			o.nodes = append(o.nodes, sid)
		}
	}
	if o.deleted {
		for _, n := range o.nodes {
			s.hidden[n] = true
		}
	}
	s.owners[desc.Entity] = o
}

// addTriple adds a reference to the triple (s, p, o), creating it if needed. Each
// reference is dropped once (dropRef), as are the term references taken for it.
func (s *Store) addTriple(sid, pid, oid uint32) uint32 {
	for _, id := range s.subjectPredicate(sid, pid) {
		r := &s.triples[id]
		if r.o == oid {
			r.refs++
			return id
		}
	}
	var id uint32
	if n := len(s.freeTriple); n > 0 {
		id = s.freeTriple[n-1]
		s.freeTriple = s.freeTriple[:n-1]
	} else {
		id = uint32(len(s.triples))
		s.triples = append(s.triples, tripleRec{})
	}
	r := tripleRec{s: sid, p: pid, o: oid, refs: 1}
	s.triples[id] = r
	s.insertS(sid, id)
	r.pos[0] = s.triples[id].pos[0]
	r.pos[1] = s.byP.add(pid, id)
	r.pos[2] = s.byO.add(oid, id)

	s.triples[id] = r
	s.live++
	return id
}

func (s *Store) removeOwner(iri string) {
	o, ok := s.owners[iri]
	if !ok {
		return
	}
	delete(s.owners, iri)
	if o.deleted {
		for _, n := range o.nodes {
			delete(s.hidden, n)
		}
	}
	for _, id := range o.triples {
		s.dropRef(id)
	}
}

// dropRef removes one reference to a triple, and the triple with its last one.
func (s *Store) dropRef(id uint32) {
	r := &s.triples[id]
	if r.refs == 0 {
		return
	}
	r.refs--
	sid, pid, oid := r.s, r.p, r.o
	s.release(sid)
	s.release(pid)
	s.release(oid)
	if r.refs > 0 {
		return
	}
	s.removeS(sid, r.pos[0])
	s.unlist(s.byP, pid, r.pos[1], 1)
	s.unlist(s.byO, oid, r.pos[2], 2)
	*r = tripleRec{}
	s.freeTriple = append(s.freeTriple, id)
	s.live--
}

// unlist removes the entry at pos of index[key] by moving the last entry there.
func (s *Store) unlist(index termIndex, key, pos uint32, which int) {
	l := index[key]
	last := uint32(len(l) - 1)
	if pos != last {
		moved := l[last]
		l[pos] = moved
		s.triples[moved].pos[which] = pos
	}
	if last == 0 {
		l = nil
	} else {
		l = l[:last]
	}
	index[key] = l
}

// subjectPredicate returns the triples of subject sid with predicate pid: a run of
// byS[sid], found by binary search.
func (s *Store) subjectPredicate(sid, pid uint32) []uint32 {
	l := s.byS.of(sid)
	lo := sort.Search(len(l), func(i int) bool { return s.triples[l[i]].p >= pid })
	hi := lo
	for hi < len(l) && s.triples[l[hi]].p == pid {
		hi++
	}
	return l[lo:hi]
}

// insertS inserts triple id in byS[sid] after the triples of predicates up to its
// own, renumbering the positions of those it shifts.
func (s *Store) insertS(sid, id uint32) {
	l := s.byS.of(sid)
	pid := s.triples[id].p
	at := sort.Search(len(l), func(i int) bool { return s.triples[l[i]].p > pid })
	l = append(l, 0)
	copy(l[at+1:], l[at:])
	l[at] = id
	for i := at; i < len(l); i++ {
		s.triples[l[i]].pos[0] = uint32(i)
	}
	s.byS.set(sid, l)
}

// removeS removes the entry at pos of byS[sid], keeping the order.
func (s *Store) removeS(sid, pos uint32) {
	l := s.byS[sid]
	copy(l[pos:], l[pos+1:])
	l = l[:len(l)-1]
	for i := int(pos); i < len(l); i++ {
		s.triples[l[i]].pos[0] = uint32(i)
	}
	if len(l) == 0 {
		l = nil
	}
	s.byS[sid] = l
}

// termIndex lists, by term id, the triples holding the term in one position. Term ids
// are dense (freed ones are reused), so a slice indexed by id replaces a map: a lookup
// is an index, not a hash probe in a map of millions of keys. It grows to the largest
// id it lists; a shorter one lists nothing for the ids beyond it.
type termIndex [][]uint32

// of returns the triples listed for term id.
func (x termIndex) of(id uint32) []uint32 {
	if int(id) < len(x) {
		return x[id]
	}
	return nil
}

// set lists l for term id.
func (x *termIndex) set(id uint32, l []uint32) {
	if int(id) >= len(*x) {
		if l == nil {
			return
		}
		*x = slices.Grow(*x, int(id)+1-len(*x))[:id+1]
	}
	(*x)[id] = l
}

// add appends triple id to the list of term key and returns its position there.
func (x *termIndex) add(key, id uint32) uint32 {
	l := x.of(key)
	x.set(key, append(l, id))
	return uint32(len(l))
}

// internTerm is intern for a Term that toRDF converts. An IRI already in the
// dictionary (a predicate, a class, a tag, a subject put again) is found by its key
// without building its goRDFlib term, which is built only for a term new to the store.
func (s *Store) internTerm(t Term) uint32 {
	if t.Kind == KindIRI {
		s.keyBuf = append(append(s.keyBuf[:0], iriKeyPrefix...), t.Value...)
		if id, ok := s.dict[string(s.keyBuf)]; ok { // the conversion does not allocate
			s.termRefs[id]++
			return id
		}
	}
	rt, _ := toRDF(t)
	return s.intern(rt)
}

// iriKeyPrefix starts term.TermKey of an IRI: "U:" and the IRI
// (TestIRIKeyIsTheLibrarysTermKey).
const iriKeyPrefix = "U:"

// intern returns the id of t, adding it, and takes a reference to it.
func (s *Store) intern(t term.Term) uint32 {
	k := term.TermKey(t)
	if id, ok := s.dict[k]; ok {
		s.termRefs[id]++
		return id
	}
	var id uint32
	if n := len(s.freeTerm); n > 0 {
		id = s.freeTerm[n-1]
		s.freeTerm = s.freeTerm[:n-1]
		s.terms[id] = t
		s.termRefs[id] = 1
	} else {
		id = uint32(len(s.terms))
		s.terms = append(s.terms, t)
		s.termRefs = append(s.termRefs, 1)
	}
	s.dict[k] = id
	return id
}

// release drops a reference to a term and frees it with its last one.
func (s *Store) release(id uint32) {
	if s.termRefs[id] == 0 {
		return
	}
	s.termRefs[id]--
	if s.termRefs[id] == 0 {
		delete(s.dict, term.TermKey(s.terms[id]))
		s.terms[id] = nil
		s.freeTerm = append(s.freeTerm, id)
	}
}

// lookup returns the id of t, or 0 when no triple uses it. The read lock is held.
func (s *Store) lookup(t term.Term) uint32 {
	if t == nil {
		return 0
	}
	return s.dict[term.TermKey(t)]
}
