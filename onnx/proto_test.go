package onnx

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMarshalRoundTrip: decoding PyTorch's files and encoding them again
// keeps every field this package reads.
func TestMarshalRoundTrip(t *testing.T) {
	for _, name := range []string{"torch_mlp.onnx", "torch_cnn.onnx"} {
		m, err := Unmarshal(readTestdata(t, name))
		if err != nil {
			t.Fatal(err)
		}
		b := m.Marshal()
		m2, err := Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m2.Marshal(), b) {
			t.Errorf("%s: encoding is not stable", name)
		}
		if len(m2.Graph.Node) != len(m.Graph.Node) || len(m2.Graph.Initializer) != len(m.Graph.Initializer) || m2.ProducerName != "pytorch" {
			t.Errorf("%s: %d nodes, %d initializers after the round trip", name, len(m2.Graph.Node), len(m2.Graph.Initializer))
		}
	}
}

// TestTruncated: every prefix of a file fails with an error (a
// ErrFormat one when the cut is inside a field), never a panic.
func TestTruncated(t *testing.T) {
	b := readTestdata(t, "torch_cnn.onnx")
	dir := t.TempDir()
	formatErrs := 0
	for n := 0; n < len(b); n += 37 {
		path := filepath.Join(dir, "cut.onnx")
		if err := os.WriteFile(path, b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil {
			t.Fatalf("a file cut at %d of %d bytes loads", n, len(b))
		}
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("cut at %d: error %q does not name the file", n, err)
		}
		if errors.Is(err, ErrFormat) {
			formatErrs++
		}
	}
	if formatErrs == 0 {
		t.Error("no cut was reported as a malformed file")
	}
}

// TestBadModels: wrong opsets, foreign domains, huge declared sizes and
// inconsistent tensors give clear errors without allocating what they
// declare.
func TestBadModels(t *testing.T) {
	load := func(t *testing.T) *ModelProto {
		m, err := Unmarshal(readTestdata(t, "torch_mlp.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name   string
		change func(m *ModelProto)
		want   string
	}{
		{"old opset", func(m *ModelProto) { m.OpsetImport[0].Version = 3 }, "opset 3 is not supported"},
		{"future opset", func(m *ModelProto) { m.OpsetImport[0].Version = 99 }, "opset 99 is not supported"},
		{"no opset", func(m *ModelProto) { m.OpsetImport = nil }, "no default-domain opset"},
		{"foreign domain", func(m *ModelProto) { m.Graph.Node[2].Domain = "com.microsoft" }, "com.microsoft.Relu"},
		{"huge initializer", func(m *ModelProto) { m.Graph.Initializer[0].Dims = []int64{1 << 40, 1 << 40} }, "more than"},
		{"dims beyond data", func(m *ModelProto) { m.Graph.Initializer[0].Dims = []int64{1 << 20, 4} }, "declares shape [1048576 4] (4194304 values) but holds 64"},
		{"negative dim", func(m *ModelProto) { m.Graph.Initializer[0].Dims = []int64{-1, 4} }, "negative dim"},
		{"huge input", func(m *ModelProto) { m.Graph.Input[0].Shape[1].Value = 1 << 50 }, "fixed positive size"},
		{"symbolic features", func(m *ModelProto) { m.Graph.Input[0].Shape[1] = Dim{Param: "n"} }, "fixed positive size"},
		{"external data", func(m *ModelProto) { m.Graph.Initializer[1].External = true }, "external file"},
		{"int input", func(m *ModelProto) { m.Graph.Input[0].ElemType = TypeInt64 }, "element type 7"},
		{"two outputs", func(m *ModelProto) { m.Graph.Output = append(m.Graph.Output, m.Graph.Output[0]) }, "2 outputs"},
		{"no graph", func(m *ModelProto) { m.Graph = nil }, "no graph nodes"},
		{"dangling node", func(m *ModelProto) {
			m.Graph.Node = append(m.Graph.Node, &NodeProto{OpType: "Relu", Name: "extra", Input: []string{"logits"}, Output: []string{"z"}})
		}, `Relu at node "extra": the node is not on the path`},
		{"gemm with alpha", func(m *ModelProto) { m.Graph.Node[0].attr("alpha").F = 2 }, "alpha=1"},
		{"conv on vectors", func(m *ModelProto) { m.Graph.Node[0].OpType = "Conv" }, `Conv at node "/net/net.0/Gemm"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := load(t)
			c.change(m)
			// Through the bytes, as a file would come.
			m2, err := Unmarshal(m.Marshal())
			if err == nil {
				_, err = Import(m2, ImportOptions{})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestMalformedBytes: bytes that are not protobuf give ErrFormat.
func TestMalformedBytes(t *testing.T) {
	huge := protowire.AppendTag(nil, 7, protowire.BytesType)
	huge = protowire.AppendVarint(huge, 1<<40) // a graph of 1 TiB, then nothing
	for _, b := range [][]byte{{0xff}, {0x0a, 0x05, 'a'}, huge, []byte("PK\x03\x04 not onnx"), {0x0b}} {
		if _, err := Unmarshal(b); !errors.Is(err, ErrFormat) {
			t.Errorf("% x: error %v, want ErrFormat", b, err)
		}
	}
	if m, err := Unmarshal(nil); err != nil || m.Graph != nil {
		t.Errorf("empty input: %v %v", m, err)
	}
}

// FuzzUnmarshal: any bytes decode or fail with ErrFormat, decoded models
// re-encode stably, and importing them fails cleanly or builds a model.
// Seeds: PyTorch's files, fathom's export of a small CNN, small messages.
// Run briefly with: go test ./onnx -run '^$' -fuzz FuzzUnmarshal -fuzztime 20s
func FuzzUnmarshal(f *testing.F) {
	f.Add(readTestdata(f, "torch_mlp.onnx"))
	f.Add(readTestdata(f, "torch_cnn.onnx"))
	mp, err := Export(testModel(f, 2), ExportOptions{}) // the small CNN: keeps the fuzzer fast
	if err != nil {
		f.Fatal(err)
	}
	f.Add(mp.Marshal())
	f.Add([]byte{})
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Unmarshal(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		enc := m.Marshal()
		m2, err := Unmarshal(enc)
		if err != nil {
			t.Fatalf("re-encoded model does not decode: %v", err)
		}
		if !bytes.Equal(m2.Marshal(), enc) {
			t.Fatal("encoding is not stable")
		}
		if mod, err := Import(m, ImportOptions{}); err == nil && mod.Net == nil {
			t.Fatal("a model without a network")
		}
	})
}
