package mljob

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/internal/config"
	"github.com/fathom-ml/fathom/internal/yamltree"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/tune"
)

// Config is an ML job as a YAML file describes it (`fathom ml fit
// CONFIG.yaml`). Every key is checked, the stages' and evaluators' params
// against their Go structs: an unknown key anywhere is an error naming
// the key and its line.
//
//	data:
//	  source: iris                # or train: [a.csv, b.csv] / a Parquet dir
//	  testFraction: 0.2
//	  seed: 1
//	pipeline:
//	  - {type: StringIndexer, params: {inputCol: species, outputCol: label}}
//	  - type: VectorAssembler
//	    params: {inputCols: [sepal_length, sepal_width, petal_length, petal_width], outputCol: features}
//	  - {type: LogisticRegression, name: lr, params: {regParam: 0.01}}
//	evaluator: {type: MulticlassClassificationEvaluator, params: {metricName: accuracy}}
//	tuning:
//	  crossValidator: {numFolds: 3, parallelism: 2}
//	  grid: {lr.regParam: [0.1, 0.01, 0.001]}
//	output: {dir: runs/iris-lr}
type Config struct {
	Data     DataConfig    `yaml:"data"`
	Pipeline []StageConfig `yaml:"pipeline"`
	// Evaluator is one evaluator or a list; the first drives the tuning,
	// every one is reported.
	Evaluator EvaluatorList `yaml:"evaluator"`
	Tuning    TuningConfig  `yaml:"tuning"`
	Output    OutputConfig  `yaml:"output"`

	file   string
	dir    string
	text   []byte // the config as run (overrides applied), for the dashboard
	tuning string // "", "crossValidator" or "trainValidationSplit"
	axes   []gridAxis
}

// DataConfig says where the rows come from.
type DataConfig struct {
	// Source "iris" is the embedded Iris CSV (sepal_length, sepal_width,
	// petal_length, petal_width, species); "fashion-mnist" is Fashion-MNIST
	// ($FATHOM_DATA or /usr/share/datasets/fashion-mnist): a "features"
	// vector of 784 pixels/255 and a "label" class index, its 60 000
	// training rows to train and its 10 000 test rows to test (unless
	// testFraction holds out training rows instead). Otherwise Train names
	// the data.
	Source string `yaml:"source"`
	// Train is one path or a list: CSV files (.csv, .csv.gz, .tsv) or
	// Parquet files or directories of Parquet parts. Relative paths
	// resolve against the config's directory.
	Train Paths `yaml:"train"`
	// Test is the held-out data, read as Train is; or TestFraction of the
	// Train rows (a hash of Seed and the row index) are held out.
	Test         Paths   `yaml:"test"`
	TestFraction float64 `yaml:"testFraction"`
	Seed         int64   `yaml:"seed"`
	// Columns, if set, reads only these columns.
	Columns []string `yaml:"columns"`
	// CSV tunes the CSV reader.
	CSV CSVConfig `yaml:"csv"`
}

// CSVConfig are the CSV reader's options.
type CSVConfig struct {
	Delimiter string   `yaml:"delimiter"` // one character [","]
	Comment   string   `yaml:"comment"`   // one character starting comment lines
	NoHeader  bool     `yaml:"noHeader"`  // columns are then c1, c2, ...
	Missing   []string `yaml:"missing"`   // cells that are nulls [data.DefaultMissing]
}

// Paths is one path or a list of them.
type Paths []string

// UnmarshalYAML accepts a single string as well as a list.
func (p *Paths) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!null" {
			*p = nil
			return nil
		}
		*p = Paths{n.Value}
		return nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return err
	}
	*p = l
	return nil
}

func (p *Paths) checkKeys(n *yaml.Node, path string) *ConfigError {
	if n.Kind == yaml.ScalarNode {
		return nil
	}
	if n.Kind == yaml.SequenceNode {
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode {
				return &ConfigError{Line: e.Line, Msg: fmt.Sprintf("%s: want a path, got %s", path, yamltree.KindName(e))}
			}
		}
		return nil
	}
	return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a path or a list of paths, got %s", path, yamltree.KindName(n))}
}

