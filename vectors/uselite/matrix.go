package uselite

// matrix is a weight matrix W [rows × cols] applied as x·W. It is stored transposed
// (cols rows of length rows; the weights file keeps it so), so that each output is a dot
// product over contiguous memory.
type matrix struct {
	rows, cols int
	t          []float32 // [cols × rows]
}

// mul sets dst [n × cols] to x [n × rows] · W + bias.
func (m matrix) mul(dst, x []float32, n int, bias []float32) {
	k := m.rows
	i := 0
	// Four input rows against two weight columns at a time: eight accumulators stay in
	// registers and each loaded value is used several times.
	for ; i+4 <= n; i += 4 {
		a0 := x[i*k : i*k+k]
		a1 := x[(i+1)*k : (i+1)*k+k]
		a2 := x[(i+2)*k : (i+2)*k+k]
		a3 := x[(i+3)*k : (i+3)*k+k]
		c := 0
		for ; c+2 <= m.cols; c += 2 {
			w0 := m.t[c*k : c*k+k]
			w1 := m.t[(c+1)*k : (c+1)*k+k]
			var s00, s01, s10, s11, s20, s21, s30, s31 float32
			for p, v0 := range w0 {
				v1 := w1[p]
				x0, x1, x2, x3 := a0[p], a1[p], a2[p], a3[p]
				s00 += x0 * v0
				s01 += x0 * v1
				s10 += x1 * v0
				s11 += x1 * v1
				s20 += x2 * v0
				s21 += x2 * v1
				s30 += x3 * v0
				s31 += x3 * v1
			}
			b0, b1 := bias[c], bias[c+1]
			dst[i*m.cols+c], dst[i*m.cols+c+1] = s00+b0, s01+b1
			dst[(i+1)*m.cols+c], dst[(i+1)*m.cols+c+1] = s10+b0, s11+b1
			dst[(i+2)*m.cols+c], dst[(i+2)*m.cols+c+1] = s20+b0, s21+b1
			dst[(i+3)*m.cols+c], dst[(i+3)*m.cols+c+1] = s30+b0, s31+b1
		}
		for ; c < m.cols; c++ {
			for r := i; r < i+4; r++ {
				dst[r*m.cols+c] = dot(x[r*k:r*k+k], m.t[c*k:c*k+k]) + bias[c]
			}
		}
	}
	for ; i < n; i++ {
		a := x[i*k : i*k+k]
		for c := 0; c < m.cols; c++ {
			dst[i*m.cols+c] = dot(a, m.t[c*k:c*k+k]) + bias[c]
		}
	}
}

// dot is the dot product of two vectors of the same length, four lanes at a time.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	p := 0
	for ; p+4 <= len(a); p += 4 {
		s0 += a[p] * b[p]
		s1 += a[p+1] * b[p+1]
		s2 += a[p+2] * b[p+2]
		s3 += a[p+3] * b[p+3]
	}
	for ; p < len(a); p++ {
		s0 += a[p] * b[p]
	}
	return s0 + s1 + s2 + s3
}
