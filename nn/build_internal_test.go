package nn

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// TestRegistry checks that every registered layer type has a build
// function and a canonical name, and every alias names a registered type.
func TestRegistry(t *testing.T) {
	if len(LayerTypes) != len(builders) {
		t.Fatalf("%d layer types, %d build functions", len(LayerTypes), len(builders))
	}
	for typ := range LayerTypes {
		if builders[typ] == nil || normType(typ) != typ {
			t.Errorf("layer type %q: build function %v, canonical %q", typ, builders[typ] != nil, normType(typ))
		}
	}
	for alias, typ := range typeAliases {
		if _, ok := LayerTypes[typ]; !ok {
			t.Errorf("alias %q names unregistered type %q", alias, typ)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a layer type twice does not panic")
		}
	}()
	registerLayer("linear", nil, buildLinear)
}

// TestBuildConcurrent builds one spec from several goroutines (run with
// -race: the registry is read-only after init).
func TestBuildConcurrent(t *testing.T) {
	spec, err := DecodeSpecJSON([]byte(`{"input": [1, 8, 8], "layers": [{"type": "conv2d", "out": 2, "kernel": 3}, {"type": "swish"},
		{"type": "max_pool2d", "kernel": 2}, {"type": "flatten"}, {"type": "linear", "out": 3}, {"type": "nope"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, _, errs[i] = spec.Build(tensor.NewRNG(uint64(i))) })
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil || err.Error() != errs[0].Error() {
			t.Fatalf("concurrent builds: %v, %v", err, errs[0])
		}
	}
}

// BuildWithin counts exactly what the built model holds: every spec builds
// within its own state dict's size and fails one value short, naming the
// layer that crosses the bound.
func TestBuildWithinCountsExactly(t *testing.T) {
	for _, js := range []string{
		`{"input": [5], "layers": [{"type": "linear", "out": 7}, {"type": "relu"}, {"type": "linear", "out": 2, "bias": false}]}`,
		`{"input": [3, 9, 9], "layers": [{"type": "conv2d", "out": 4, "kernel": 3}, {"type": "batchnorm2d"}, {"type": "conv2d", "out": 4, "kernel": [1, 2], "groups": 2, "bias": false}]}`,
		`{"input": [6], "layers": [{"type": "batchnorm1d", "affine": false}, {"type": "batchnorm1d", "track_running_stats": false}, {"type": "layernorm"}, {"type": "layernorm", "affine": false}]}`,
		`{"input": [4], "layers": [{"type": "embedding", "num": 11, "out": 3}, {"type": "flatten"}, {"type": "linear", "out": 2}]}`,
		`{"input": [5, 8], "layers": [{"type": "transformer_encoder_layer", "heads": 2, "ff": 16}, {"type": "transformer_encoder_layer", "heads": 4}]}`,
		`{"input": [6], "layers": [{"type": "residual", "layers": [{"type": "linear", "out": 6}]}, {"type": "residual", "proj": true, "layers": [{"type": "linear", "out": 3}]}]}`,
		`{"input": [2, 8, 8], "layers": [{"type": "residual", "proj": true, "layers": [{"type": "conv2d", "out": 5, "kernel": 3, "stride": 2, "padding": 1}]}]}`,
	} {
		spec, err := DecodeSpecJSON([]byte(js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		net, _, err := spec.Build(tensor.NewRNG(1))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		n := int64(0)
		for _, e := range StateEntries(net) {
			n += int64(e.Tensor.Numel())
		}
		if _, _, err := spec.BuildWithin(tensor.NewRNG(1), n); err != nil {
			t.Errorf("%s: within its own %d values: %v", js, n, err)
		}
		if _, _, err := spec.BuildWithin(tensor.NewRNG(1), n-1); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d allowed", n-1)) {
			t.Errorf("%s: within %d values: err = %v", js, n-1, err)
		}
	}
}

// A spec declaring a huge layer fails before allocating it.
func TestBuildWithinRefusesBeforeAllocating(t *testing.T) {
	spec, err := DecodeSpecJSON([]byte(`{"input": [65536], "layers": [{"type": "linear", "out": 8}, {"type": "linear", "out": 65536}, {"type": "linear", "out": 65536}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = spec.BuildWithin(tensor.NewRNG(1), 600000) // layer 0 holds 524296
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "model.layers[1] (linear)") {
		t.Fatalf("err = %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 { // layer 0: 2 MiB
		t.Fatalf("the refused build allocated %d bytes", grew)
	}
}
