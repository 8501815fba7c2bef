package modelfile

import (
	"errors"
	"sync"
	"testing"
)

// TestRegisterFormat: Load hands paths with a registered extension (in
// any case) to the format's loader; registering one twice, or
// .safetensors, panics.
// The test format is registered once per process (the registry is
// process-wide), so the test can repeat under -count=N.
var (
	testFormatOnce sync.Once
	testFormatSaw  string
	errMine        = errors.New("loaded by the test format")
)

func TestRegisterFormat(t *testing.T) {
	testFormatOnce.Do(func() {
		RegisterFormat(".testfmt", func(path string) (*Model, error) {
			testFormatSaw = path
			return nil, errMine
		})
	})
	testFormatSaw = ""
	if _, err := Load("dir/model.TestFmt"); !errors.Is(err, errMine) || testFormatSaw != "dir/model.TestFmt" {
		t.Errorf("Load: %v, loader saw %q", err, testFormatSaw)
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
