package mljob

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/ml"
)

const baseConfig = `data:
  train: train.csv
  testFraction: 0.25
  seed: 3
pipeline:
  - type: mljobTestAssembler
    params: {inputCols: [x1, x2, x3]}
  - type: mljobTestRidge
    name: ridge
    params:
      regParam: 0.01
evaluator: {type: mljobTestRegressionEvaluator, params: {metricName: rmse}}
`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig), "job.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.NewPipeline()
	if err != nil {
		t.Fatal(err)
	}
	r := p.Stages[1].(*ridge)
	// Decoded over the defaults: regParam set, maxIter and the columns
	// kept.
	if r.RegParam != 0.01 || r.MaxIter != 100 || r.FeaturesCol != "features" {
		t.Fatalf("ridge %+v", r)
	}
	if a := p.Stages[0].(*assembler); len(a.InputCols) != 3 || a.OutputCol != "features" {
		t.Fatalf("assembler %+v", a)
	}
	if c.Data.TestFraction != 0.25 || len(c.Data.Train) != 1 || c.Data.Seed != 3 {
		t.Fatalf("data %+v", c.Data)
	}
	ev, err := c.Evaluators()
	if err != nil || len(ev) != 1 || ev[0].Metric() != "rmse" {
		t.Fatalf("evaluators %v, %v", ev, err)
	}
}

