package graph

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/tggo/goRDFlib/term"
)

// ProjectionVersion names the projection's rules (what triples an entity becomes). A
// snapshot written under another version is ignored and the projection rebuilt: bump
// it whenever Projector or the ontology's mapping changes.
const ProjectionVersion = 1

// snapshotMagic opens every snapshot file; snapshotFormat is the layout of what follows.
const (
	snapshotMagic  = "MERIDIAN-GRAPH\x00\x00"
	snapshotFormat = 1
)

// snapshotHeaderLen is the fixed header: magic, format (uint32), projection version
// (uint32), ontology fingerprint (32 bytes), sequence number (int64), length of the
// event id (uint32), payload length (uint64) and the payload's CRC-32C (uint32).
const snapshotHeaderLen = len(snapshotMagic) + 4 + 4 + 32 + 8 + 4 + 8 + 4

// maxSnapshotID bounds the event id stored in a header.
const maxSnapshotID = 256

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// SnapshotMeta says what a snapshot reflects: the catalog up to and including the
// outbox event Seq (whose id is EventID, empty when unknown), projected under
// ProjectionVersion with the ontology whose fingerprint is Ontology.
type SnapshotMeta struct {
	Seq      int64
	EventID  string
	Ontology [32]byte
	// Version is the projection version the snapshot was written under.
	Version uint32
}

// ErrSnapshotInvalid wraps every reason a snapshot file is refused: not a snapshot,
// another format, damaged, or inconsistent.
var ErrSnapshotInvalid = errors.New("invalid graph snapshot")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotInvalid, fmt.Sprintf(format, args...))
}

// storeImage is a copy of what a Store must keep to be rebuilt: its terms and triples
// by id, and what each description put. It is taken under the read lock (terms are
// immutable values, owners are never changed in place) and encoded without it.
type storeImage struct {
	terms   []term.Term
	triples []tripleRec
	owners  map[string]*owner
}

// image copies the store's contents under its read lock.
func (s *Store) image() storeImage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	img := storeImage{terms: make([]term.Term, len(s.terms)), triples: make([]tripleRec, len(s.triples)),
		owners: make(map[string]*owner, len(s.owners))}
	copy(img.terms, s.terms)
	copy(img.triples, s.triples)
	for k, o := range s.owners {
		img.owners[k] = o
	}
	return img
}

// snapshotChunk is how much of a payload is encoded in memory before it is written
// out: a large catalog's snapshot is streamed, never held whole.
const snapshotChunk = 1 << 20

// payloadWriter encodes a payload in chunks of about snapshotChunk bytes and writes
// each to w, keeping the first write error.
type payloadWriter struct {
	w   io.Writer
	b   []byte
	n   int64 // bytes written to w
	err error
}

// spill writes the encoded bytes once they reach snapshotChunk.
func (p *payloadWriter) spill() {
	if len(p.b) >= snapshotChunk {
		p.flush()
	}
}

func (p *payloadWriter) flush() {
	if p.err == nil && len(p.b) > 0 {
		var n int
		n, p.err = p.w.Write(p.b)
		p.n += int64(n)
	}
	p.b = p.b[:0]
}

