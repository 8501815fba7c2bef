package job

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// TestWeightsSHA256 pins the fingerprint's byte layout: the state dict's
// tensors in nn.StateEntries order, float32 elements as 4 little-endian
// bytes each, nothing else.
func TestWeightsSHA256(t *testing.T) {
	m := nn.NewLinear(tensor.NewRNG(1), 3, 2)
	h := sha256.New()
	for _, e := range nn.StateEntries(m) {
		for _, v := range e.Tensor.Float32s() {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
	}
	want := hex.EncodeToString(h.Sum(nil))
	if got := WeightsSHA256(m); got != want {
		t.Fatalf("WeightsSHA256 = %s, want %s", got, want)
	}
	m.Parameters()[0].Float32s()[0] += 1e-6
	if WeightsSHA256(m) == want {
		t.Error("a changed weight left the fingerprint unchanged")
	}
}

func TestDistributedConfig(t *testing.T) {
	const section = `
distributed:
  bucket_cap_mb: 4
  first_bucket_mb: 0.5
  find_unused_parameters: true
  broadcast_buffers: false
`
	c, err := ParseConfig([]byte(baseConfig+section), "d.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ddp.Options{BucketCapMB: 4, FirstBucketMB: 0.5, FindUnusedParameters: true, KeepLocalBuffers: true, Trace: traceSteps}
	if got := c.Distributed.options(); got != want {
		t.Fatalf("options %+v, want %+v", got, want)
	}
	// Without the section: ddp's defaults, buffers broadcast as in PyTorch.
	c, err = ParseConfig([]byte(baseConfig), "d.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Distributed.options(); got != (ddp.Options{Trace: traceSteps}) {
		t.Fatalf("default options %+v", got)
	}

	for _, test := range []struct {
		text      string
		overrides []string
		want      string
	}{
		{text: "distributed:\n  bucket_cap_mb: 0\n", want: "d.yaml:16: distributed.bucket_cap_mb: want a positive size in MiB, got 0"},
		{text: "distributed:\n  first_bucket_mb: -1\n", want: "d.yaml:16: distributed.first_bucket_mb: want a positive size in MiB, got -1"},
		{text: "distributed:\n  bucket_cap_mb: .nan\n", want: "d.yaml:16: distributed.bucket_cap_mb: want a positive size in MiB, got NaN"},
		{overrides: []string{"distributed.bucket_cap_mb=0"}, want: "d.yaml: distributed.bucket_cap_mb: want a positive size in MiB, got 0"},
		{text: "distributed:\n  bucket_cap: 4\n", want: `d.yaml:16: unknown key "bucket_cap" in distributed`},
		{text: "distributed:\n  broadcast_buffers: maybe\n", want: "d.yaml"},
		{text: "distributed:\n  deterministic: true\n  micro_shards: 6\n", want: "d.yaml:17: distributed.micro_shards: want a power of two (1, 2, 4, ... 65536), got 6"},
		{text: "distributed:\n  deterministic: true\n  sync_batchnorm: true\n", want: "d.yaml:17: distributed.sync_batchnorm and distributed.deterministic do not go together"},
		{text: "distributed:\n  shard_optimizer: true\n  deterministic: true\n", want: "d.yaml:16: distributed.shard_optimizer does not go together with distributed.deterministic"},
		{text: "distributed:\n  compression: int8\n", want: `d.yaml:16: distributed.compression: want none, fp16 or bf16, got "int8"`},
		{text: "distributed:\n  micro_shards: 8\n", want: "d.yaml:16: distributed.micro_shards applies only with distributed.deterministic: true"},
	} {
		_, err := ParseConfig([]byte(baseConfig+test.text), "d.yaml", test.overrides)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), test.want) {
			t.Errorf("%q %v: error %v, want a ConfigError starting %q", test.text, test.overrides, err, test.want)
		}
	}
}

// TestDistributedConfigSingleProcess: a single-process run accepts the
// distributed section and ignores it.
func TestDistributedConfigSingleProcess(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig+"distributed: {bucket_cap_mb: 1, find_unused_parameters: true}\n"),
		"d.yaml", []string{"epochs=1", "output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t.Context(), c, RunOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestDeterministicConfig: distributed.deterministic sets the trainer's
// micro-shards (4 by default), and a single-process run with it trains
// bitwise what it trains again.
func TestDeterministicConfig(t *testing.T) {
	for _, test := range []struct {
		text string
		want int
	}{
		{"", 0}, {"distributed: {deterministic: true}\n", 4}, {"distributed: {deterministic: true, micro_shards: 8}\n", 8},
	} {
		c, err := ParseConfig([]byte(baseConfig+test.text), "d.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Distributed.microShards(); got != test.want {
			t.Errorf("%q: micro-shards %d, want %d", test.text, got, test.want)
		}
	}
	sums := make([]string, 2)
	for i := range sums {
		c, err := ParseConfig([]byte(baseConfig+"distributed: {deterministic: true}\n"), "d.yaml", []string{"epochs=2", "output.dir=" + t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(t.Context(), c, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = WeightsSHA256(res.Model.Net)
	}
	if sums[0] == "" || sums[0] != sums[1] {
		t.Fatalf("weights_sha256 of two deterministic runs: %q, %q", sums[0], sums[1])
	}
}

// TestSameFile: workers that see different checkpoints (one has the file,
// the other its own empty output.dir) are told so, on every rank; the same
// file everywhere (or none anywhere) passes.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "checkpoint.safetensors")
	if err := os.WriteFile(file, []byte("state"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "none")
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	for _, test := range []struct {
		paths [2]string
		ok    bool
	}{
		{[2]string{file, file}, true}, {[2]string{missing, missing}, true}, {[2]string{file, missing}, false},
	} {
		errs := commtest.OnAll(gs, func(g *comm.Group) error {
			return (&distributed{g: g}).sameFile(test.paths[g.Rank()])
		})
		for r, err := range errs {
			if test.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "put output.dir on a volume they all share")) {
				t.Errorf("%v: rank %d: %v", test.paths, r, err)
			}
		}
	}
	if err := (*distributed)(nil).sameFile(missing); err != nil {
		t.Errorf("one process: %v", err)
	}
}
