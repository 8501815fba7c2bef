package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeIDXByHand(t *testing.T) {
	for _, test := range []struct {
		name  string
		input []byte
		want  *IDX
	}{
		{"ubyte vector", []byte{0, 0, 0x08, 1, 0, 0, 0, 3, 1, 2, 255},
			&IDX{Type: IDXUint8, Dims: []int{3}, Uint8: []uint8{1, 2, 255}}},
		{"byte matrix", []byte{0, 0, 0x09, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0x7f},
			&IDX{Type: IDXInt8, Dims: []int{1, 2}, Int8: []int8{-1, 127}}},
		{"short big-endian", []byte{0, 0, 0x0B, 1, 0, 0, 0, 2, 0x01, 0x02, 0xff, 0xfe},
			&IDX{Type: IDXInt16, Dims: []int{2}, Int16: []int16{0x0102, -2}}},
		{"int", []byte{0, 0, 0x0C, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfd},
			&IDX{Type: IDXInt32, Dims: []int{1}, Int32: []int32{-3}}},
		{"float", []byte{0, 0, 0x0D, 1, 0, 0, 0, 1, 0x3f, 0xc0, 0, 0},
			&IDX{Type: IDXFloat32, Dims: []int{1}, Float32: []float32{1.5}}},
		{"double", []byte{0, 0, 0x0E, 1, 0, 0, 0, 1, 0xc0, 0x04, 0, 0, 0, 0, 0, 0},
			&IDX{Type: IDXFloat64, Dims: []int{1}, Float64: []float64{-2.5}}},
		{"empty", []byte{0, 0, 0x08, 2, 0, 0, 0, 0, 0, 0, 0, 28},
			&IDX{Type: IDXUint8, Dims: []int{0, 28}, Uint8: []uint8{}}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := DecodeIDX(bytes.NewReader(test.input), "x.idx")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, test.want) {
				t.Fatalf("got %+v, want %+v", got, test.want)
			}
			var buf bytes.Buffer
			if err := EncodeIDX(&buf, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), test.input) {
				t.Fatalf("EncodeIDX = % x, want % x", buf.Bytes(), test.input)
			}
		})
	}
}

func TestIDXGzipByMagic(t *testing.T) {
	dir := t.TempDir()
	x := &IDX{Type: IDXFloat32, Dims: []int{2, 2}, Float32: []float32{1, 2, 3, 4}}
	gz := filepath.Join(dir, "a.gz")
	if err := WriteIDX(gz, x); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(gz)
	if raw[0] != 0x1f || raw[1] != 0x8b {
		t.Fatalf("WriteIDX to .gz did not compress: % x", raw[:4])
	}
	// A compressed file with a misleading name is still recognised.
	odd := filepath.Join(dir, "plain-looking-idx3-ubyte")
	if err := os.WriteFile(odd, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{gz, odd} {
		got, err := ReadIDX(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, x) {
			t.Fatalf("%s: got %+v", p, got)
		}
	}
	if got := x.AsFloat32(0.5); !reflect.DeepEqual(got, []float32{0.5, 1, 1.5, 2}) {
		t.Fatalf("AsFloat32 = %v", got)
	}
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestDecodeIDXErrors(t *testing.T) {
	dims := func(typ byte, ds ...uint32) []byte {
		b := []byte{0, 0, typ, byte(len(ds))}
		for _, d := range ds {
			b = binary.BigEndian.AppendUint32(b, d)
		}
		return b
	}
	for _, test := range []struct {
		name  string
		input []byte
		want  string
	}{
		{"empty", nil, "x.idx: IDX: truncated at byte offset 0 while reading the magic number"},
		{"bad magic", []byte{0x50, 0x4b, 3, 4, 0, 0}, "bad magic number 50 4b 03 04: the first two bytes must be zero"},
		{"unknown type", []byte{0, 0, 0x0A, 1, 0, 0, 0, 0}, "unknown element type 0x0a"},
		{"truncated dims", []byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0}, "truncated at byte offset 10 while reading the 3 dimension sizes"},
		{"truncated data", append(dims(0x0C, 2, 3), make([]byte, 13)...), "truncated at byte offset 25: dimensions [2 3] of int need 24 bytes of data, found 13"},
		{"truncated gzip data", gzipped(append(dims(8, 10), 1, 2)), "truncated at uncompressed byte offset 10: dimensions [10] of ubyte need 10 bytes of data, found 2"},
		{"trailing", append(dims(8, 2), 1, 2, 3), "trailing data at byte offset 10, after the 2 elements"},
		{"overflow", dims(0x0E, 0xffffffff, 0xffffffff, 0xffffffff), "element count overflows"},
		{"absurdly large", dims(0x0E, 0xffffffff, 0xffffffff), "need more than the 17179869184-byte limit"},
		{"bad gzip", []byte{0x1f, 0x8b, 0, 0}, "x.idx: gzip:"},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := DecodeIDX(bytes.NewReader(test.input), "x.idx")
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("got %v, want error containing %q", err, test.want)
			}
		})
	}
}