// StageConfig is one pipeline stage: a registered type (ml.NewStage), an
// optional name for the tuning grid, and its params decoded over the
// stage's defaults.
type StageConfig struct {
	Type   string `yaml:"type"`
	Name   string `yaml:"name"`
	Params Params `yaml:"params"`
}

// EvaluatorConfig is an evaluator: a registered type (ml.NewEvaluator)
// and its params decoded over its defaults.
type EvaluatorConfig struct {
	Type   string `yaml:"type"`
	Params Params `yaml:"params"`
}

// Params is a params mapping kept as YAML, checked and decoded against
// the struct of the stage or evaluator its type names.
type Params struct {
	Node *yaml.Node
}

// UnmarshalYAML keeps the node.
func (p *Params) UnmarshalYAML(n *yaml.Node) error {
	p.Node = n
	return nil
}

func (p *Params) checkKeys(n *yaml.Node, path string) *ConfigError {
	if n.Kind == yaml.MappingNode || n.Tag == "!!null" {
		return nil
	}
	return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a mapping of parameters, got %s", path, yamltree.KindName(n))}
}

// decodeInto decodes the params over target's values.
func (p Params) decodeInto(target any, path string) *ConfigError {
	if p.Node == nil || p.Node.Tag == "!!null" {
		return nil
	}
	return decodeStrict(p.Node, target, path)
}

// EvaluatorList is one evaluator or a list of them.
type EvaluatorList []EvaluatorConfig

// UnmarshalYAML accepts a single mapping as well as a list.
func (l *EvaluatorList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		var e EvaluatorConfig
		if err := n.Decode(&e); err != nil {
			return err
		}
		*l = EvaluatorList{e}
		return nil
	}
	var s []EvaluatorConfig
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = s
	return nil
}

func (l *EvaluatorList) checkKeys(n *yaml.Node, path string) *ConfigError {
	t := reflect.TypeFor[EvaluatorConfig]()
	switch n.Kind {
	case yaml.MappingNode:
		return checkKeys(n, t, path)
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if err := checkKeys(e, t, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Tag == "!!null" {
		return nil
	}
	return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want an evaluator {type: ..., params: {...}} or a list of them, got %s", path, yamltree.KindName(n))}
}

// TuningConfig selects the best grid point with a CrossValidator or a
// TrainValidationSplit (give one of them).
type TuningConfig struct {
	CrossValidator       CrossValidatorConfig       `yaml:"crossValidator"`
	TrainValidationSplit TrainValidationSplitConfig `yaml:"trainValidationSplit"`
	// Grid maps "stage.param" (stage: its name, its type when unique, or
	// its index in the pipeline from 0) to the list of values to try, in
	// order; the axes come in the mapping's order, the first varying
	// fastest. A stage may also map to its params: lr: {regParam: [...]}
	// (what --set tuning.grid.lr.regParam=[...] writes).
	Grid Grid `yaml:"grid"`
}

// CrossValidatorConfig are tune.CrossValidator's settings.
type CrossValidatorConfig struct {
	NumFolds    int   `yaml:"numFolds"`    // [3]
	Parallelism int   `yaml:"parallelism"` // [1]
	Seed        int64 `yaml:"seed"`        // [0]
	// Distribution is dataParallel (default) or spread; see package tune.
	Distribution string `yaml:"distribution"`
}

// TrainValidationSplitConfig are tune.TrainValidationSplit's settings.
type TrainValidationSplitConfig struct {
	TrainRatio   float64 `yaml:"trainRatio"`  // [0.75]
	Parallelism  int     `yaml:"parallelism"` // [1]
	Seed         int64   `yaml:"seed"`
	Distribution string  `yaml:"distribution"`
}

// Grid is the tuning grid as written: an ordered mapping of keys to
// lists of values.
type Grid struct {
	Node *yaml.Node
}

// UnmarshalYAML keeps the node.
func (g *Grid) UnmarshalYAML(n *yaml.Node) error {
	g.Node = n
	return nil
}

func (g *Grid) checkKeys(n *yaml.Node, path string) *ConfigError {
	if n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a mapping of \"stage.param\": [values...], got %s", path, yamltree.KindName(n))}
	}
	_, err := gridEntries(n, path)
	return err
}

