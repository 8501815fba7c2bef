package mljob

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/internal/config"
)

// TestConfigLayerRefusals: ml fit's config refuses an alias bomb and an
// oversize text with the config layer's error, the same one a training
// config gives (train/job's TestConfigLayerRefusals).
func TestConfigLayerRefusals(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("data: {source: iris}\nbomb:\n  - &l0 lol\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&bomb, "  - &l%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	for _, text := range []string{
		bomb.String(),
		"data: {source: iris}\n" + strings.Repeat("# padding\n", config.MaxBytes/10+1),
	} {
		done := make(chan error, 1)
		go func() { _, err := ParseConfig([]byte(text), "c.yaml", nil); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("still running after 20 seconds")
		}
		_, want := config.Parse([]byte(text), "c.yaml", nil, config.Spec{})
		var ce *ConfigError
		if !errors.As(err, &ce) || want == nil || err.Error() != want.Error() {
			t.Errorf("%.40q...: %v, want the config layer's %v", text, err, want)
		}
	}
}
