package vectors

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/x448/float16"
)

// encodeHalf stores a vector as little-endian float16, the SQLite BLOB format.
func encodeHalf(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], float16.Fromfloat32(x).Bits())
	}
	return b
}

// decodeHalf reads a BLOB of dim float16 values.
func decodeHalf(b []byte, dim int) ([]float32, error) {
	if len(b) != 2*dim {
		return nil, fmt.Errorf("vectors: a stored vector has %d bytes, want %d", len(b), 2*dim)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = float16.Frombits(binary.LittleEndian.Uint16(b[2*i:])).Float32()
	}
	return v, nil
}

// quantise scales v into int8 by its largest magnitude and returns the scale that
// turns the codes back: v[i] ≈ scale·q[i].
func quantise(v []float32, q []int8) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		clear(q)
		return 0
	}
	s := 127 / m
	for i, x := range v {
		q[i] = int8(math.Round(float64(x * s)))
	}
	return m / 127
}

// dotInt8 is the inner product of a float32 query with int8 codes.
func dotInt8(q []float32, c []int8) float32 {
	var s0, s1, s2, s3 float32
	n := len(q) &^ 3
	c = c[:len(q)]
	for i := 0; i < n; i += 4 {
		s0 += q[i] * float32(c[i])
		s1 += q[i+1] * float32(c[i+1])
		s2 += q[i+2] * float32(c[i+2])
		s3 += q[i+3] * float32(c[i+3])
	}
	for i := n; i < len(q); i++ {
		s0 += q[i] * float32(c[i])
	}
	return s0 + s1 + s2 + s3
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// signWords is how many 64-bit words hold the sign code of a dim-dimensional vector.
func signWords(dim int) int { return (dim + 63) / 64 }

// signCode sets bit j of code (len signWords(len(v))) when v[j] > 0, and returns the
// scale α = mean |v[j]| that makes α·(±1) the closest one-bit approximation of v.
func signCode(v []float32, code []uint64) float32 {
	clear(code)
	var l1 float32
	for j, x := range v {
		if x > 0 {
			code[j/64] |= 1 << (j % 64)
		}
		l1 += float32(math.Abs(float64(x)))
	}
	return l1 / float32(len(v))
}

// signTable fills lut (len 256·8·signWords(len(q))) so that for the b-th byte of a sign
// code, lut[256·b + pattern] is the inner product of q's 8 dimensions under that byte
// with the pattern's signs (+ for a set bit, − for a clear one; 0 past the end of q).
func signTable(q []float32, lut []float32) {
	for b := range len(lut) / 256 {
		t := (*[256]float32)(lut[256*b:])
		var base float32
		var w [8]float32
		for j := range 8 {
			if i := 8*b + j; i < len(q) {
				w[j] = q[i]
				base -= q[i]
			}
		}
		t[0] = base
		for m := 1; m < 256; m++ {
			low := m & -m
			t[m] = t[m^low] + 2*w[bits.TrailingZeros(uint(low))]
		}
	}
}

// signDot is the inner product of the query behind lut (signTable) with a sign code,
// 8 table look-ups per word.
func signDot(lut []float32, code []uint64) float32 {
	var s0, s1 float32
	for w, x := range code {
		t := (*[2048]float32)(lut[2048*w:])
		s0 += t[byte(x)] + t[256+int(byte(x>>8))] + t[512+int(byte(x>>16))] + t[768+int(byte(x>>24))]
		s1 += t[1024+int(byte(x>>32))] + t[1280+int(byte(x>>40))] + t[1536+int(byte(x>>48))] + t[1792+int(byte(x>>56))]
	}
	return s0 + s1
}
