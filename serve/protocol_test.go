package serve

import (
	"encoding/json"
	"fmt"
	"math"
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

// TestAppendResponse checks the hand-written response encoder against
// encoding/json: the same document, number for number.
func TestAppendResponse(t *testing.T) {
	r := &InferResponse{ModelName: `m"odel`, ModelVersion: "1", ID: "id\n\u00e9<", Outputs: []OutputTensor{
		{Name: "predict", Shape: []int64{3}, Datatype: "INT64", Data: []int64{0, -2, 1 << 40}},
		{Name: "label", Shape: []int64{2}, Datatype: "BYTES", Data: []string{"a\"b", "\u2028x"}},
		{Name: "probabilities", Shape: []int64{2, 3}, Datatype: "FP32",
			Data: []float32{0.1, 1e-10, 3.4028235e38, -0.00001, 123456.79, 0}},
		{Name: "empty", Shape: []int64{0}, Datatype: "FP32", Data: []float32{}},
	}}
	got, err := appendResponse(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var a, b InferResponse
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	// Data decode as []any of float64 on both sides: compare as float32.
	same := fmt.Sprint(a.ModelName, a.ModelVersion, a.ID, len(a.Outputs)) == fmt.Sprint(b.ModelName, b.ModelVersion, b.ID, len(b.Outputs))
	for i := range a.Outputs {
		x, y := a.Outputs[i], b.Outputs[i]
		same = same && x.Name == y.Name && x.Datatype == y.Datatype && slices.Equal(x.Shape, y.Shape)
		xs, ys := x.Data.([]any), y.Data.([]any)
		same = same && len(xs) == len(ys)
		for k := range min(len(xs), len(ys)) {
			if f, ok := xs[k].(float64); ok {
				same = same && float32(f) == float32(ys[k].(float64))
			} else {
				same = same && xs[k] == ys[k]
			}
		}
	}
	if !same {
		t.Fatalf("appendResponse:\n%s\nencoding/json:\n%s", got, want)
	}
	r.Outputs[2].Data = []float32{float32(math.NaN())}
	if _, err := appendResponse(nil, r); err == nil {
		t.Fatal("NaN encoded")
	}
}