// writeMNIST writes a small MNIST-format split into dir.
func writeMNIST(t *testing.T, dir, prefix string, images []uint8, n, h, w int, labels []uint8, gz bool) {
	t.Helper()
	ext := ""
	if gz {
		ext = ".gz"
	}
	if err := WriteIDX(filepath.Join(dir, prefix+"-images-idx3-ubyte"+ext), &IDX{Type: IDXUint8, Dims: []int{n, h, w}, Uint8: images}); err != nil {
		t.Fatal(err)
	}
	if err := WriteIDX(filepath.Join(dir, prefix+"-labels-idx1-ubyte"+ext), &IDX{Type: IDXUint8, Dims: []int{len(labels)}, Uint8: labels}); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMNISTSynthetic(t *testing.T) {
	dir := t.TempDir()
	images := []uint8{0, 255, 51, 102, 0, 0, 255, 255, 255, 255, 255, 255}
	writeMNIST(t, dir, "train", images, 2, 2, 3, []uint8{7, 3}, true)
	writeMNIST(t, dir, "t10k", images[:6], 1, 2, 3, []uint8{9}, false)

	tr, err := LoadMNIST(dir, "train", MNISTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Rows != 2 || tr.Cols != 6 || !reflect.DeepEqual(tr.FeatureShape, []int{2, 3}) {
		t.Fatalf("shape %d×%d %v", tr.Rows, tr.Cols, tr.FeatureShape)
	}
	if want := []float32{0, 1, 0.2, 0.4, 0, 0}; !reflect.DeepEqual(tr.Row(0), want) {
		t.Fatalf("row 0 = %v, want %v", tr.Row(0), want)
	}
	if !reflect.DeepEqual(tr.Labels, []int64{7, 3}) || tr.Classes[7] != "7" || tr.NumClasses() != 10 {
		t.Fatalf("labels %v classes %v", tr.Labels, tr.Classes)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	te, err := LoadMNIST(dir, "test", MNISTOptions{RawPixels: true})
	if err != nil {
		t.Fatal(err)
	}
	if te.Rows != 1 || te.X[1] != 255 || te.Labels[0] != 9 {
		t.Fatalf("t10k: %+v", te)
	}

	// Errors: a missing split, a count mismatch, a label beyond the classes.
	if _, err := LoadMNIST(dir, "validation", MNISTOptions{}); err == nil || !strings.Contains(err.Error(), `unknown split "validation"`) {
		t.Errorf("unknown split: %v", err)
	}
	if _, err := LoadMNIST(t.TempDir(), "train", MNISTOptions{}); err == nil || !strings.Contains(err.Error(), "no train images file") {
		t.Errorf("missing files: %v", err)
	}
	bad := t.TempDir()
	writeMNIST(t, bad, "train", images, 2, 2, 3, []uint8{1, 2, 3}, false)
	if _, err := LoadMNIST(bad, "train", MNISTOptions{}); err == nil || !strings.Contains(err.Error(), "has 2 images but") || !strings.Contains(err.Error(), "has 3 labels") {
		t.Errorf("count mismatch: %v", err)
	}
	writeMNIST(t, bad, "train", images, 2, 2, 3, []uint8{1, 2}, false)
	if _, err := LoadMNIST(bad, "train", MNISTOptions{Classes: []string{"a", "b"}}); err == nil || !strings.Contains(err.Error(), "label 2 of item 1 is not below the class count 2") {
		t.Errorf("label range: %v", err)
	}
}

// TestFashionMNIST loads the real data set when it is installed.
func TestFashionMNIST(t *testing.T) {
	dir := FashionMNISTDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("Fashion-MNIST not installed at %s (apt-get install dataset-fashion-mnist)", dir)
	}
	for _, test := range []struct {
		split string
		n     int
	}{{"t10k", 10000}, {"train", 60000}} {
		if test.split == "train" && testing.Short() {
			continue
		}
		tab, err := LoadFashionMNIST(test.split)
		if err != nil {
			t.Fatal(err)
		}
		if tab.Rows != test.n || tab.Cols != 28*28 || !reflect.DeepEqual(tab.FeatureShape, []int{28, 28}) {
			t.Fatalf("%s: %d×%d %v", test.split, tab.Rows, tab.Cols, tab.FeatureShape)
		}
		if err := tab.Validate(); err != nil {
			t.Fatal(err)
		}
		// Fashion-MNIST is balanced: every class has a tenth of the images.
		for c, k := range tab.ClassCounts() {
			if k != test.n/10 {
				t.Errorf("%s: class %d (%s) has %d images, want %d", test.split, c, tab.Classes[c], k, test.n/10)
			}
		}
		var lo, hi float32 = 1, 0
		for _, v := range tab.X {
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo != 0 || hi != 1 {
			t.Errorf("%s: pixels span [%g, %g], want [0, 1]", test.split, lo, hi)
		}
	}
}

// FuzzReadIDX: DecodeIDX never panics, never allocates for data that is not
// there, and what it accepts re-encodes to the same bytes.
func FuzzReadIDX(f *testing.F) {
	f.Add([]byte{0, 0, 0x08, 1, 0, 0, 0, 3, 1, 2, 255})
	f.Add([]byte{0, 0, 0x0D, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0x3f, 0xc0, 0, 0})
	f.Add([]byte{0, 0, 0x0E, 1, 0x7f, 0xff, 0xff, 0xff})
	f.Add(gzipped([]byte{0, 0, 0x0C, 1, 0, 0, 0, 1, 0, 0, 0, 7}))
	f.Add(idxBomb(1<<30, 4096)) // gzip bomb: 1 GiB declared, 4 KiB of zeros
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := DecodeIDX(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		if len(x.AsFloat32(1)) != x.Len() {
			t.Fatalf("AsFloat32 length differs from Len %d", x.Len())
		}
		if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
			return // compressed input: the encoding need not match byte for byte
		}
		var buf bytes.Buffer
		if err := EncodeIDX(&buf, x); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Fatalf("re-encoded % x, input % x", buf.Bytes(), b)
		}
	})
}