// encodeTo writes the image's payload to w and returns its length: the terms (kind,
// value, datatype, language; kind 0 for a free id), the triples (three term ids, zeros
// for a free id) and the descriptions (IRI, deleted, triple ids, node ids), sorted by
// IRI for a stable file. Reference counts and indexes are derived again when the
// payload is decoded.
func (img storeImage) encodeTo(w io.Writer) (int64, error) {
	p := &payloadWriter{w: w, b: make([]byte, 0, snapshotChunk+64<<10)}
	p.b = binary.AppendUvarint(p.b, uint64(len(img.terms)))
	for _, t := range img.terms[1:] {
		if t == nil {
			p.b = append(p.b, byte(KindNone))
			continue
		}
		v := fromRDF(t)
		p.b = append(p.b, byte(v.Kind))
		p.b = appendString(p.b, v.Value)
		p.b = appendString(p.b, v.Datatype)
		p.b = appendString(p.b, v.Lang)
		p.spill()
	}
	p.b = binary.AppendUvarint(p.b, uint64(len(img.triples)))
	for _, r := range img.triples[1:] {
		if r.refs == 0 {
			r = tripleRec{}
		}
		p.b = binary.AppendUvarint(p.b, uint64(r.s))
		p.b = binary.AppendUvarint(p.b, uint64(r.p))
		p.b = binary.AppendUvarint(p.b, uint64(r.o))
		p.spill()
	}
	iris := make([]string, 0, len(img.owners))
	for k := range img.owners {
		iris = append(iris, k)
	}
	sort.Strings(iris)
	p.b = binary.AppendUvarint(p.b, uint64(len(iris)))
	for _, iri := range iris {
		o := img.owners[iri]
		p.b = appendString(p.b, iri)
		if o.deleted {
			p.b = append(p.b, 1)
		} else {
			p.b = append(p.b, 0)
		}
		p.b = appendIDs(p.b, o.triples)
		p.b = appendIDs(p.b, o.nodes)
		p.spill()
	}
	p.flush()
	return p.n, p.err
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendIDs(b []byte, ids []uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id))
	}
	return b
}

// WriteSnapshot writes the store and meta to path atomically: to a temporary file in
// the same directory, synced, renamed over path, and the directory synced. It holds
// the store's read lock only while copying its tables, so queries and updates go on
// while the file is encoded and written. It returns the file's size.
func (s *Store) WriteSnapshot(path string, meta SnapshotMeta) (int64, error) {
	return writeSnapshot(path, s.image(), meta)
}

// writeSnapshot encodes img and writes it to path as WriteSnapshot says. The payload
// is streamed to the file after room for the header, which is written last, once the
// payload's length and checksum are known.
func writeSnapshot(path string, img storeImage, meta SnapshotMeta) (int64, error) {
	if len(meta.EventID) > maxSnapshotID {
		meta.EventID = ""
	}
	headLen := snapshotHeaderLen + len(meta.EventID)
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Seek(int64(headLen), io.SeekStart); err != nil {
		return 0, err
	}
	sum := crc32.New(crcTable)
	size, err := img.encodeTo(io.MultiWriter(f, sum))
	if err != nil {
		return 0, err
	}
	head := make([]byte, 0, headLen)
	head = append(head, snapshotMagic...)
	head = binary.LittleEndian.AppendUint32(head, snapshotFormat)
	head = binary.LittleEndian.AppendUint32(head, meta.Version)
	head = append(head, meta.Ontology[:]...)
	head = binary.LittleEndian.AppendUint64(head, uint64(meta.Seq))
	head = binary.LittleEndian.AppendUint32(head, uint32(len(meta.EventID)))
	head = binary.LittleEndian.AppendUint64(head, uint64(size))
	head = binary.LittleEndian.AppendUint32(head, sum.Sum32())
	head = append(head, meta.EventID...)
	if _, err := f.WriteAt(head, 0); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return int64(headLen) + size, nil
}

// ReadSnapshotMeta reads and checks a snapshot's header only. Errors: those of the
// file system (fs.ErrNotExist when there is none) and ErrSnapshotInvalid.
func ReadSnapshotMeta(path string) (SnapshotMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return SnapshotMeta{}, err
	}
	defer f.Close()
	meta, _, _, err := readHeader(f)
	return meta, err
}

// readHeader reads the header and returns the meta, the payload length and its CRC.
func readHeader(r io.Reader) (SnapshotMeta, uint64, uint32, error) {
	var meta SnapshotMeta
	head := make([]byte, snapshotHeaderLen)
	if _, err := io.ReadFull(r, head); err != nil {
		return meta, 0, 0, invalid("the header is short")
	}
	if string(head[:len(snapshotMagic)]) != snapshotMagic {
		return meta, 0, 0, invalid("not a graph snapshot")
	}
	h := head[len(snapshotMagic):]
	if v := binary.LittleEndian.Uint32(h); v != snapshotFormat {
		return meta, 0, 0, invalid("file format %d, this build reads %d", v, snapshotFormat)
	}
	meta.Version = binary.LittleEndian.Uint32(h[4:])
	copy(meta.Ontology[:], h[8:40])
	meta.Seq = int64(binary.LittleEndian.Uint64(h[40:]))
	idLen := binary.LittleEndian.Uint32(h[48:])
	size := binary.LittleEndian.Uint64(h[52:])
	sum := binary.LittleEndian.Uint32(h[60:])
	if meta.Seq < 0 || idLen > maxSnapshotID {
		return meta, 0, 0, invalid("the header is damaged")
	}
	id := make([]byte, idLen)
	if _, err := io.ReadFull(r, id); err != nil {
		return meta, 0, 0, invalid("the header is short")
	}
	meta.EventID = string(id)
	return meta, size, sum, nil
}

