package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// f32bytes encodes values as little-endian float32.
func f32bytes(values ...float32) []byte {
	b := make([]byte, 0, 4*len(values))
	for _, v := range values {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// file assembles a safetensors file from a header string and data, by hand.
func file(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

// TestWriteMatchesSpec compares Write's output with files assembled byte by
// byte from the format description: an 8-byte little-endian header size,
// compact JSON padded with spaces to a multiple of 8, then the data.
func TestWriteMatchesSpec(t *testing.T) {
	for _, test := range []struct {
		name    string
		tensors []Entry
		meta    map[string]string
		want    []byte
	}{
		{
			name:    "one F32 tensor, header already a multiple of 8",
			tensors: []Entry{{Name: "attn.0", DType: "F32", Shape: []int{1, 2, 3}, Data: f32bytes(0, 1, 2, 3, 4, 5)}},
			// 64 bytes of JSON: no padding.
			want: append([]byte{64, 0, 0, 0, 0, 0, 0, 0},
				append([]byte(`{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}`),
					0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40)...),
		},
		{
			name:    "padding to 8 bytes",
			tensors: []Entry{{Name: "attn0", DType: "F32", Shape: []int{1, 1, 2, 3}, Data: f32bytes(0, 1, 2, 3, 4, 5)}},
			// 65 bytes of JSON + 7 spaces = 72.
			want: append([]byte{72, 0, 0, 0, 0, 0, 0, 0},
				append([]byte(`{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       `),
					f32bytes(0, 1, 2, 3, 4, 5)...)...),
		},
		{
			name: "empty file",
			want: []byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '},
		},
		{
			name: "metadata only",
			meta: map[string]string{"framework": "pt"},
			want: file(`{"__metadata__":{"framework":"pt"}}     `, nil),
		},
		{
			name: "dtypes ordered by alignment, then names; metadata first with sorted keys",
			tensors: []Entry{
				{Name: "b", DType: "U8", Shape: []int{3}, Data: []byte{1, 2, 3}},
				{Name: "a", DType: "U8", Shape: []int{1}, Data: []byte{9}},
				{Name: "w", DType: "F64", Shape: []int{1}, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
				{Name: "h", DType: "BF16", Shape: []int{2}, Data: []byte{1, 2, 3, 4}},
				{Name: "s", DType: "F32", Shape: []int{}, Data: []byte{0, 0, 0x80, 0x3f}},
			},
			meta: map[string]string{"z": "1", "a": "line\n\"q\""},
			want: file(`{"__metadata__":{"a":"line\n\"q\"","z":"1"},`+
				`"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},`+
				`"s":{"dtype":"F32","shape":[],"data_offsets":[8,12]},`+
				`"h":{"dtype":"BF16","shape":[2],"data_offsets":[12,16]},`+
				`"a":{"dtype":"U8","shape":[1],"data_offsets":[16,17]},`+
				`"b":{"dtype":"U8","shape":[3],"data_offsets":[17,20]}}`+"      ", // 314 + 6 = 320
				[]byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x80, 0x3f, 1, 2, 3, 4, 9, 1, 2, 3}),
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, test.tensors, test.meta); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), test.want) {
				t.Fatalf("Write:\n got %q\nwant %q", buf.Bytes(), test.want)
			}
			if (len(buf.Bytes())-len(dataOf(test.tensors)))%8 != 0 {
				t.Errorf("data does not start at a multiple of 8")
			}
			f, err := Read(bytes.NewReader(test.want))
			if err != nil {
				t.Fatal(err)
			}
			checkSame(t, f, test.tensors, test.meta)
		})
	}
}

func dataOf(tensors []Entry) []byte {
	var b []byte
	for _, e := range tensors {
		b = append(b, e.Data...)
	}
	return b
}

