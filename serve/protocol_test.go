package serve

import (
	"slices"
	"strings"
	"testing"
)

func TestDecodeData(t *testing.T) {
	for _, test := range []struct {
		data, dt string
		shape    []int64
		want     []float32
		err      string
	}{
		{"[1,2,3,4]", "FP32", []int64{2, 2}, []float32{1, 2, 3, 4}, ""},
		{" [ [1 , 2] ,\n[3,4] ] ", "FP64", []int64{2, 2}, []float32{1, 2, 3, 4}, ""},
		{"[[[1],[2]],[[3],[4]]]", "INT8", []int64{2, 2, 1}, []float32{1, 2, 3, 4}, ""},
		{"[true,false]", "BOOL", []int64{1, 2}, []float32{1, 0}, ""},
		{"[-0.5,1e2,2E-1,0]", "FP32", []int64{1, 4}, []float32{-0.5, 100, 0.2, 0}, ""},
		{"[255,0]", "UINT8", []int64{1, 2}, []float32{255, 0}, ""},
		{"[]", "FP32", []int64{1, 2}, nil, "0 values for shape [1,2]"},
		{"[1,2,3]", "FP32", []int64{1, 2}, nil, "more than 2 values"},
		{"[[1,2],[3]]", "FP32", []int64{2, 2}, nil, "holds 1 values"},
		{"[[1,2]]", "FP32", []int64{2, 2}, nil, "holds 1 elements"},
		{"[[1,2],[3,4],[5,6]]", "FP32", []int64{2, 2}, nil, "more than the 2 elements"},
		{"[[[1,2]]]", "FP32", []int64{1, 2}, nil, "FP32 data must be numbers"},
		{"[[1,[2]]]", "FP32", []int64{1, 2}, nil, "must be numbers"},
		{"[1,null]", "FP32", []int64{1, 2}, nil, "must be numbers"},
		{`[1,"2"]`, "FP32", []int64{1, 2}, nil, "must be numbers"},
		{"[1,2]", "FP32", []int64{1, 2}, []float32{1, 2}, ""},
		{"[01,2]", "FP32", []int64{1, 2}, nil, "must be numbers"},
		{"[-1,2]", "UINT16", []int64{1, 2}, nil, "out of range for UINT16"},
		{"[1.5,2]", "INT32", []int64{1, 2}, nil, "not an integer"},
		{"[1,0]", "BOOL", []int64{1, 2}, nil, "true or false"},
		{`{"a":1}`, "FP32", []int64{1, 1}, nil, "must be a JSON array"},
		{"[1]", "BYTES", []int64{1, 1}, nil, `"BYTES" is not supported`},
		{"[1]", "FLOAT", []int64{1, 1}, nil, `"FLOAT" is not supported`},
		{"[1] 2", "FP32", []int64{1, 1}, nil, "unexpected text"},
	} {
		got, err := decodeData(nil, []byte(test.data), test.dt, test.shape)
		switch {
		case test.err == "" && (err != nil || !slices.Equal(got, test.want)):
			t.Errorf("%s %s %v: %v, %v; want %v", test.data, test.dt, test.shape, got, err, test.want)
		case test.err != "" && (err == nil || !strings.Contains(err.Error(), test.err)):
			t.Errorf("%s %s %v: error %v, want %q", test.data, test.dt, test.shape, err, test.err)
		}
	}
}

// FuzzDecodeData checks that any data and shape give values or an error,
// never a panic, and that the values fill the shape exactly.
func FuzzDecodeData(f *testing.F) {
	for _, s := range []string{"[1,2,3,4]", "[[1,2],[3,4]]", "[[1,2],[3]]", "[true,false,true,true]", "[1e400,2,3,4]", "[[[1]]]", "["} {
		f.Add(s, int64(2), int64(2))
	}
	f.Fuzz(func(t *testing.T, data string, rows, cols int64) {
		if rows < 1 || cols < 1 || rows > 64 || cols > 64 {
			return
		}
		for _, dt := range []string{"FP32", "INT64", "BOOL"} {
			got, err := decodeData(nil, []byte(data), dt, []int64{rows, cols})
			if err == nil && int64(len(got)) != rows*cols {
				t.Fatalf("%q as %s [%d %d]: %d values", data, dt, rows, cols, len(got))
			}
		}
	})
}