// ReadSnapshot reads a snapshot file into a new Store. The payload must have the length
// and checksum its header records, and every id in it must name a stored term or
// triple. Errors: those of the file system and ErrSnapshotInvalid.
func ReadSnapshot(path string) (*Store, SnapshotMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, SnapshotMeta{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, SnapshotMeta{}, err
	}
	meta, size, sum, err := readHeader(f)
	if err != nil {
		return nil, meta, err
	}
	// The payload is the rest of the file: a length that disagrees with the file's size
	// is damage, and nothing larger than the file is allocated.
	if rest := st.Size() - int64(snapshotHeaderLen+len(meta.EventID)); rest < 0 || uint64(rest) != size {
		return nil, meta, invalid("the file is %d bytes, its header says %d", st.Size(), size)
	}
	payload := make([]byte, size)
	if _, err := io.ReadFull(f, payload); err != nil {
		return nil, meta, invalid("the payload is short")
	}
	if crc32.Checksum(payload, crcTable) != sum {
		return nil, meta, invalid("the checksum does not match")
	}
	s, err := decodeStore(payload)
	if err != nil {
		return nil, meta, err
	}
	return s, meta, nil
}

// decoder reads a payload, recording the first error.
type decoder struct {
	r   *bytes.Reader
	err error
}

func (d *decoder) uvarint(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil || v > max {
		d.err = invalid("the payload is damaged")
		return 0
	}
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	c, err := d.r.ReadByte()
	if err != nil {
		d.err = invalid("the payload is short")
	}
	return c
}

func (d *decoder) string() string {
	n := d.uvarint(uint64(d.r.Len()))
	if d.err != nil {
		return ""
	}
	b := make([]byte, n)
	_, _ = io.ReadFull(d.r, b)
	return string(b)
}

// count reads a length that at least minBytes bytes per element must follow, so a
// damaged length never allocates more than the payload could hold.
func (d *decoder) count(minBytes int) int {
	return int(d.uvarint(uint64(d.r.Len() / minBytes)))
}