func TestSet(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig), "job.yaml", []string{
		"pipeline.1.params.regParam=0.5", "pipeline.1.params.maxIter=7", "data.train=[a.csv, b.csv]",
		"evaluator.params.metricName=r2", "output.dir=out"})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.NewPipeline()
	if r := p.Stages[1].(*ridge); r.RegParam != 0.5 || r.MaxIter != 7 {
		t.Fatalf("ridge %+v", r)
	}
	ev, _ := c.Evaluators()
	if len(c.Data.Train) != 2 || ev[0].Metric() != "r2" || c.Output.Dir != "out" {
		t.Fatalf("train %v, metric %s, output %q", c.Data.Train, ev[0].Metric(), c.Output.Dir)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		set        []string
		want       string
	}{
		{"unknown top key", baseConfig + "epochs: 3\n", nil, `job.yaml:13: unknown key "epochs" in the config`},
		{"unknown data key", strings.Replace(baseConfig, "  seed: 3", "  sed: 3", 1), nil, `job.yaml:4: unknown key "sed" in data`},
		{"unknown stage param", strings.Replace(baseConfig, "regParam: 0.01", "regparam: 0.01", 1), nil,
			`job.yaml:11: unknown key "regparam" in pipeline[1].params (mljobTestRidge) (known keys: regParam, maxIter, featuresCol, labelCol)`},
		{"wrong param type", strings.Replace(baseConfig, "regParam: 0.01", "regParam: [1]", 1), nil, `job.yaml:11: pipeline[1].params (mljobTestRidge): cannot unmarshal !!seq into float64`},
		{"float for int", strings.Replace(baseConfig, "regParam: 0.01", "maxIter: 2.5", 1), nil, `job.yaml:11: pipeline[1].params (mljobTestRidge).maxIter: want an integer, got the value "2.5"`},
		{"string for float", strings.Replace(baseConfig, "regParam: 0.01", "regParam: lots", 1), nil, `job.yaml:11: pipeline[1].params (mljobTestRidge): cannot unmarshal !!str ` + "`lots`"},
		{"unknown stage type", strings.Replace(baseConfig, "type: mljobTestRidge", "type: NoSuchStage", 1), nil, `job.yaml:8: pipeline[1]: ml: unknown stage type "NoSuchStage"`},
		{"unknown evaluator", strings.Replace(baseConfig, "mljobTestRegressionEvaluator", "NoSuchEvaluator", 1), nil, `unknown evaluator type "NoSuchEvaluator"`},
		{"unknown evaluator param", strings.Replace(baseConfig, "metricName: rmse", "metric: rmse", 1), nil, `job.yaml:12: unknown key "metric" in evaluator.params (mljobTestRegressionEvaluator)`},
		{"no pipeline", "data: {source: iris}\nevaluator: {type: mljobTestRegressionEvaluator}\n", nil, "pipeline: no stages"},
		{"no data", strings.Replace(baseConfig, "  train: train.csv\n", "", 1), nil, "data.train: no training data"},
		{"bad source", strings.Replace(baseConfig, "  train: train.csv\n", "  source: mnist\n", 1), nil, `job.yaml:2: data.source: unknown source "mnist"`},
		{"test fraction", baseConfig, []string{"data.testFraction=1.5"}, "data.testFraction must be in [0, 1), got 1.5"},
		{"set unknown", baseConfig, []string{"data.nope=1"}, `unknown key "nope" in data (known keys: source, train, test, testFraction, seed, columns, csv) (given with --set)`},
		{"set bad path", baseConfig, []string{"pipeline.5.params.regParam=1"}, `--set pipeline.5.params.regParam=1: "5": pipeline is a list of 2 items`},
		{"paths mapping", strings.Replace(baseConfig, "train: train.csv", "train: {a: 1}", 1), nil, "job.yaml:2: data.train: want a path or a list of paths"},
		{"params list", strings.Replace(baseConfig, "params: {inputCols: [x1, x2, x3]}", "params: [1]", 1), nil, "job.yaml:7: pipeline[0].params: want a mapping of parameters"},
		{"duplicate name", baseConfig + "", []string{"pipeline.0.name=ridge"}, `name "ridge" is also stage 0's`},
		{"tuning both", baseConfig + "tuning:\n  crossValidator: {}\n  trainValidationSplit: {}\n  grid: {ridge.regParam: [1]}\n", nil, "job.yaml:14: tuning: give crossValidator or trainValidationSplit, not both"},
		{"tuning folds", baseConfig + "tuning:\n  crossValidator: {numFolds: 1}\n  grid: {ridge.regParam: [1]}\n", nil, "job.yaml:14: tuning.crossValidator.numFolds must be ≥ 2, got 1"},
		{"tuning distribution", baseConfig + "tuning:\n  crossValidator: {distribution: all}\n  grid: {ridge.regParam: [1]}\n", nil, `tuning.crossValidator.distribution: want dataParallel or spread, got "all"`},
		{"tuning ratio", baseConfig + "tuning:\n  trainValidationSplit: {trainRatio: 1}\n  grid: {ridge.regParam: [1]}\n", nil, "tuning.trainValidationSplit.trainRatio must be in (0, 1), got 1"},
		{"grid empty", baseConfig + "tuning:\n  crossValidator: {}\n", nil, "tuning.grid: no parameters to tune"},
		{"grid no list", baseConfig + "tuning:\n  crossValidator: {}\n  grid: {ridge.regParam: 1}\n", nil, `job.yaml:15: tuning.grid.ridge.regParam: want a non-empty list of values`},
		{"grid unknown stage", baseConfig + "tuning:\n  crossValidator: {}\n  grid:\n    lr.regParam: [1]\n", nil, `job.yaml:16: tuning.grid: key "lr.regParam": no stage "lr" (stages: 0, 1, mljobTestAssembler, mljobTestRidge, ridge)`},
		{"grid nested not list", baseConfig + "tuning:\n  crossValidator: {}\n  grid:\n    ridge: {regParam: 1}\n", nil, `job.yaml:16: tuning.grid.ridge.regParam: want a non-empty list of values, got the value "1"`},
		{"grid twice", baseConfig + "tuning:\n  crossValidator: {}\n  grid:\n    ridge.regParam: [1]\n    ridge: {regParam: [2]}\n", nil, `job.yaml:17: tuning.grid: "ridge.regParam" given twice`},
		{"grid index", baseConfig + "tuning:\n  crossValidator: {}\n  grid:\n    7.regParam: [1]\n", nil, `job.yaml:16: tuning.grid: key "7.regParam": the pipeline has stages 0..1`},
		{"grid not estimator", baseConfig + "tuning:\n  crossValidator: {}\n  grid:\n    0.outputCol: [a]\n", nil, `stage 0 (mljobTestAssembler) needs no fitting`},
		{"grid unknown param", baseConfig + "tuning:\n  crossValidator: {}\n  grid:\n    ridge.regparam: [1]\n", nil, `job.yaml:16: unknown key "regparam" in tuning.grid.ridge`},
		{"grid bad value", baseConfig + "tuning:\n  crossValidator: {}\n  grid:\n    mljobTestRidge.maxIter: [1, 2.5]\n", nil, `job.yaml:16: tuning.grid.mljobTestRidge.maxIter: want an integer, got the value "2.5"`},
		{"not a mapping", "- 1\n", nil, "job.yaml:1: the config must be a mapping"},
		{"yaml syntax", "data: [\n", nil, "job.yaml: "},
	} {
		_, err := ParseConfig([]byte(tc.text), "job.yaml", tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error\n  %v\nwant it to contain\n  %s", tc.name, err, tc.want)
		}
	}
}

