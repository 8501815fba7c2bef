package modelfile

import (
	"errors"
	"testing"
)

// TestRegisterFormat: Load hands paths with a registered extension (in
// any case) to the format's loader; registering one twice, or
// .safetensors, panics.
func TestRegisterFormat(t *testing.T) {
	errMine := errors.New("loaded by the test format")
	var got string
	RegisterFormat(".testfmt", func(path string) (*Model, error) {
		got = path
		return nil, errMine
	})
	if _, err := Load("dir/model.TestFmt"); !errors.Is(err, errMine) || got != "dir/model.TestFmt" {
		t.Errorf("Load: %v, loader saw %q", err, got)
	}
	if _, err := Load("testdata/tiny.safetensors"); err != nil {
		t.Errorf("a model file no longer loads: %v", err)
	}
	for _, ext := range []string{".testfmt", ".safetensors", "noDot"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterFormat(%q) did not panic", ext)
				}
			}()
			RegisterFormat(ext, func(string) (*Model, error) { return nil, nil })
		}()
	}
}