// decodeStore rebuilds a Store from a payload: terms and triples keep their ids, the
// free lists are the unused ids, and the reference counts, dictionary, indexes and
// hidden nodes are derived from the descriptions.
func decodeStore(payload []byte) (*Store, error) {
	d := &decoder{r: bytes.NewReader(payload)}
	s := NewStore()
	nTerms := d.count(1) // id 0 included, which is not written
	if d.err == nil && nTerms == 0 {
		return nil, invalid("no term table")
	}
	s.terms = make([]term.Term, max(nTerms, 1))
	s.termRefs = make([]uint32, max(nTerms, 1))
	for id := 1; id < nTerms && d.err == nil; id++ {
		kind := TermKind(d.byte())
		if kind == KindNone {
			continue
		}
		v := Term{Kind: kind, Value: d.string(), Datatype: d.string(), Lang: d.string()}
		t, ok := toRDF(v)
		if d.err != nil {
			break
		}
		if !ok || kind > KindBlank {
			return nil, invalid("term %d has kind %d", id, kind)
		}
		s.terms[id] = t
	}
	nTriples := d.count(3)
	if d.err == nil && nTriples == 0 {
		return nil, invalid("no triple table")
	}
	s.triples = make([]tripleRec, max(nTriples, 1))
	isTerm := func(id uint64) bool { return id > 0 && id < uint64(nTerms) && s.terms[id] != nil }
	for id := 1; id < nTriples && d.err == nil; id++ {
		sid, pid, oid := d.uvarint(uint64(nTerms)), d.uvarint(uint64(nTerms)), d.uvarint(uint64(nTerms))
		if sid == 0 && pid == 0 && oid == 0 {
			continue
		}
		if d.err == nil && (!isTerm(sid) || !isTerm(pid) || !isTerm(oid)) {
			return nil, invalid("triple %d names a missing term", id)
		}
		s.triples[id] = tripleRec{s: uint32(sid), p: uint32(pid), o: uint32(oid)}
	}
	nOwners := d.count(3)
	for i := 0; i < nOwners && d.err == nil; i++ {
		iri := d.string()
		o := &owner{deleted: d.byte() == 1}
		o.triples = make([]uint32, d.count(1))
		for j := range o.triples {
			id := d.uvarint(uint64(nTriples))
			if d.err == nil && (id == 0 || id >= uint64(nTriples) || s.triples[id].p == 0) {
				return nil, invalid("description %s names a missing triple", iri)
			}
			o.triples[j] = uint32(id)
			s.triples[id].refs++
		}
		o.nodes = make([]uint32, d.count(1))
		for j := range o.nodes {
			id := d.uvarint(uint64(nTerms))
			if d.err == nil && !isTerm(id) {
				return nil, invalid("description %s names a missing node", iri)
			}
			o.nodes[j] = uint32(id)
			if o.deleted {
				s.hidden[uint32(id)] = true
			}
		}
		if _, dup := s.owners[iri]; dup && d.err == nil {
			return nil, invalid("description %s is stored twice", iri)
		}
		s.owners[iri] = o
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.r.Len() != 0 {
		return nil, invalid("%d bytes follow the payload", d.r.Len())
	}
	if err := s.index(); err != nil {
		return nil, err
	}
	return s, nil
}

// index derives what decodeStore does not read: a triple no description references
// is freed, each live triple takes its references to its terms and enters the three
// indexes (byS ordered by predicate), and the dictionary lists every used term. Each
// index list is allocated once at its final length, from a first counting pass.
func (s *Store) index() error {
	var count [3][]uint32
	for i := range count {
		count[i] = make([]uint32, len(s.terms))
	}
	for id := 1; id < len(s.triples); id++ {
		r := &s.triples[id]
		if r.refs == 0 {
			*r = tripleRec{}
			s.freeTriple = append(s.freeTriple, uint32(id))
			continue
		}
		s.termRefs[r.s] += r.refs
		s.termRefs[r.p] += r.refs
		s.termRefs[r.o] += r.refs
		count[0][r.s]++
		count[1][r.p]++
		count[2][r.o]++
		s.live++
	}
	indexes := [3]*termIndex{&s.byS, &s.byP, &s.byO}
	for i, index := range indexes {
		*index = make(termIndex, len(s.terms))
		backing := make([]uint32, 0, s.live)
		for id, n := range count[i] {
			if n > 0 {
				(*index)[id] = backing[len(backing) : len(backing) : len(backing)+int(n)]
				backing = backing[:len(backing)+int(n)]
			}
		}
	}
	for id := 1; id < len(s.triples); id++ {
		r := &s.triples[id]
		if r.refs == 0 {
			continue
		}
		for i, key := range [3]uint32{r.s, r.p, r.o} {
			r.pos[i] = indexes[i].add(key, uint32(id))
		}
	}
	for _, l := range s.byS {
		slices.SortFunc(l, func(a, b uint32) int { return cmp.Compare(s.triples[a].p, s.triples[b].p) })
		for i, id := range l {
			s.triples[id].pos[0] = uint32(i)
		}
	}
	s.dict = make(map[string]uint32, len(s.terms))
	for id := 1; id < len(s.terms); id++ {
		t := s.terms[id]
		if t == nil || s.termRefs[id] == 0 {
			s.terms[id] = nil
			s.termRefs[id] = 0
			s.freeTerm = append(s.freeTerm, uint32(id))
			continue
		}
		k := term.TermKey(t)
		if _, dup := s.dict[k]; dup {
			return invalid("term %d is stored twice", id)
		}
		s.dict[k] = uint32(id)
	}
	return nil
}