// checkSame checks that f holds exactly tensors and meta, in any order.
func checkSame(t *testing.T, f *File, tensors []Entry, meta map[string]string) {
	t.Helper()
	if len(f.Tensors) != len(tensors) {
		t.Fatalf("read %d tensors, want %d", len(f.Tensors), len(tensors))
	}
	for _, want := range tensors {
		got, ok := f.Tensor(want.Name)
		if !ok {
			t.Fatalf("tensor %q missing", want.Name)
		}
		if got.DType != want.DType || !bytes.Equal(got.Data, want.Data) || len(got.Shape) != len(want.Shape) {
			t.Fatalf("tensor %q: got %s%v %v, want %s%v %v", want.Name, got.DType, got.Shape, got.Data, want.DType, want.Shape, want.Data)
		}
		for i := range want.Shape {
			if got.Shape[i] != want.Shape[i] {
				t.Fatalf("tensor %q: shape %v, want %v", want.Name, got.Shape, want.Shape)
			}
		}
	}
	if len(meta) == 0 && len(f.Metadata) == 0 {
		return
	}
	if !reflect.DeepEqual(f.Metadata, meta) {
		t.Fatalf("metadata %v, want %v", f.Metadata, meta)
	}
}

// TestReadReferenceExample reads the example file given in the reference
// implementation's documentation: an I32 2×2 tensor whose 60-byte header is
// not padded.
func TestReadReferenceExample(t *testing.T) {
	b := file(`{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}`, make([]byte, 16))
	if b[0] != 60 {
		t.Fatalf("header size %d, want 60", b[0])
	}
	f, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := f.Tensor("test")
	if !ok || e.DType != "I32" || !reflect.DeepEqual(e.Shape, []int{2, 2}) || len(e.Data) != 16 {
		t.Fatalf("got %+v", f.Tensors)
	}
	if f.Metadata != nil {
		t.Errorf("metadata %v, want nil", f.Metadata)
	}
}

func TestReadRejects(t *testing.T) {
	good := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[2],"data_offsets":[8,10]}}`
	for _, test := range []struct {
		name  string
		input []byte
		want  string // substring of the error
	}{
		{"empty", nil, "too short for the 8-byte header size"},
		{"short size", []byte{1, 2, 3}, "too short"},
		{"huge header size", append(binary.LittleEndian.AppendUint64(nil, 1<<40), '{', '}'), "exceeds the limit"},
		{"truncated header", append(binary.LittleEndian.AppendUint64(nil, 100), `{"a":`...), "truncated header"},
		{"truncated data", file(good, make([]byte, 7)), "truncated data: the tensors need 10 bytes after the header, the file has 7"},
		{"trailing data", file(good, make([]byte, 11)), "trailing bytes"},
		{"not JSON", file(`{"a":`, nil), "not valid JSON"},
		{"not an object", file(`[1,2]`, nil), "does not start with '{'"},
		{"bad UTF-8", file("{\"\xff\":1}", nil), "not valid UTF-8"},
		{"junk after object", file(`{} x`, nil), "data after its JSON object"},
		{"unknown dtype", file(`{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)), `tensor "a": unknown dtype "F128"`},
		{"missing shape", file(`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, make([]byte, 4)), `tensor "a": missing "shape"`},
		{"missing offsets", file(`{"a":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), `tensor "a": missing "data_offsets"`},
		{"three offsets", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, make([]byte, 4)), `has 3 numbers`},
		{"negative dim", file(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), `tensor "a": bad tensor description`},
		{"fractional dim", file(`{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`, make([]byte, 4)), `tensor "a": bad tensor description`},
		{"size mismatch", file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), `tensor "a": F32[3] needs 12 bytes, data_offsets [0, 8] give 8`},
		{"gap", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, make([]byte, 2)), `tensor "a": data_offsets [1, 2] leave a gap`},
		{"overlap", file(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}`, make([]byte, 3)), `tensor "b": data_offsets [1, 3] overlap`},
		{"reversed offsets", file(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[2,0]}}`, nil), `end before they begin`},
		{"duplicate name", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, make([]byte, 2)), `tensor "a": name appears twice`},
		{"overflowing shape", file(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}`, make([]byte, 4)), `overflows`},
		{"huge dim", file(`{"a":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}}`, nil), `too large`},
		{"packed type not whole bytes", file(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}`, make([]byte, 1)), `not a whole number of bytes`},
		{"metadata not strings", file(`{"__metadata__":{"epoch":3}}`, nil), `__metadata__ must map strings to strings`},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(test.input))
			if err == nil {
				t.Fatalf("Read succeeded, want error containing %q", test.want)
			}
			if !strings.Contains(err.Error(), test.want) {
				t.Fatalf("error %q does not contain %q", err, test.want)
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("error %q does not wrap ErrFormat", err)
			}
			// The same file on disk gives the same kind of error, naming the file.
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			if err := os.WriteFile(path, test.input, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = ReadFile(path)
			if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, ErrFormat) {
				t.Fatalf("ReadFile error %v: want an ErrFormat naming %s", err, path)
			}
		})
	}
}

