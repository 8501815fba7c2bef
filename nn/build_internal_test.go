package nn

import (
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
