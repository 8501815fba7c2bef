package mljob

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/internal/config"
	"github.com/fathom-ml/fathom/ml"
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

// TestDeprecatedGridKeys: the old "stage.param" grid keys give the grid
// and the fits the --set key path gives, with one deprecation line each.
func TestDeprecatedGridKeys(t *testing.T) {
	var warn strings.Builder
	configSpec.Warn = &warn
	defer func() { configSpec.Warn = nil }()
	// grid returns the values of each grid point and the ridge stage's
	// settings each point applies (the axes keep their names as written).
	grid := func(g string) string {
		c := mustParse(t, "tuning:\n  crossValidator: {}\n  grid:\n"+g)
		var b strings.Builder
		for _, point := range c.Grid() {
			p, err := c.NewPipeline()
			if err != nil {
				t.Fatal(err)
			}
			e, err := point.Apply(p)
			if err != nil {
				t.Fatal(err)
			}
			r := e.(*ml.Pipeline).Stages[1].(*ridge)
			fmt.Fprintf(&b, "%d values, regParam %g maxIter %d; ", len(point), r.RegParam, r.MaxIter)
		}
		return b.String()
	}
	newG := grid("    pipeline.1.params.regParam: [1, 2]\n    pipeline.1.params.maxIter: [3]\n")
	if want := "2 values, regParam 1 maxIter 3; 2 values, regParam 2 maxIter 3; "; newG != want || warn.Len() != 0 {
		t.Fatalf("new keys: %q, want %q; warnings %q", newG, want, warn.String())
	}
	oldG := grid("    ridge.regParam: [1, 2]\n    mljobTestRidge: {maxIter: [3]}\n")
	if oldG != newG {
		t.Errorf("old keys give grid %s, new keys %s", oldG, newG)
	}
	w := warn.String()
	if strings.Count(w, "\n") != 2 || strings.Count(w, "job.yaml:16: the grid key ridge.regParam is deprecated: use pipeline.1.params.regParam") != 1 ||
		strings.Count(w, "the grid key mljobTestRidge.maxIter is deprecated: use pipeline.1.params.maxIter") != 1 {
		t.Errorf("warnings %q", w)
	}
	_, err := ParseConfig([]byte(baseConfig+"tuning:\n  crossValidator: {}\n  grid:\n    ridge.regParam: [1]\n    pipeline.1.params.regParam: [2]\n"), "job.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), `job.yaml:17: tuning.grid: "pipeline.1.params.regParam" given twice`) {
		t.Errorf("old and new key of one param: %v", err)
	}
	for _, bad := range []string{"pipeline.9.params.regParam", "pipeline.x.params.regParam", "pipeline.1.regParam"} {
		_, err := ParseConfig([]byte(baseConfig+"tuning:\n  crossValidator: {}\n  grid:\n    "+bad+": [1]\n"), "job.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), "job.yaml:16: tuning.grid: key \""+bad+"\"") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func mustParse(t *testing.T, extra string) *Config {
	t.Helper()
	c, err := ParseConfig([]byte(baseConfig+extra), "job.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
