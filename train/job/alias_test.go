package job

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/internal/config"
)

// laughs returns a YAML "billion laughs" as list items: levels anchors,
// each holding ten aliases of the one before, so the last expands to
// 10^levels values. indent is the indentation of the items; first is the
// value of the first anchor; level wraps the ten aliases of each next one
// ("[%s]" for a plain list).
func laughs(levels int, indent, first, level string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s- &l0 %s\n", indent, first)
	for i := 1; i <= levels; i++ {
		aliases := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "%s- &l%d %s\n", indent, i, fmt.Sprintf(level, aliases))
	}
	return b.String()
}

// residualLaughs is the bomb as layers that the strict key check accepts
// at every level: each a residual block of ten copies of the one before.
func residualLaughs(levels int, indent string) string {
	return laughs(levels, indent, "{type: relu}", "{type: residual, layers: [%s]}")
}

// within runs f and fails the test if it has not returned after 20 seconds,
// far longer than it needs (milliseconds): before the alias bound these
// inputs ran for hours.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("still running after 20 seconds")
		return nil
	}
}

func TestConfigAliasBomb(t *testing.T) {
	const levels = 9 // 10^9 values once expanded
	for _, test := range []struct {
		name, text string
	}{
		{"top level", "data: {source: iris}\nbomb:\n" + laughs(levels, "  ", "lol", "[%s]")},
		{"model", "data: {source: iris}\nloss: mse\nmodel:\n" + residualLaughs(levels, "  ")},
		{"residual layers", "data: {source: iris}\nloss: mse\nmodel:\n  - type: residual\n    layers:\n" +
			residualLaughs(levels, "      ")},
		{"data", "data:\n  source: iris\n  shape:\n" + laughs(levels, "    ", "1", "[%s]")},
	} {
		t.Run(test.name, func(t *testing.T) {
			if len(test.text) > 2000 {
				t.Fatalf("bomb is %d bytes", len(test.text))
			}
			err := within(t, func() error {
				_, err := ParseConfig([]byte(test.text), "bomb.yaml", nil)
				return err
			})
			if err == nil {
				t.Fatal("bomb accepted")
			}
			// Either the alias bound or the strict key check stops it
			// first, never a walk of the expanded tree.
			if !strings.Contains(err.Error(), "bomb.yaml:") {
				t.Fatalf("error %q does not name the file and line", err)
			}
		})
	}
	// The same bombs placed where checkKeys accepts every level reach the
	// alias bound, which names the alias and its line.
	text := "data: {source: iris}\nloss: mse\nmodel:\n  - type: residual\n    layers:\n" + residualLaughs(levels, "      ")
	err := within(t, func() error { _, err := ParseConfig([]byte(text), "bomb.yaml", nil); return err })
	if err == nil || !strings.Contains(err.Error(), "too many aliases") || !strings.Contains(err.Error(), "bomb.yaml:") {
		t.Fatalf("residual bomb: %v", err)
	}
}

func TestDecodeSpecYAMLAliasBomb(t *testing.T) {
	text := "layers:\n  - type: residual\n    layers:\n" + residualLaughs(9, "      ")
	err := within(t, func() error { _, err := DecodeSpecYAML([]byte(text)); return err })
	if err == nil || !strings.Contains(err.Error(), "too many aliases") || !strings.Contains(err.Error(), "line ") {
		t.Fatalf("spec bomb: %v", err)
	}
}

func TestCheckAliasesBound(t *testing.T) {
	// A config that reuses a block through aliases, within the bound,
	// is accepted.
	text := "data: {source: iris}\nloss: cross_entropy\noptimizer: sgd\nepochs: 1\nbatch_size: 4\nmodel:\n  - type: residual\n    layers: &blk [{type: linear, out: 4}, {type: relu}]\n" +
		"  - {type: residual, layers: *blk}\n  - {type: linear, out: 3}\n"
	if _, err := ParseConfig([]byte(text), "ok.yaml", nil); err != nil {
		t.Fatal(err)
	}
	// Just past the bound: 10^5 relus plus their lists.
	text = "data: {source: iris}\nloss: mse\nmodel:\n  - type: residual\n    layers:\n" + residualLaughs(5, "      ")
	if _, err := ParseConfig([]byte(text), "b.yaml", nil); err == nil || !strings.Contains(err.Error(), "too many aliases") {
		t.Fatalf("got %v", err)
	}
}

// TestConfigLayerRefusals: the training config refuses an alias bomb and
// an oversize text with the config layer's error, the same one ml fit's
// config gives (ml/mljob's TestConfigLayerRefusals).
func TestConfigLayerRefusals(t *testing.T) {
	for _, text := range []string{
		"data: {source: iris}\nbomb:\n" + laughs(9, "  ", "lol", "[%s]"),
		"data: {source: iris}\n" + strings.Repeat("# padding\n", config.MaxBytes/10+1),
	} {
		err := within(t, func() error { _, err := ParseConfig([]byte(text), "c.yaml", nil); return err })
		_, want := config.Parse([]byte(text), "c.yaml", nil, config.Spec{})
		var ce *ConfigError
		if !errors.As(err, &ce) || want == nil || err.Error() != want.Error() {
			t.Errorf("%.40q...: %v, want the config layer's %v", text, err, want)
		}
	}
}