// gridEntry is one axis as written: its key "stage.param", the key's
// line and the value list.
type gridEntry struct {
	key    string
	line   int
	values *yaml.Node
}

// gridEntries flattens the grid mapping into dotted keys, in order:
// "pipeline.3.params.regParam": [values] as it is, and nested mappings
// (what --set tuning.grid.pipeline.3.params.regParam=[...] writes) joined
// with dots.
func gridEntries(n *yaml.Node, path string) ([]gridEntry, *ConfigError) {
	var out []gridEntry
	var walk func(n *yaml.Node, prefix string, line int) *ConfigError
	walk = func(n *yaml.Node, prefix string, line int) *ConfigError {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key, kl := yamltree.Join(prefix, k.Value), max(k.Line, line)
			if v.Kind == yaml.MappingNode {
				if err := walk(v, key, kl); err != nil {
					return err
				}
				continue
			}
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return &ConfigError{Line: max(v.Line, kl), Msg: fmt.Sprintf("%s.%s: want a non-empty list of values, got %s", path, key, yamltree.KindName(v))}
			}
			out = append(out, gridEntry{key, kl, v})
		}
		return nil
	}
	if err := walk(n, "", 0); err != nil {
		return nil, err
	}
	return out, nil
}

// OutputConfig says where the fitted model and the metrics go.
type OutputConfig struct {
	// Dir holds model.safetensors and metrics.json [runs/<config name>].
	Dir string `yaml:"dir"`
}

// gridAxis is a resolved grid key.
type gridAxis struct {
	key    string
	stage  int
	param  string
	line   int
	values []*yaml.Node
}

// Load reads a config file and applies overrides ("a.b=value", the
// value parsed as YAML, as given to `fathom ml fit --set`).
func Load(path string, overrides []string) (*Config, error) {
	root, err := config.Load(path, overrides, configSpec)
	if err != nil {
		return nil, err
	}
	c, err := fromTree(root, path)
	if err != nil {
		return nil, err
	}
	c.dir = filepath.Dir(path)
	if c.Output.Dir == "" {
		c.Output.Dir = config.RunDir(path)
	}
	return c, nil
}

// configSpec is what internal/config checks an ml fit config against.
var configSpec = config.Spec{
	Type: reflect.TypeFor[Config](),
	Hook: keyHook,
	What: "data, pipeline, evaluator, tuning, output",
}

// ParseConfig parses a config from YAML text; name is used in errors.
// Relative paths resolve against the working directory (Load
// resolves them against the file's directory). Stage and evaluator types
// must be registered (ml.RegisterStage, ml.RegisterEvaluator): this
// package registers every one fathom has (see stages.go).
func ParseConfig(text []byte, name string, overrides []string) (*Config, error) {
	root, err := config.Parse(text, name, overrides, configSpec)
	if err != nil {
		return nil, err
	}
	return fromTree(root, name)
}

// fromTree decodes and validates a checked config tree.
func fromTree(root *yaml.Node, name string) (*Config, error) {
	c := &Config{file: name}
	c.Tuning.CrossValidator = CrossValidatorConfig{NumFolds: 3, Parallelism: 1}
	c.Tuning.TrainValidationSplit = TrainValidationSplitConfig{TrainRatio: 0.75, Parallelism: 1}
	err := root.Decode(c)
	if err != nil {
		err = yamlError(root, "", err)
	} else {
		err = c.validate(root)
	}
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && ce.File == "" {
			ce.File = name
		}
		return nil, err
	}
	c.text, _ = yaml.Marshal(root)
	return c, nil
}

// child returns the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// lineOf returns the line of the value at path in root (0 when absent or
// set with --set).
func lineOf(root *yaml.Node, path ...string) int {
	n := root
	for _, k := range path {
		if n = child(n, k); n == nil {
			return 0
		}
	}
	return n.Line
}

