package vectors

import (
	"math"
	"runtime"
	"sync"
)

// The in-memory search (SQLite) reads a matrix in up to two passes. A large matrix is
// first scanned by its one-bit sign codes, scored against the full-precision query with
// table look-ups (8 per 64 dimensions), in parallel over GOMAXPROCS shards; the rows
// that pass are scored with their int8 codes, and the best of those are rescored
// exactly from the stored vectors (memory.go). A small matrix skips the sign pass.

// Bounds of the sign pass.
const (
	// signOversample is how many rows per row wanted the sign pass lets through.
	signOversample = 16
	// signShare: the sign pass lets through at least 1/signShare of the rows.
	signShare = 16
	// shardRows is the fewest rows one goroutine of the sign pass scans.
	shardRows = 8192
)

// candidate is a row's approximate score.
type candidate struct {
	row   int
	score float32
}

// minHeap keeps the best candidates, the worst on top.
type minHeap []candidate

// offer keeps c among the k best.
func (h *minHeap) offer(c candidate, k int) {
	switch {
	case len(*h) < k:
		*h = append(*h, c)
		h.up(len(*h) - 1)
	case c.score > (*h)[0].score:
		(*h)[0] = c
		h.down(0)
	}
}

func (h minHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].score <= h[i].score {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (h minHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && h[r].score < h[l].score {
			l = r
		}
		if h[i].score <= h[l].score {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// nearest returns the keep rows passing match that score best against q, by their
// int8 codes, in no order; on a large matrix only among those the sign pass lets
// through.
func (mat *matrix) nearest(q []float32, match func(i int) bool, keep int) []candidate {
	n := len(mat.rows)
	pass := max(keep*signOversample, n/signShare)
	var rows []int
	if n > 2*pass {
		rows = mat.signPass(q, match, pass)
	} else {
		rows = make([]int, 0, n)
		for i := range mat.rows {
			if match(i) {
				rows = append(rows, i)
			}
		}
	}
	parts := make([]minHeap, shards(len(rows), shardRows/8))
	parallel(len(rows), len(parts), func(s, lo, hi int) {
		h := make(minHeap, 0, keep)
		for _, i := range rows[lo:hi] {
			h.offer(candidate{i, mat.scales[i] * dotInt8(q, mat.codes[i*mat.dim:(i+1)*mat.dim])}, keep)
		}
		parts[s] = h
	})
	out := parts[0]
	for _, p := range parts[1:] {
		for _, c := range p {
			out.offer(c, keep)
		}
	}
	return out
}

// signPass returns the pass rows passing match that score best by their sign codes
// (more when several tie with the last), in row order.
func (mat *matrix) signPass(q []float32, match func(i int) bool, pass int) []int {
	lut := make([]float32, 2048*mat.words)
	signTable(q, lut)
	n, w := len(mat.rows), mat.words
	buf := getScores(2 * n)
	defer scoreBuffers.Put(buf)
	scores, work := (*buf)[:n], (*buf)[n:]
	parallel(n, shards(n, shardRows), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if match(i) {
				scores[i] = mat.alphas[i] * signDot(lut, mat.signs[i*w:(i+1)*w])
			} else {
				scores[i] = float32(math.Inf(-1))
			}
		}
	})
	copy(work, scores)
	cut := kthLargest(work, pass)
	rows := make([]int, 0, pass)
	for i, sc := range scores {
		if sc >= cut && sc > float32(math.Inf(-1)) {
			rows = append(rows, i)
		}
	}
	return rows
}

// scoreBuffers keeps the sign pass's score buffers (8 bytes a row, 1.6 MB at 200,000
// rows) from one search to the next, so that searches do not make garbage of their
// size.
var scoreBuffers sync.Pool

// getScores returns a buffer of n scores from scoreBuffers, or a new one.
func getScores(n int) *[]float32 {
	if b, ok := scoreBuffers.Get().(*[]float32); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]float32, n)
	return &b
}

// kthLargest returns the k-th largest of s (1-based; the smallest when k > len(s)),
// reordering s (quickselect).
func kthLargest(s []float32, k int) float32 {
	k = min(k, len(s)) - 1
	lo, hi := 0, len(s)-1
	for lo < hi {
		p := s[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for s[i] > p {
				i++
			}
			for s[j] < p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i, j = i+1, j-1
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// shards is how many goroutines share n items, each taking at least least of them.
func shards(n, least int) int { return max(1, min(runtime.GOMAXPROCS(0), n/least)) }

// parallel calls f(shard, lo, hi) for parts consecutive ranges covering [0, n), in
// parts goroutines, and returns when all have.
func parallel(n, parts int, f func(shard, lo, hi int)) {
	if parts == 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for s := range parts {
		wg.Go(func() { f(s, s*n/parts, (s+1)*n/parts) })
	}
	wg.Wait()
}
