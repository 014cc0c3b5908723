// Package format is the layout of the USE-lite weights file shared by the converter and
// the runtime: the magic "USELITE1", a little-endian uint32 header length, a JSON header
// (hyperparameters and a table of tensors), then the tensor data. Matrices are stored as
// IEEE 754 half precision, vectors as float32, both little-endian. Weight matrices applied
// as x·W (names ending in ".w") are stored transposed, [out × in].
package format

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// WeightsFile is the name of the converted weights file in vectors/uselite.
const WeightsFile = "model.bin"

const magic = "USELITE1"

// Tensor data types.
const (
	F16 = "f16"
	F32 = "f32"
)

// Config holds the hyperparameters read from the graph's constants.
type Config struct {
	Heads            int     `json:"heads"`
	MaxTokens        int     `json:"maxTokens"`
	LayerNormEpsilon float32 `json:"layerNormEpsilon"`
	NormEpsilon      float32 `json:"normEpsilon"`
}

// Tensor describes one tensor: its shape, type and byte offset in the data section.
type Tensor struct {
	Name   string `json:"name"`
	Shape  []int  `json:"shape"`
	Dtype  string `json:"dtype"`
	Offset int64  `json:"offset"`
}

// File is the header of a weights file.
type File struct {
	Config  Config   `json:"config"`
	Tensors []Tensor `json:"tensors"`
}

// Write writes the header and the data section.
func Write(w io.Writer, f File, data []byte) error {
	header, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, magic); err != nil {
		return err
	}
	if err := binary.Write(w, binary.LittleEndian, uint32(len(header))); err != nil {
		return err
	}
	if _, err := w.Write(header); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// Read parses a weights file and returns every tensor as float32 values.
func Read(b []byte) (Config, map[string][]float32, error) {
	if len(b) < len(magic)+4 || string(b[:len(magic)]) != magic {
		return Config{}, nil, errors.New("not a USE-lite weights file")
	}
	n := int(binary.LittleEndian.Uint32(b[len(magic):]))
	start := len(magic) + 4
	if n > len(b)-start {
		return Config{}, nil, errors.New("weights header runs past the end of the file")
	}
	var f File
	if err := json.Unmarshal(b[start:start+n], &f); err != nil {
		return Config{}, nil, fmt.Errorf("weights header: %w", err)
	}
	data := b[start+n:]
	var halves []float32 // every half-precision value widened, built on first use
	out := make(map[string][]float32, len(f.Tensors))
	for _, t := range f.Tensors {
		size := 1
		for _, d := range t.Shape {
			size *= d
		}
		width := 4
		if t.Dtype == F16 {
			width = 2
		}
		if t.Offset < 0 || t.Offset+int64(size*width) > int64(len(data)) {
			return Config{}, nil, fmt.Errorf("tensor %s runs past the end of the file", t.Name)
		}
		raw := data[t.Offset:]
		v := make([]float32, size)
		if t.Dtype == F16 && halves == nil {
			halves = make([]float32, 1<<16)
			for h := range halves {
				halves[h] = FromHalf(uint16(h))
			}
		}
		for i := range v {
			if t.Dtype == F16 {
				v[i] = halves[binary.LittleEndian.Uint16(raw[2*i:])]
			} else {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		out[t.Name] = v
	}
	return f.Config, out, nil
}

// ToHalf rounds a float32 to the nearest half-precision value (ties to even); values beyond
// the half range become ±Inf, tiny ones subnormal or zero.
func ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15:
		return sign | 0x7c00
	case exp-127 >= -14: // normal half
		h := uint32(exp-127+15)<<10 | mant>>13
		rest := mant & 0x1fff
		if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
			h++ // may carry into the exponent, which is still correct
		}
		return sign | uint16(h)
	case exp-127 >= -25: // subnormal half
		mant |= 0x800000
		shift := uint(-14-(exp-127)) + 13
		h := mant >> shift
		rest := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	return sign
}

// FromHalf widens a half-precision value to float32 exactly.
func FromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = mant × 2^-24
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}