func TestDecodeParams(t *testing.T) {
	r := newRidge()
	if err := DecodeParams(r, `{"regParam": 0.25, "maxIter": 9}`); err != nil || r.RegParam != 0.25 || r.MaxIter != 9 || r.LabelCol != "label" {
		t.Fatalf("JSON params: %+v, %v", r, err)
	}
	if err := DecodeParams(r, "regParam: 1\nmaxiter: 3\n"); err == nil || !strings.Contains(err.Error(), `line 2: unknown key "maxiter"`) {
		t.Fatalf("unknown key: %v", err)
	}
	if err := SetParams(r, []string{"regParam=0.5", "labelCol=y"}); err != nil || r.RegParam != 0.5 || r.LabelCol != "y" {
		t.Fatalf("SetParams: %+v, %v", r, err)
	}
	if err := SetParams(r, []string{"regParam"}); err == nil {
		t.Fatal("SetParams without =: no error")
	}
	if _, err := NewStage("mljobTestRidge", "bogus: 1"); err == nil || !strings.Contains(err.Error(), "mljobTestRidge: ") {
		t.Fatalf("NewStage: %v", err)
	}
}

func TestGridForms(t *testing.T) {
	// "stage.param": [...], stage: {param: [...]}, and --set of either.
	for _, tc := range []struct {
		extra string
		set   []string
	}{
		{"tuning:\n  crossValidator: {}\n  grid: {ridge.regParam: [1, 2], 1.maxIter: [3]}\n", nil},
		{"tuning:\n  crossValidator: {}\n  grid:\n    ridge: {regParam: [1, 2]}\n    mljobTestRidge: {maxIter: [3]}\n", nil},
		{"", []string{"tuning.crossValidator.numFolds=3", "tuning.grid.ridge.regParam=[1, 2]", "tuning.grid.ridge.maxIter=[3]"}},
	} {
		c, err := ParseConfig([]byte(baseConfig+tc.extra), "job.yaml", tc.set)
		if err != nil {
			t.Fatalf("%q %v: %v", tc.extra, tc.set, err)
		}
		g := c.Grid()
		if len(g) != 2 || len(g[1]) != 2 || g[1][0].Value.(fmt.Stringer).String() != "2" || g[1][1].Value.(fmt.Stringer).String() != "3" {
			t.Fatalf("%q %v: grid %v", tc.extra, tc.set, g)
		}
		p, _ := c.NewPipeline()
		e, err := g[1].Apply(p)
		if err != nil {
			t.Fatal(err)
		}
		if r := e.(*ml.Pipeline).Stages[1].(*ridge); r.RegParam != 2 || r.MaxIter != 3 {
			t.Fatalf("grid point 1 applied: %+v", r)
		}
		if r := p.Stages[1].(*ridge); r.RegParam != 0.01 || r.MaxIter != 100 {
			t.Fatalf("the pipeline itself changed: %+v", r)
		}
	}
}

func TestInlineParams(t *testing.T) {
	type shared struct {
		RegParam float64 `yaml:"regParam"`
		MaxIter  int     `yaml:"maxIter"`
	}
	type est struct {
		shared `yaml:",inline"`
		Family string `yaml:"family"`
	}
	e := &est{shared: shared{MaxIter: 100}, Family: "auto"}
	if err := DecodeParams(e, "{regParam: 0.5, family: multinomial}"); err != nil || e.RegParam != 0.5 || e.MaxIter != 100 || e.Family != "multinomial" {
		t.Fatalf("inline params: %+v, %v", e, err)
	}
	if err := DecodeParams(e, "{maxIter: 2.5}"); err == nil || !strings.Contains(err.Error(), "params.maxIter: want an integer") {
		t.Fatalf("a float for an inline int: %v", err)
	}
	err := DecodeParams(e, "{regparam: 1}")
	if err == nil || !strings.Contains(err.Error(), `unknown key "regparam" in params (known keys: regParam, maxIter, family)`) {
		t.Fatalf("unknown key: %v", err)
	}
}