func (c *Config) validate(root *yaml.Node) error {
	d := &c.Data
	errAt := func(line int, format string, args ...any) error {
		return &ConfigError{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case d.Source != "" && d.Source != "iris" && d.Source != "fashion-mnist":
		return errAt(lineOf(root, "data", "source"), "data.source: unknown source %q (iris or fashion-mnist, or give data.train)", d.Source)
	case d.Source != "" && len(d.Test) > 0:
		return errAt(lineOf(root, "data", "test"), "data: a source brings its own test rows (or give testFraction); test goes with train")
	case d.Source != "" && len(d.Train) > 0:
		return errAt(lineOf(root, "data", "train"), "data: give source or train, not both")
	case d.Source == "" && len(d.Train) == 0:
		return errAt(lineOf(root, "data"), "data.train: no training data (give a CSV or Parquet path, or source: iris)")
	case !(d.TestFraction >= 0 && d.TestFraction < 1):
		return errAt(lineOf(root, "data", "testFraction"), "data.testFraction must be in [0, 1), got %g", d.TestFraction)
	case d.TestFraction > 0 && len(d.Test) > 0:
		return errAt(lineOf(root, "data", "testFraction"), "data: give test or testFraction, not both")
	case len([]rune(d.CSV.Delimiter)) > 1:
		return errAt(lineOf(root, "data", "csv", "delimiter"), "data.csv.delimiter must be one character, got %q", d.CSV.Delimiter)
	case len([]rune(d.CSV.Comment)) > 1:
		return errAt(lineOf(root, "data", "csv", "comment"), "data.csv.comment must be one character, got %q", d.CSV.Comment)
	}
	if len(c.Pipeline) == 0 {
		return errAt(lineOf(root, "pipeline"), "pipeline: no stages")
	}
	stagesNode := child(root, "pipeline")
	names := map[string]int{}
	for i, s := range c.Pipeline {
		line := stagesNode.Content[i].Line
		if s.Name != "" {
			if j, dup := names[s.Name]; dup {
				return errAt(line, "pipeline[%d]: name %q is also stage %d's", i, s.Name, j)
			}
			if _, err := strconv.Atoi(s.Name); err == nil {
				return errAt(line, "pipeline[%d]: name %q is a number (grid keys take stage indices)", i, s.Name)
			}
			names[s.Name] = i
		}
		if _, err := c.stage(i, line); err != nil {
			return err
		}
	}
	if len(c.Evaluator) == 0 {
		return errAt(lineOf(root, "evaluator"), "evaluator: none given (e.g. {type: MulticlassClassificationEvaluator, params: {metricName: accuracy}})")
	}
	if _, err := c.evaluators(lineOf(root, "evaluator")); err != nil {
		return err
	}
	return c.validateTuning(root)
}

// stage builds stage i with its params.
func (c *Config) stage(i, line int) (ml.Stage, error) {
	s := c.Pipeline[i]
	path := fmt.Sprintf("pipeline[%d]", i)
	if s.Type == "" {
		return nil, &ConfigError{Line: line, Msg: path + ": no type"}
	}
	st, err := ml.NewStage(s.Type)
	if err != nil {
		return nil, &ConfigError{Line: line, Msg: fmt.Sprintf("%s: %v", path, err)}
	}
	if err := s.Params.decodeInto(st, path+".params ("+s.Type+")"); err != nil {
		return nil, err
	}
	return st, nil
}

// evaluators builds the evaluators with their params.
func (c *Config) evaluators(line int) ([]ml.Evaluator, error) {
	out := make([]ml.Evaluator, len(c.Evaluator))
	for i, e := range c.Evaluator {
		path := "evaluator"
		if len(c.Evaluator) > 1 {
			path = fmt.Sprintf("evaluator[%d]", i)
		}
		l := line
		if e.Params.Node != nil && e.Params.Node.Line > 0 {
			l = e.Params.Node.Line
		}
		if e.Type == "" {
			return nil, &ConfigError{Line: l, Msg: path + ": no type"}
		}
		ev, err := ml.NewEvaluator(e.Type)
		if err != nil {
			return nil, &ConfigError{Line: l, Msg: fmt.Sprintf("%s: %v", path, err)}
		}
		if err := e.Params.decodeInto(ev, path+".params ("+e.Type+")"); err != nil {
			return nil, err
		}
		out[i] = ev
	}
	return out, nil
}

func distribution(s string) (tune.Distribution, bool) {
	switch s {
	case "", "dataParallel":
		return tune.DataParallel, true
	case "spread":
		return tune.Spread, true
	}
	return 0, false
}

func (c *Config) validateTuning(root *yaml.Node) error {
	tn := child(root, "tuning")
	if tn == nil || tn.Tag == "!!null" {
		return nil
	}
	errAt := func(line int, format string, args ...any) error {
		return &ConfigError{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	hasCV, hasTVS := child(tn, "crossValidator") != nil, child(tn, "trainValidationSplit") != nil
	switch {
	case hasCV && hasTVS:
		return errAt(tn.Line, "tuning: give crossValidator or trainValidationSplit, not both")
	case hasCV:
		c.tuning = "crossValidator"
		cv := c.Tuning.CrossValidator
		switch _, ok := distribution(cv.Distribution); {
		case cv.NumFolds < 2:
			return errAt(lineOf(tn, "crossValidator", "numFolds"), "tuning.crossValidator.numFolds must be ≥ 2, got %d", cv.NumFolds)
		case cv.Parallelism < 1:
			return errAt(lineOf(tn, "crossValidator", "parallelism"), "tuning.crossValidator.parallelism must be ≥ 1, got %d", cv.Parallelism)
		case !ok:
			return errAt(lineOf(tn, "crossValidator", "distribution"), "tuning.crossValidator.distribution: want dataParallel or spread, got %q", cv.Distribution)
		}
	case hasTVS:
		c.tuning = "trainValidationSplit"
		tv := c.Tuning.TrainValidationSplit
		switch _, ok := distribution(tv.Distribution); {
		case !(tv.TrainRatio > 0 && tv.TrainRatio < 1):
			return errAt(lineOf(tn, "trainValidationSplit", "trainRatio"), "tuning.trainValidationSplit.trainRatio must be in (0, 1), got %g", tv.TrainRatio)
		case tv.Parallelism < 1:
			return errAt(lineOf(tn, "trainValidationSplit", "parallelism"), "tuning.trainValidationSplit.parallelism must be ≥ 1, got %d", tv.Parallelism)
		case !ok:
			return errAt(lineOf(tn, "trainValidationSplit", "distribution"), "tuning.trainValidationSplit.distribution: want dataParallel or spread, got %q", tv.Distribution)
		}
	default:
		return errAt(tn.Line, "tuning: give crossValidator: {...} or trainValidationSplit: {...}")
	}
	g := c.Tuning.Grid.Node
	if g == nil || g.Tag == "!!null" || len(g.Content) == 0 {
		return errAt(tn.Line, "tuning.grid: no parameters to tune (e.g. grid: {pipeline.1.params.regParam: [0.1, 0.01]})")
	}
	entries, cerr := gridEntries(g, "tuning.grid")
	if cerr != nil {
		return cerr
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.key] {
			return errAt(e.line, "tuning.grid: %q given twice", e.key)
		}
		seen[e.key] = true
		a, err := c.resolveAxis(e.key, e.line)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("pipeline.%d.params.%s", a.stage, a.param)
		if id != e.key && seen[id] {
			return errAt(e.line, "tuning.grid: %q given twice (as %q)", id, e.key)
		}
		seen[id] = true
		a.values = e.values.Content
		// Every value must decode over the stage: errors now, with lines.
		for _, val := range a.values {
			st, err := c.stage(a.stage, e.line)
			if err != nil {
				return err
			}
			if err := setParam(st, a.param, val, a.path()); err != nil {
				return err
			}
		}
		c.axes = append(c.axes, a)
	}
	return nil
}

// resolveAxis parses a grid key: the --set key path of a stage's
// parameter, pipeline.N.params.P (the form fathom tune's --grid takes
// too), or the deprecated "stage.param" (stage: its name, its type when
// unique, or its index), accepted with a deprecation line.
func (c *Config) resolveAxis(key string, line int) (gridAxis, error) {
	if rest, ok := strings.CutPrefix(key, "pipeline."); ok {
		num, param, ok := strings.Cut(rest, ".params.")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || param == "" || strings.Contains(param, ".") {
			return gridAxis{}, &ConfigError{Line: line, Msg: fmt.Sprintf("tuning.grid: key %q: want pipeline.N.params.PARAM", key)}
		}
		if n < 0 || n >= len(c.Pipeline) {
			return gridAxis{}, &ConfigError{Line: line, Msg: fmt.Sprintf("tuning.grid: key %q: the pipeline has stages 0..%d", key, len(c.Pipeline)-1)}
		}
		return c.estimatorAxis(key, n, param, line)
	}
	dot := strings.LastIndex(key, ".")
	if dot <= 0 || dot == len(key)-1 {
		return gridAxis{}, &ConfigError{Line: line, Msg: fmt.Sprintf("tuning.grid: key %q: want pipeline.N.params.PARAM", key)}
	}
	ref, param := key[:dot], key[dot+1:]
	idx := -1
	if n, err := strconv.Atoi(ref); err == nil {
		if n < 0 || n >= len(c.Pipeline) {
			return gridAxis{}, &ConfigError{Line: line, Msg: fmt.Sprintf("tuning.grid: key %q: the pipeline has stages 0..%d", key, len(c.Pipeline)-1)}
		}
		idx = n
	} else {
		var byType []int
		for i, s := range c.Pipeline {
			if s.Name == ref {
				idx = i
			}
			if s.Type == ref {
				byType = append(byType, i)
			}
		}
		if idx < 0 {
			switch len(byType) {
			case 0:
				var known []string
				for i, s := range c.Pipeline {
					known = append(known, strconv.Itoa(i), s.Type)
					if s.Name != "" {
						known = append(known, s.Name)
					}
				}
				slices.Sort(known)
				return gridAxis{}, &ConfigError{Line: line, Msg: fmt.Sprintf("tuning.grid: key %q: no stage %q (stages: %s)", key, ref, strings.Join(slices.Compact(known), ", "))}
			case 1:
				idx = byType[0]
			default:
				return gridAxis{}, &ConfigError{Line: line, Msg: fmt.Sprintf("tuning.grid: key %q: %d stages are %s; give the stage a name or use its index", key, len(byType), ref)}
			}
		}
	}
	configSpec.Deprecated(fmt.Sprintf("%s:%d", c.file, line), "the grid key "+key, fmt.Sprintf("pipeline.%d.params.%s", idx, param))
	return c.estimatorAxis(key, idx, param, line)
}

// estimatorAxis is the axis of param of stage idx, an estimator.
func (c *Config) estimatorAxis(key string, idx int, param string, line int) (gridAxis, error) {
	st, err := c.stage(idx, line)
	if err != nil {
		return gridAxis{}, err
	}
	if _, ok := st.(ml.Estimator); !ok {
		return gridAxis{}, &ConfigError{Line: line, Msg: fmt.Sprintf("tuning.grid: key %q: stage %d (%s) needs no fitting; only estimators' params can be tuned", key, idx, st.Type())}
	}
	return gridAxis{key: key, stage: idx, param: param, line: line}, nil
}

// path is the axis's stage in errors: tuning.grid.<stage>.
func (a gridAxis) path() string {
	return "tuning.grid." + strings.TrimSuffix(a.key, "."+a.param)
}

// setParam decodes {param: value} over stage st.
func setParam(st any, param string, value *yaml.Node, path string) *ConfigError {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: value.Line, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: param, Line: value.Line}, value}}
	return decodeStrict(m, st, path)
}
