package format

import (
	"bytes"
	"math"
	"testing"
)

func TestHalfRoundTrip(t *testing.T) {
	tests := []struct {
		in, want float32
	}{
		{0, 0},
		{1, 1},
		{-2.5, -2.5},
		{65504, 65504},                 // largest half
		{1e6, float32(math.Inf(1))},    // overflow
		{6.1035156e-05, 6.1035156e-05}, // smallest normal half
		{5.9604645e-08, 5.9604645e-08}, // smallest subnormal half
		{1e-9, 0},                      // underflow
		{1.0009765625, 1.0009765625},   // 1 + 2^-10, exact
		{1.00048828125, 1},             // 1 + 2^-11, a tie: rounds to even
		{0.1, 0.099975586},             // nearest half
	}
	for _, tt := range tests {
		if got := FromHalf(ToHalf(tt.in)); got != tt.want {
			t.Errorf("FromHalf(ToHalf(%g)) = %g, want %g", tt.in, got, tt.want)
		}
	}
}

func TestReadRejectsDamagedFiles(t *testing.T) {
	var good bytes.Buffer
	f := File{Tensors: []Tensor{{Name: "w", Shape: []int{2, 2}, Dtype: F16}}}
	if err := Write(&good, f, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if _, ts, err := Read(good.Bytes()); err != nil || len(ts["w"]) != 4 {
		t.Fatalf("Read of a good file: %v, %v", ts, err)
	}
	for name, b := range map[string][]byte{
		"empty":          nil,
		"wrong magic":    []byte("NOTMODEL\x00\x00\x00\x00"),
		"header too big": append([]byte(magic), 0xff, 0xff, 0xff, 0x7f),
		"data truncated": good.Bytes()[:good.Len()-1],
	} {
		if _, _, err := Read(b); err == nil {
			t.Errorf("%s: Read succeeded", name)
		}
	}
}