// TestReadFileChecksSizeFirst: a header that claims more bytes than the file
// has is refused with a message about the file size before anything is read.
func TestReadFileChecksSizeFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	b := append(binary.LittleEndian.AppendUint64(nil, 50_000_000), '{', '}')
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), "header size 50000000 does not fit in a file of 10 bytes") {
		t.Fatalf("got %v", err)
	}
}

func TestWriteRejects(t *testing.T) {
	for _, test := range []struct {
		name    string
		tensors []Entry
		want    string
	}{
		{"wrong length", []Entry{{Name: "w", DType: "F32", Shape: []int{2}, Data: make([]byte, 4)}}, `tensor "w": F32[2] needs 8 bytes, data has 4`},
		{"unknown dtype", []Entry{{Name: "w", DType: "F12", Shape: []int{1}, Data: make([]byte, 4)}}, `unknown dtype "F12"`},
		{"duplicate", []Entry{{Name: "w", DType: "U8", Data: []byte{1}}, {Name: "w", DType: "U8", Data: []byte{1}}}, `duplicate tensor name "w"`},
		{"reserved", []Entry{{Name: "__metadata__", DType: "U8", Data: []byte{1}}}, `reserved`},
		{"negative", []Entry{{Name: "w", DType: "U8", Shape: []int{-1}}}, `negative dimension`},
	} {
		t.Run(test.name, func(t *testing.T) {
			err := Write(&bytes.Buffer{}, test.tensors, nil)
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("got %v, want error containing %q", err, test.want)
			}
		})
	}
}

func TestWriteFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	tensors := []Entry{
		F32("layer.0.weight", []int{2, 3}, []float32{1, -2, 3.5, 4, 5, 6}),
		F32("layer.0.bias", []int{3}, []float32{0.25, 0, -1}),
		{Name: "steps", DType: "I64", Shape: []int{}, Data: binary.LittleEndian.AppendUint64(nil, 1234)},
		{Name: "empty", DType: "F16", Shape: []int{0, 4}, Data: []byte{}},
		{Name: "名前", DType: "BOOL", Shape: []int{2}, Data: []byte{0, 1}},
	}
	meta := map[string]string{"format": "pt", "arch": `{"layers":[3]}`}
	if err := WriteFile(path, tensors, meta); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v (%v), want only the model file", entries, err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, f, tensors, meta)
	w, _ := f.Tensor("layer.0.weight")
	values, err := w.Float32s()
	if err != nil || !reflect.DeepEqual(values, []float32{1, -2, 3.5, 4, 5, 6}) {
		t.Fatalf("Float32s = %v, %v", values, err)
	}
	// Appending to one tensor's data must not overwrite its neighbour.
	b, _ := f.Tensor("layer.0.bias")
	before := append([]byte(nil), w.Data...)
	_ = append(b.Data, 0xff, 0xff, 0xff, 0xff)
	if w2, _ := f.Tensor("layer.0.weight"); !bytes.Equal(w2.Data, before) {
		t.Fatal("appending to one tensor's data changed another")
	}

	// Writing over an existing file replaces it whole.
	if err := WriteFile(path, tensors[:1], nil); err != nil {
		t.Fatal(err)
	}
	f, err = ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, f, tensors[:1], nil)

	// A failed write leaves neither a partial file nor a temporary behind.
	bad := filepath.Join(dir, "bad.safetensors")
	if err := WriteFile(bad, []Entry{{Name: "w", DType: "F32", Shape: []int{2}}}, nil); err == nil {
		t.Fatal("WriteFile accepted a tensor without data")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("after a failed write the directory holds %v", entries)
	}
}

func TestF32PanicsOnShapeMismatch(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "shape [2 2] needs 4 values, got 3") {
			t.Fatalf("recover() = %v", r)
		}
	}()
	F32("w", []int{2, 2}, []float32{1, 2, 3})
}

