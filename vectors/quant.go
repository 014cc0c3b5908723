package vectors

import (
	"encoding/binary"
	"fmt"
	"math"

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