func ExampleWrite() {
	var buf bytes.Buffer
	w := F32("w", []int{2}, []float32{1, 2})
	if err := Write(&buf, []Entry{w}, nil); err != nil {
		panic(err)
	}
	b := buf.Bytes()
	n := binary.LittleEndian.Uint64(b)
	fmt.Println(n)
	fmt.Printf("%q\n", b[8:8+n])
	fmt.Println(len(b) - 8 - int(n))
	// Output:
	// 56
	// "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  "
	// 8
}

// FuzzReadSafetensors: Read never panics, and whatever it accepts survives a
// Write/Read round trip unchanged.
func FuzzReadSafetensors(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, []Entry{
		F32("a", []int{2, 2}, []float32{1, 2, 3, 4}),
		{Name: "b", DType: "U8", Shape: []int{3}, Data: []byte{1, 2, 3}},
		{Name: "c", DType: "BF16", Shape: []int{1}, Data: []byte{1, 2}},
	}, map[string]string{"k": "v"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(file(`{}`, nil))
	f.Add(file(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`, nil))
	f.Add(file(`{"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}`, []byte{7}))
	f.Add(binary.LittleEndian.AppendUint64(nil, 99_999_999))
	f.Add(bombFile()) // 1 TiB declared, 8 bytes present
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Read(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		var out bytes.Buffer
		if err := Write(&out, got.Tensors, got.Metadata); err != nil {
			t.Fatalf("Write of an accepted file failed: %v", err)
		}
		again, err := Read(&out)
		if err != nil {
			t.Fatalf("re-read failed: %v", err)
		}
		checkSame(t, again, got.Tensors, got.Metadata)
	})
}

// BenchmarkReadFile reads a 64 MiB F32 file.
func BenchmarkReadFile(b *testing.B) {
	values := make([]float32, 16<<20)
	path := filepath.Join(b.TempDir(), "big.safetensors")
	if err := WriteFile(path, []Entry{F32("w", []int{4096, 4096}, values)}, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(4 * len(values)))
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// bombFile declares one U8 tensor of 1 TiB and holds 8 bytes of it.
func bombFile() []byte {
	return file(`{"w":{"dtype":"U8","shape":[1099511627776],"data_offsets":[0,1099511627776]}}`, make([]byte, 8))
}

// TestReadDeclaredSizeBomb: a file whose header declares far more data than
// it holds is refused having allocated about what it holds, from a stream
// (the buffer grows as data arrives) and from a file (its size is checked
// first).
func TestReadDeclaredSizeBomb(t *testing.T) {
	b := bombFile()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(b))
	runtime.ReadMemStats(&after)
	if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "truncated data: the tensors need 1099511627776 bytes after the header, the file has 8") {
		t.Fatalf("stream: got %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("stream: allocated %d bytes", got)
	}
	p := filepath.Join(t.TempDir(), "bomb.safetensors")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&before)
	_, err = ReadFile(p)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "the tensors cover 1099511627776 bytes of data, the file has 8 after the header") {
		t.Fatalf("file: got %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("file: allocated %d bytes", got)
	}
}

func TestF64RoundTrip(t *testing.T) {
	in := []float64{1, -2.5, math.Inf(1), math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1}
	var buf bytes.Buffer
	if err := Write(&buf, []Entry{F64("x", []int{2, 3}, in)}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := f.Tensor("x")
	got, err := e.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, in) || !slices.Equal(e.Shape, []int{2, 3}) {
		t.Fatalf("round trip: %v %v, want %v [2 3]", got, e.Shape, in)
	}
	if _, err := F32("y", []int{1}, []float32{1}).Float64s(); err == nil {
		t.Fatal("Float64s of an F32 entry: no error")
	}
}

func TestEmptyFloatEntries(t *testing.T) {
	for _, e := range []Entry{F32("a", []int{0}, nil), F64("b", []int{2, 0}, []float64{})} {
		if len(e.Data) != 0 {
			t.Fatalf("%s: %d bytes", e.Name, len(e.Data))
		}
	}
	if v, err := F64("b", []int{0}, nil).Float64s(); err != nil || len(v) != 0 {
		t.Fatalf("Float64s of an empty entry: %v, %v", v, err)
	}
}
