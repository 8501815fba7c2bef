package job

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/internal/config"
	"github.com/fathom-ml/fathom/internal/yamltree"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/prune"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
)

// Config is a training job as a YAML file describes it (`fathom train
// CONFIG.yaml`). Every key is checked: an unknown key anywhere is an error
// naming the key and its line.
//
//	data:
//	  source: iris
//	  test_fraction: 0.2
//	  standardize: true
//	model:
//	  - {type: linear, out: 16}
//	  - {type: relu}
//	  - {type: linear, out: 3}
//	loss: cross_entropy
//	optimizer: {type: adam, lr: 0.01}
//	epochs: 60
//	batch_size: 16
//	seed: 1
//	output: {dir: runs/iris}
type Config struct {
	Data DataConfig `yaml:"data"`
	// Model is the layer list (package nn's layer specs); the input shape
	// comes from the data.
	Model     []nn.LayerSpec  `yaml:"model"`
	Loss      LossConfig      `yaml:"loss"`
	Optimizer OptimizerConfig `yaml:"optimizer"`
	Schedule  ScheduleConfig  `yaml:"schedule"`
	Epochs    int             `yaml:"epochs"`
	BatchSize int             `yaml:"batch_size"`
	// Seed drives everything random: the split, the initialization, the
	// batch order and dropout.
	Seed          uint64              `yaml:"seed"`
	EarlyStopping EarlyStoppingConfig `yaml:"early_stopping"`
	Output        OutputConfig        `yaml:"output"`
	// Distributed tunes data-parallel training (WORLD_SIZE > 1); a
	// single-process run accepts and ignores it.
	Distributed DistributedConfig `yaml:"distributed"`
	// Precision is the arithmetic of the matrix products of training:
	// float32 (default), bf16 or fp16 (train.Options.Precision); LossScale
	// tunes fp16's dynamic loss scaling.
	Precision string           `yaml:"precision"`
	LossScale *LossScaleConfig `yaml:"loss_scale"`
	// Prune prunes the model while it trains (see PruneConfig).
	Prune *PruneConfig `yaml:"prune"`

	// InitFrom, if set, is a model file (fathom train's) whose weights
	// start the model, matched by name and shape; the last layer (the
	// head) may differ and is then initialized fresh. Relative to the
	// config's directory.
	InitFrom string `yaml:"init_from"`
	// Freeze lists layers, by index in model ("0", "3"), whose parameters
	// stay fixed: no gradients are computed for them.
	Freeze []string `yaml:"freeze"`

	// dir is the directory of the config file; relative data paths are
	// resolved against it. file names the config in errors; modelLines
	// holds the line of each model layer (0 when set by --set); text is
	// the config as YAML with the overrides applied.
	dir        string
	file       string
	modelLines []int
	text       []byte
}

// LossScaleConfig is train.LossScale in a config (zero fields: defaults).
type LossScaleConfig struct {
	Init           float64 `yaml:"init"`
	Growth         float64 `yaml:"growth"`
	Backoff        float64 `yaml:"backoff"`
	GrowthInterval int     `yaml:"growth_interval"`
}

// precision returns the train.Options precision and loss scaling.
func (c *Config) precision() (tensor.Precision, *train.LossScale, error) {
	p, err := tensor.ParsePrecision(c.Precision)
	if err != nil {
		return 0, nil, fmt.Errorf("precision: %w", err)
	}
	if c.LossScale == nil {
		return p, nil, nil
	}
	if p != tensor.PrecisionFP16 {
		return 0, nil, fmt.Errorf("loss_scale: applies to precision fp16 only, not %v", p)
	}
	l := c.LossScale
	ls := &train.LossScale{Init: l.Init, Growth: l.Growth, Backoff: l.Backoff, Interval: l.GrowthInterval}
	if err := ls.Validate(); err != nil {
		return 0, nil, fmt.Errorf("loss_scale: %w", err)
	}
	return p, ls, nil
}

// PruneConfig prunes the weights of the model's Linear and Conv2d layers
// while it trains (package prune): at the start of epoch StartEpoch
// (0: before the first step), or gradually from StartEpoch to EndEpoch,
// the sparsity rising along a cubic ramp and the masks recomputed every
// EverySteps steps; pruned weights stay zero through the optimizer steps.
type PruneConfig struct {
	// Method is magnitude (single weights, the default) or structured
	// (whole neurons and channels).
	Method   string  `yaml:"method"`
	Sparsity float64 `yaml:"sparsity"`
	// Scope, for magnitude, is layer (the default) or global.
	Scope string `yaml:"scope"`
	// Norm, for structured, is l1 (the default) or l2.
	Norm string `yaml:"norm"`
	// StartEpoch and EndEpoch may be fractions (0.25: a quarter into the
	// first epoch).
	StartEpoch float64 `yaml:"start_epoch"`
	EndEpoch   float64 `yaml:"end_epoch"`
	EverySteps int     `yaml:"every_steps"` // default 100
	// Shrink, for structured (default true), removes the pruned units
	// from the saved model (prune.Shrink): a smaller, faster network.
	Shrink *bool `yaml:"shrink"`
}

// schedule returns the prune.Schedule of the config for an epoch of
// stepsPerEpoch steps.
func (p *PruneConfig) schedule(epochs, stepsPerEpoch int) (prune.Schedule, error) {
	s := prune.Schedule{Sparsity: p.Sparsity, Begin: int(math.Round(p.StartEpoch * float64(stepsPerEpoch))),
		End: int(math.Round(p.EndEpoch * float64(stepsPerEpoch))), Every: p.EverySteps}
	if s.Every == 0 {
		s.Every = 100
	}
	switch p.Method {
	case "", "magnitude":
		s.Method = prune.MagnitudeMethod
	case "structured":
		s.Method = prune.StructuredMethod
	default:
		return s, fmt.Errorf("prune.method: unknown method %q (want magnitude or structured)", p.Method)
	}
	switch p.Scope {
	case "", "layer":
	case "global":
		s.Scope = prune.Global
	default:
		return s, fmt.Errorf("prune.scope: unknown scope %q (want layer or global)", p.Scope)
	}
	switch p.Norm {
	case "", "l1":
	case "l2":
		s.Norm = prune.L2
	default:
		return s, fmt.Errorf("prune.norm: unknown norm %q (want l1 or l2)", p.Norm)
	}
	switch {
	case !(p.Sparsity > 0 && p.Sparsity < 1):
		return s, fmt.Errorf("prune.sparsity: want a fraction in (0, 1), got %g", p.Sparsity)
	case p.StartEpoch < 0 || p.EverySteps < 0:
		return s, fmt.Errorf("prune: start_epoch and every_steps must not be negative, got %g and %d", p.StartEpoch, p.EverySteps)
	case p.StartEpoch >= float64(epochs) && epochs > 0:
		return s, fmt.Errorf("prune.start_epoch: %g is not before the end of training (epochs: %d), so nothing would be pruned", p.StartEpoch, epochs)
	case p.EndEpoch > float64(epochs):
		return s, fmt.Errorf("prune.end_epoch: %g is after the end of training (epochs: %d)", p.EndEpoch, epochs)
	case p.Shrink != nil && s.Method != prune.StructuredMethod:
		return s, errors.New("prune.shrink: applies to method structured only")
	}
	return s, nil
}

// DataConfig says where the data comes from and how to prepare it.
type DataConfig struct {
	// Source is iris (embedded), fashion-mnist, mnist, csv, parquet or idx.
	Source string `yaml:"source"`
	// Train is the CSV or Parquet file (or directory of Parquet parts), or
	// the directory of an MNIST-format data set (fashion-mnist defaults to
	// $FATHOM_DATA or /usr/share/datasets/fashion-mnist). Its old name,
	// data.path, is accepted with a deprecation line.
	Train string `yaml:"train"`
	// Test, for csv and parquet, is a separate test file; otherwise the
	// test rows are split off Train (old name: data.test_path).
	Test string `yaml:"test"`
	// Label names the target column (csv, parquet).
	Label string `yaml:"label"`
	// Columns lists the feature columns to use, in order (default: all but
	// the label); Ignore lists columns to leave out.
	Columns []string `yaml:"columns"`
	Ignore  []string `yaml:"ignore"`
	// Delimiter is the CSV field separator (default ",").
	Delimiter string `yaml:"delimiter"`
	// Impute is "error" (default) or "mean": what a missing feature value
	// does.
	Impute string `yaml:"impute"`
	// Images, Labels, TestImages, TestLabels are the IDX files of the idx
	// source.
	Images     string `yaml:"images"`
	Labels     string `yaml:"labels"`
	TestImages string `yaml:"test_images"`
	TestLabels string `yaml:"test_labels"`
	// TestFraction is the fraction of the rows held out as the test split
	// when the source has none of its own (default 0.2; old name: a
	// number under data.test). Validation is the fraction
	// of the training rows held out for evaluation after each epoch
	// (default 0: each epoch is evaluated on the test split, as the
	// PyTorch reference scripts do, for the curves only; metrics.csv then
	// names those columns test_*). Early stopping needs a validation
	// split.
	TestFraction *float64 `yaml:"test_fraction"`
	Validation   float64  `yaml:"validation"`
	// SplitSeed fixes the random split independently of the run's seed,
	// so runs with different seeds are scored on the same held-out rows
	// (default: the run's seed).
	SplitSeed *uint64 `yaml:"split_seed"`
	// Stratify keeps the class proportions in every split (default true
	// for classification).
	Stratify *bool `yaml:"stratify"`
	// Standardize centres and scales every feature column with the mean and
	// standard deviation of the training rows; they are saved with the
	// model and applied again at prediction.
	Standardize bool `yaml:"standardize"`
	// Shape is the shape of one example, e.g. [1, 28, 28] for a
	// convolution over one-channel images (default: a flat vector).
	Shape []int `yaml:"shape"`
	// Shuffle draws a new order of the training rows every epoch (default
	// true).
	Shuffle *bool `yaml:"shuffle"`
}

// LossConfig names the loss: cross_entropy (classification; default),
// mse, l1, huber or smooth_l1 (regression). A plain string is the type.
type LossConfig struct {
	Type           string  `yaml:"type"`
	LabelSmoothing float64 `yaml:"label_smoothing"` // cross_entropy
	Delta          float64 `yaml:"delta"`           // huber (default 1)
	Beta           float64 `yaml:"beta"`            // smooth_l1 (default 1)
}

// UnmarshalYAML accepts "loss: mse" as well as a mapping.
func (l *LossConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain LossConfig
	return config.Shorthand(n, &l.Type, (*plain)(l))
}

// OptimizerConfig selects and tunes the optimizer: sgd, adam, adamw,
// rmsprop, adagrad or lbfgs, with PyTorch's argument names and defaults.
// lbfgs is full-batch L-BFGS with the strong-Wolfe line search: each epoch
// is one step of up to max_iter iterations (default 100) over all training
// rows; lr scales the initial step (default 1); weight_decay adds
// (weight_decay/2)·‖W‖² over the weight matrices to the mean loss
// (scikit-learn's LogisticRegression C is 1/(weight_decay·training rows)).
type OptimizerConfig struct {
	Type        string    `yaml:"type"`
	LR          float64   `yaml:"lr"`
	Momentum    float64   `yaml:"momentum"`
	Dampening   float64   `yaml:"dampening"`
	Nesterov    bool      `yaml:"nesterov"`
	WeightDecay *float64  `yaml:"weight_decay"`
	Betas       []float64 `yaml:"betas"`
	Eps         float64   `yaml:"eps"`
	AMSGrad     bool      `yaml:"amsgrad"`
	Alpha       float64   `yaml:"alpha"`
	Centered    bool      `yaml:"centered"`
	LRDecay     float64   `yaml:"lr_decay"`
	// ClipGradNorm and ClipGradValue clip gradients before every step
	// (see train.Options); 0 means no clipping.
	ClipGradNorm  float64 `yaml:"clip_grad_norm"`
	ClipGradValue float64 `yaml:"clip_grad_value"`
	// MaxIter, HistorySize, TolGrad and TolChange tune lbfgs (PyTorch's
	// max_iter, history_size, tolerance_grad and tolerance_change).
	MaxIter     int     `yaml:"max_iter"`
	HistorySize int     `yaml:"history_size"`
	TolGrad     float64 `yaml:"tolerance_grad"`
	TolChange   float64 `yaml:"tolerance_change"`
}

// UnmarshalYAML accepts "optimizer: adam" as well as a mapping.
func (o *OptimizerConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain OptimizerConfig
	return config.Shorthand(n, &o.Type, (*plain)(o))
}

// ScheduleConfig sets the learning rate per epoch: none (default), step
// (step_size, gamma), exponential (gamma) or cosine (t_max, default the
// epoch count; eta_min).
type ScheduleConfig struct {
	Type     string  `yaml:"type"`
	StepSize int     `yaml:"step_size"`
	Gamma    float64 `yaml:"gamma"`
	TMax     int     `yaml:"t_max"`
	EtaMin   float64 `yaml:"eta_min"`
}

// UnmarshalYAML accepts "schedule: cosine" as well as a mapping.
func (s *ScheduleConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain ScheduleConfig
	return config.Shorthand(n, &s.Type, (*plain)(s))
}

// EarlyStoppingConfig mirrors train.EarlyStopping.
type EarlyStoppingConfig struct {
	Monitor  string  `yaml:"monitor"`
	Patience int     `yaml:"patience"`
	MinDelta float64 `yaml:"min_delta"`
}

// OutputConfig says where results go. Dir (default runs/<config name>)
// receives model.safetensors, metrics.csv and curves.png; a relative Dir
// is relative to the working directory.
type OutputConfig struct {
	Dir string `yaml:"dir"`
	// Model overrides the model file's path (default Dir/model.safetensors).
	Model string `yaml:"model"`
	// CheckpointEvery writes Dir/checkpoint.safetensors every that many
	// optimizer steps and after every epoch (0: no checkpoints).
	CheckpointEvery int `yaml:"checkpoint_every"`
	// Resume continues from Dir/checkpoint.safetensors when it exists.
	Resume bool `yaml:"resume"`
	// Plot writes curves.png (default true); Metrics writes metrics.csv
	// (default true).
	Plot    *bool `yaml:"plot"`
	Metrics *bool `yaml:"metrics"`
}

// DistributedConfig holds the data-parallel options of a distributed job
// (package ddp's Options, under PyTorch DistributedDataParallel's names).
type DistributedConfig struct {
	// BucketCapMB is the largest gradient bucket in MiB (default 25).
	BucketCapMB *float64 `yaml:"bucket_cap_mb"`
	// FirstBucketMB is the size of the first bucket in MiB (default 1).
	FirstBucketMB *float64 `yaml:"first_bucket_mb"`
	// FindUnusedParameters allows parameters that take no part in the
	// loss of a step; without it such a parameter stops the job, named.
	FindUnusedParameters bool `yaml:"find_unused_parameters"`
	// BroadcastBuffers copies rank 0's buffers (BatchNorm's running
	// statistics) to every worker after each step (default true); false
	// keeps each worker's own.
	BroadcastBuffers *bool `yaml:"broadcast_buffers"`
	// SyncBatchNorm normalizes every BatchNorm with the statistics of the
	// global batch, summed over the workers (PyTorch's SyncBatchNorm).
	SyncBatchNorm bool `yaml:"sync_batchnorm"`
	// Compression sends the gradients as 16-bit floats: "none" (default),
	// "fp16" or "bf16" (ddp.Options.Compression), for slow links.
	Compression string `yaml:"compression"`
	// ShardOptimizer is ZeRO stage 1: each worker keeps and updates the
	// optimizer state of 1/N of the parameters (the gradients are
	// reduce-scattered, the updated parameters all-gathered). Unset, it is
	// on when every worker runs on one machine and the job asks for
	// nothing it does not support (see useShardOptimizer): there it is
	// faster than every worker updating all the parameters.
	ShardOptimizer *bool `yaml:"shard_optimizer"`
	// Timeline, if set, is a PNG file where rank 0 draws its last steps'
	// backward pass and gradient all-reduces on one time axis.
	Timeline string `yaml:"timeline"`
	// Deterministic trains bitwise the same weights on 1, 2, 4, ...
	// workers (and in one process): every global batch is cut into
	// MicroShards micro-shards whose gradients are summed in one fixed
	// tree (train.Options.MicroShards).
	Deterministic bool `yaml:"deterministic"`
	// MicroShards is the number of micro-shards of deterministic
	// training: a power of two, a multiple of the number of workers
	// (default 4: the same weights on 1, 2 or 4 workers).
	MicroShards int `yaml:"micro_shards"`
	// Strategy is how the workers train together: "ddp" (the default:
	// data parallel) or "ps" (parameter servers; see paramserver.go).
	Strategy string `yaml:"strategy"`
	// Servers is the number of parameter servers (strategy ps, default
	// 1): the last Servers ranks, or ServerRanks.
	Servers int `yaml:"servers"`
	// ServerRanks names the ranks that serve (strategy ps), e.g. one per
	// host; rank 0 stays a worker.
	ServerRanks []int `yaml:"server_ranks"`
	// Staleness makes a parameter server asynchronous with this bound in
	// steps (stale-synchronous parallel); unset: synchronous.
	Staleness *int `yaml:"staleness"`
	// Stages, MicroBatches, Schedule and Split are the pipeline's
	// (strategy pipeline; see pipeline.go): the number of stages (one
	// rank each; default the number of ranks), of micro-batches per batch
	// (default 1: naive model parallelism), "gpipe" (default) or "1f1b",
	// and the indices of the layers that begin stages 1..K-1 (default:
	// balanced by measured cost).
	Stages       int    `yaml:"stages"`
	MicroBatches int    `yaml:"micro_batches"`
	Schedule     string `yaml:"schedule"`
	Split        []int  `yaml:"split"`
	// MemoryLimitMB bounds the training state one rank may hold (MiB):
	// parameters, gradients, optimizer state and, for a pipeline stage,
	// activations. 0: no limit.
	MemoryLimitMB float64 `yaml:"memory_limit_mb"`
}

// shardAsked reports whether distributed.shard_optimizer is set to true.
func (d DistributedConfig) shardAsked() bool { return d.ShardOptimizer != nil && *d.ShardOptimizer }

// shardClash names what the config asks for that a sharded optimizer does
// not support, or returns "".
func (c *Config) shardClash() string {
	switch {
	case c.Distributed.Deterministic:
		return "distributed.deterministic"
	case c.Distributed.compresses():
		return "distributed.compression"
	case c.Optimizer.ClipGradNorm != 0 || c.Optimizer.ClipGradValue != 0:
		return "gradient clipping (the gradients are sharded)"
	case c.Output.CheckpointEvery > 0 || c.Output.Resume:
		return "checkpoints (output.checkpoint_every, output.resume: a sharded optimizer state is not saved yet)"
	}
	return ""
}

// useShardOptimizer reports whether a data-parallel job of worldSize
// workers, localWorldSize of them on this machine (-1: unknown), shards
// its optimizer (ZeRO-1): as distributed.shard_optimizer says, or, when
// it is unset, if every worker runs on this machine and the job asks for
// nothing the sharded optimizer does not support (a clash, pruning,
// 16-bit matrix products with their loss scaling, optimizers other than
// the element-wise mini-batch ones). On one machine the workers' shared
// memory makes the reduce-scatter and all-gather as cheap as the
// all-reduce, and each worker updates 1/N of the parameters instead of
// all of them; across machines the choice is left to the config.
func (c *Config) useShardOptimizer(worldSize, localWorldSize int) bool {
	if d := c.Distributed.ShardOptimizer; d != nil {
		return *d
	}
	if worldSize < 2 || localWorldSize != worldSize || c.shardClash() != "" || c.Prune != nil {
		return false
	}
	if p, err := tensor.ParsePrecision(c.Precision); err != nil || p != tensor.PrecisionFloat32 {
		return false
	}
	kind, err := c.optimizerKind()
	return err == nil && slices.Contains([]string{"sgd", "adam", "adamw", "rmsprop", "adagrad"}, kind)
}

// compresses reports whether the gradients travel compressed (a valid
// distributed.compression other than none).
func (d DistributedConfig) compresses() bool {
	c, err := ddp.ParseCompression(d.Compression)
	return err == nil && c != ddp.NoCompression
}

// microShards returns train.Options.MicroShards: 0 unless deterministic.
func (d DistributedConfig) microShards() int {
	switch {
	case !d.Deterministic:
		return 0
	case d.MicroShards == 0:
		return 4
	}
	return d.MicroShards
}

// traceSteps is how many of its last steps a data-parallel job times, for
// the overlap it reports and the timeline.
const traceSteps = 64

// options returns the ddp.Options the section describes.
func (d DistributedConfig) options() ddp.Options {
	var o ddp.Options
	if d.BucketCapMB != nil {
		o.BucketCapMB = *d.BucketCapMB
	}
	if d.FirstBucketMB != nil {
		o.FirstBucketMB = *d.FirstBucketMB
	}
	o.FindUnusedParameters = d.FindUnusedParameters
	o.KeepLocalBuffers = d.BroadcastBuffers != nil && !*d.BroadcastBuffers
	o.SyncBatchNorm = d.SyncBatchNorm
	o.Trace = traceSteps
	o.Compression, _ = ddp.ParseCompression(d.Compression) // checked by validateDistributed
	return o
}

// validateDistributed checks the distributed section's sizes, locating a
// bad value by its line in root (0 when given with --set).
func (c *Config) validateDistributed(root *yaml.Node) *ConfigError {
	if err := c.validateStrategy(root); err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		v   *float64
	}{
		{"bucket_cap_mb", c.Distributed.BucketCapMB},
		{"first_bucket_mb", c.Distributed.FirstBucketMB},
	} {
		if f.v == nil || (*f.v > 0 && !math.IsInf(*f.v, 1)) {
			continue
		}
		return &ConfigError{Line: valueLine(root, "distributed", f.key),
			Msg: fmt.Sprintf("distributed.%s: want a positive size in MiB, got %g", f.key, *f.v)}
	}
	if _, err := ddp.ParseCompression(c.Distributed.Compression); err != nil {
		return &ConfigError{Line: valueLine(root, "distributed", "compression"),
			Msg: fmt.Sprintf("distributed.compression: want none, fp16 or bf16, got %q", c.Distributed.Compression)}
	}
	if c.Distributed.compresses() && c.Distributed.Deterministic {
		return &ConfigError{Line: valueLine(root, "distributed", "compression"),
			Msg: "distributed.compression and distributed.deterministic do not go together (compressed sums are rounded at each step)"}
	}
	if c.Distributed.shardAsked() {
		if clash := c.shardClash(); clash != "" {
			return &ConfigError{Line: valueLine(root, "distributed", "shard_optimizer"),
				Msg: "distributed.shard_optimizer does not go together with " + clash}
		}
	}
	if c.Distributed.SyncBatchNorm && c.Distributed.Deterministic {
		return &ConfigError{Line: valueLine(root, "distributed", "sync_batchnorm"),
			Msg: "distributed.sync_batchnorm and distributed.deterministic do not go together (deterministic training normalizes each micro-shard on its own)"}
	}
	if m := c.Distributed.MicroShards; m != 0 {
		line := valueLine(root, "distributed", "micro_shards")
		switch {
		case m < 0 || m&(m-1) != 0 || m > 1<<16:
			return &ConfigError{Line: line, Msg: fmt.Sprintf("distributed.micro_shards: want a power of two (1, 2, 4, ... 65536), got %d", m)}
		case !c.Distributed.Deterministic:
			return &ConfigError{Line: line, Msg: "distributed.micro_shards applies only with distributed.deterministic: true"}
		}
	}
	return nil
}

// valueLine returns the line of the value at path in the mapping root, or
// 0 when it is not there or has no line.
func valueLine(root *yaml.Node, path ...string) int {
	n := root
	for _, key := range path {
		var next *yaml.Node
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return 0
		}
		n = next
	}
	return n.Line
}

// ConfigError is an error in a config, located by file, line and key
// when known: the config layer's one error type (internal/config).
type ConfigError = config.Error

// Load reads a config file and applies overrides ("a.b=value", the
// value parsed as YAML, as given to `fathom train --set`).
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

// configSpec is what internal/config checks a training config against:
// its keys, the sizes and shorthands the hook checks, and the renamed
// keys (see docs/config.md).
var configSpec = config.Spec{
	Type: reflect.TypeFor[Config](),
	Hook: keyHook,
	What: "data, model, loss, ...",
	Renames: []config.Rename{
		// A number under data.test is the fraction held out; a path
		// is the new name of data.test_path (moved after it).
		{Old: "data.test", New: "data.test_fraction", When: isNumber},
		{Old: "data.test_path", New: "data.test"},
		{Old: "data.path", New: "data.train"},
	},
}

// isNumber says a YAML value is an integer or a float.
func isNumber(v *yaml.Node) bool {
	t := v.ShortTag()
	return v.Kind == yaml.ScalarNode && (t == "!!int" || t == "!!float")
}

// ParseConfig parses a config from YAML text; name is used in errors.
// Relative data paths resolve against the working directory (Load
// resolves them against the file's directory).
func ParseConfig(text []byte, name string, overrides []string) (*Config, error) {
	root, err := config.Parse(text, name, overrides, configSpec)
	if err != nil {
		return nil, err
	}
	return fromTree(root, name)
}

// fromTree decodes and validates a checked config tree.
func fromTree(root *yaml.Node, name string) (*Config, error) {
	var c Config
	if err := root.Decode(&c); err != nil {
		return nil, &ConfigError{File: name, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	c.file = name
	c.text, _ = yaml.Marshal(root) // with the overrides, for the dashboard
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "model" && root.Content[i+1].Kind == yaml.SequenceNode {
			for _, l := range root.Content[i+1].Content {
				c.modelLines = append(c.modelLines, l.Line)
			}
		}
	}
	if err := c.validateDistributed(root); err != nil {
		err.File = name
		return nil, err
	}
	if err := c.validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.File = name
			return nil, ce
		}
		return nil, &ConfigError{File: name, Msg: err.Error()}
	}
	return &c, nil
}

// checkIntPair checks a size given as one integer or [height, width], so
// that a bad one is reported with its line (nn.IntPair decodes itself
// without knowing of YAML lines).
func checkIntPair(n *yaml.Node, path string) *ConfigError {
	isInt := func(n *yaml.Node) bool {
		var v int
		return n.Kind == yaml.ScalarNode && n.ShortTag() != "!!float" && n.Decode(&v) == nil
	}
	if isInt(n) || n.Tag == "!!null" || (n.Kind == yaml.SequenceNode && len(n.Content) == 2 && isInt(n.Content[0]) && isInt(n.Content[1])) {
		return nil
	}
	return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want an integer or [height, width], got %s", yamltree.Where(path), yamltree.KindName(n))}
}

// DecodeSpecYAML decodes a model spec (input and layers, as the JSON that
// model files hold) from YAML strictly: an unknown key or a bad value is
// an error naming its line.
func DecodeSpecYAML(text []byte) (nn.Spec, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nn.Spec{}, fmt.Errorf("model spec: %w", err)
	}
	var s nn.Spec
	if doc.Kind == 0 {
		return s, nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nn.Spec{}, errors.New("model spec: want one YAML document")
	}
	if err := checkAliases(doc.Content[0]); err != nil {
		return nn.Spec{}, fmt.Errorf("model spec: line %d: %s", err.Line, err.Msg)
	}
	if err := checkKeys(doc.Content[0], reflect.TypeFor[nn.Spec](), ""); err != nil {
		return nn.Spec{}, fmt.Errorf("model spec: line %d: %s", err.Line, err.Msg)
	}
	if err := doc.Content[0].Decode(&s); err != nil {
		return nn.Spec{}, fmt.Errorf("model spec: %w", err)
	}
	return s, nil
}

// task returns the task the loss implies.
// Task returns the job's task, from its loss: classification for
// cross_entropy, regression for the others.
func (c *Config) Task() (metrics.Task, error) { return c.task() }

func (c *Config) task() (metrics.Task, error) {
	switch strings.ToLower(strings.ReplaceAll(c.Loss.Type, "-", "_")) {
	case "", "cross_entropy", "crossentropy", "ce":
		return metrics.Classification, nil
	case "mse", "l1", "mae", "huber", "smooth_l1":
		return metrics.Regression, nil
	}
	return 0, fmt.Errorf("loss: unknown type %q (want cross_entropy, mse, l1, huber or smooth_l1)", c.Loss.Type)
}

// validate checks values (keys were checked against the types already).
func (c *Config) validate() error {
	d := &c.Data
	switch d.Source {
	case "":
		return errors.New("data.source is missing (want iris, fashion-mnist, mnist, csv, parquet or idx)")
	case "iris", "fashion-mnist", "mnist":
	case "csv", "parquet":
		if d.Train == "" {
			return fmt.Errorf("data.train is required for source %s", d.Source)
		}
	case "idx":
		if d.Images == "" || d.Labels == "" {
			return errors.New("data.images and data.labels are required for source idx")
		}
	default:
		return fmt.Errorf("data.source: unknown source %q (want iris, fashion-mnist, mnist, csv, parquet or idx)", d.Source)
	}
	if d.TestFraction != nil && (*d.TestFraction < 0 || *d.TestFraction >= 1) {
		return fmt.Errorf("data.test_fraction: fraction %g is outside [0, 1)", *d.TestFraction)
	}
	if d.Validation < 0 || d.Validation >= 1 {
		return fmt.Errorf("data.validation: fraction %g is outside [0, 1)", d.Validation)
	}
	switch d.Impute {
	case "", "error", "mean":
	default:
		return fmt.Errorf("data.impute: %q, want error or mean", d.Impute)
	}
	if len([]rune(d.Delimiter)) > 1 {
		return fmt.Errorf("data.delimiter: %q is more than one character", d.Delimiter)
	}
	for _, s := range d.Shape {
		if s <= 0 {
			return fmt.Errorf("data.shape: %v has a non-positive size", d.Shape)
		}
	}
	if len(c.Model) == 0 {
		return errors.New("model: the layer list is empty")
	}
	if _, err := c.task(); err != nil {
		return err
	}
	if c.Epochs < 1 {
		return fmt.Errorf("epochs: want at least 1, got %d", c.Epochs)
	}
	if c.BatchSize < 1 {
		return fmt.Errorf("batch_size: want at least 1, got %d", c.BatchSize)
	}
	kind, err := c.optimizerKind()
	if err != nil {
		return err
	}
	if kind == "lbfgs" {
		if err := c.checkLBFGS(); err != nil {
			return err
		}
	}
	if c.Optimizer.ClipGradNorm < 0 || c.Optimizer.ClipGradValue < 0 {
		return fmt.Errorf("optimizer.clip_grad_norm and clip_grad_value: must not be negative, got %g and %g",
			c.Optimizer.ClipGradNorm, c.Optimizer.ClipGradValue)
	}
	if c.Optimizer.LR < 0 {
		return fmt.Errorf("optimizer.lr: must be positive, got %g", c.Optimizer.LR)
	}
	if b := c.Optimizer.Betas; b != nil && len(b) != 2 {
		return fmt.Errorf("optimizer.betas: want two numbers, got %v", b)
	}
	switch c.Schedule.Type {
	case "", "none", "constant":
	case "step":
		if c.Schedule.StepSize < 1 {
			return fmt.Errorf("schedule.step_size: want at least 1, got %d", c.Schedule.StepSize)
		}
	case "exponential", "cosine":
	default:
		return fmt.Errorf("schedule.type: unknown schedule %q (want none, step, exponential or cosine)", c.Schedule.Type)
	}
	if c.Schedule.Gamma < 0 || c.Schedule.TMax < 0 || c.Schedule.EtaMin < 0 {
		return fmt.Errorf("schedule: gamma, t_max and eta_min must not be negative, got %g, %d and %g",
			c.Schedule.Gamma, c.Schedule.TMax, c.Schedule.EtaMin)
	}
	if c.EarlyStopping.Patience < 0 {
		return fmt.Errorf("early_stopping.patience: must not be negative, got %d", c.EarlyStopping.Patience)
	}
	if c.EarlyStopping.Patience > 0 && d.Validation == 0 {
		return errors.New("early_stopping needs a validation split to select the model on; without one it would " +
			"stop on the test split: set data.validation (e.g. 0.1, the fraction of the training rows held out)")
	}
	if c.Output.CheckpointEvery < 0 {
		return fmt.Errorf("output.checkpoint_every: must not be negative, got %d", c.Output.CheckpointEvery)
	}
	if _, _, err := c.precision(); err != nil {
		return err
	}
	if c.Prune != nil {
		if _, err := c.Prune.schedule(c.Epochs, 1); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) optimizerKind() (string, error) {
	k := strings.ToLower(c.Optimizer.Type)
	switch k {
	case "sgd", "adam", "adamw", "rmsprop", "adagrad", "lbfgs":
		return k, nil
	case "":
		return "", errors.New("optimizer.type is missing (want sgd, adam, adamw, rmsprop, adagrad or lbfgs)")
	}
	return "", fmt.Errorf("optimizer.type: unknown optimizer %q (want sgd, adam, adamw, rmsprop, adagrad or lbfgs)", c.Optimizer.Type)
}

// lossFunc builds the configured loss.
func (c *Config) lossFunc() train.LossFunc {
	l := c.Loss
	switch strings.ToLower(strings.ReplaceAll(l.Type, "-", "_")) {
	case "mse":
		return train.MSE()
	case "l1", "mae":
		return func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
			return nn.L1Loss(out, b.Targets, nn.ReduceMean)
		}
	case "huber":
		d := l.Delta
		if d == 0 {
			d = 1
		}
		return func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
			return nn.HuberLoss(out, b.Targets, d, nn.ReduceMean)
		}
	case "smooth_l1":
		beta := l.Beta
		if beta == 0 {
			beta = 1
		}
		return func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
			return nn.SmoothL1Loss(out, b.Targets, beta, nn.ReduceMean)
		}
	}
	return train.CrossEntropy(nn.ClassOptions{LabelSmoothing: l.LabelSmoothing})
}

// newOptimizer builds the configured optimizer over params.
func (c *Config) newOptimizer(params []*tensor.Tensor) (optim.Optimizer, error) {
	o := c.Optimizer
	kind, err := c.optimizerKind()
	if err != nil {
		return nil, err
	}
	wd := func(def float64) float64 {
		if o.WeightDecay != nil {
			return *o.WeightDecay
		}
		return def
	}
	var b1, b2 float64
	if len(o.Betas) == 2 {
		b1, b2 = o.Betas[0], o.Betas[1]
	}
	var opt optim.Optimizer
	switch kind {
	case "sgd":
		if o.LR == 0 {
			return nil, errors.New("optimizer.lr is required for sgd")
		}
		opt, err = optim.NewSGD(params, optim.SGDOptions{LR: o.LR, Momentum: o.Momentum, Dampening: o.Dampening, WeightDecay: wd(0), Nesterov: o.Nesterov})
	case "adam":
		opt, err = optim.NewAdam(params, optim.AdamOptions{LR: o.LR, Beta1: b1, Beta2: b2, Eps: o.Eps, WeightDecay: wd(0), AMSGrad: o.AMSGrad})
	case "adamw":
		opt, err = optim.NewAdamW(params, optim.AdamOptions{LR: o.LR, Beta1: b1, Beta2: b2, Eps: o.Eps, WeightDecay: wd(0.01), AMSGrad: o.AMSGrad})
	case "rmsprop":
		opt, err = optim.NewRMSprop(params, optim.RMSpropOptions{LR: o.LR, Alpha: o.Alpha, Eps: o.Eps, WeightDecay: wd(0), Momentum: o.Momentum, Centered: o.Centered})
	case "adagrad":
		opt, err = optim.NewAdagrad(params, optim.AdagradOptions{LR: o.LR, LRDecay: o.LRDecay, WeightDecay: wd(0), Eps: o.Eps})
	}
	if err != nil {
		return nil, fmt.Errorf("optimizer: %w", err)
	}
	return opt, nil
}

// newSchedule builds the configured learning-rate schedule over opt, in
// epochs (nil for none): step and exponential are optim's StepLR and
// ExponentialLR; cosine anneals from the optimizer's rate to eta_min over
// t_max epochs (default: all of them) and stays there, which is optim's
// CosineWithWarmup without warm-up.
func (c *Config) newSchedule(opt optim.Optimizer) (*optim.Schedule, error) {
	s := c.Schedule
	gamma := s.Gamma
	if gamma == 0 {
		gamma = 0.1
	}
	var sched *optim.Schedule
	var err error
	switch s.Type {
	case "step":
		sched, err = optim.NewStepLR(opt, s.StepSize, gamma)
	case "exponential":
		sched, err = optim.NewExponentialLR(opt, gamma)
	case "cosine":
		tmax := s.TMax
		if tmax == 0 {
			tmax = c.Epochs
		}
		sched, err = optim.NewCosineWithWarmup(opt, 0, tmax, s.EtaMin)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, &ConfigError{File: c.file, Msg: "schedule: " + err.Error()}
	}
	return sched, nil
}

// EvalSplit names the split evaluated after every epoch: "val" when
// data.validation holds out validation rows, "test" otherwise (the test
// split is then scored every epoch, for the curves only). Metrics of that
// split are named with it: val_loss or test_loss.
func (c *Config) EvalSplit() string {
	if c.Data.Validation > 0 {
		return "val"
	}
	return "test"
}

// evalSplitName is EvalSplit spelled out for messages.
func (c *Config) evalSplitName() string {
	if c.EvalSplit() == "val" {
		return "validation"
	}
	return "test"
}

// dataPath resolves a data path against the config's directory.
func (c *Config) dataPath(p string) string {
	if p == "" || filepath.IsAbs(p) || c.dir == "" {
		return p
	}
	return filepath.Join(c.dir, p)
}

// Summary returns the config as plain data for a model file's info.
func (c *Config) Summary() map[string]any {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.Encode(c)
	var m map[string]any
	yaml.Unmarshal(b.Bytes(), &m)
	return m
}

// buildModel builds the layer list for the input shape. A layer that
// cannot be built gives an error naming the config file, the layer's line
// and index and what is wrong, e.g.
//
//	iris.yaml:12: model[2] (linear): input has 16 features but in=32
func (c *Config) buildModel(input []int, rng *tensor.RNG) (*nn.Sequential, []int, error) {
	net, out, err := nn.Build(c.Model, input, rng)
	if err == nil {
		return net, out, nil
	}
	var se *nn.SpecError
	if !errors.As(err, &se) {
		return nil, nil, &ConfigError{File: c.file, Msg: "model: " + err.Error()}
	}
	path := "model" + strings.TrimPrefix(se.Path, "layers")
	line := 0
	var idx int
	if _, serr := fmt.Sscanf(se.Path, "layers[%d]", &idx); serr == nil && idx >= 0 && idx < len(c.modelLines) {
		line = c.modelLines[idx]
	}
	msg := fmt.Sprintf("%s: %v", path, se.Err)
	if se.Type != "" {
		msg = fmt.Sprintf("%s (%s): %v", path, se.Type, se.Err)
	}
	return nil, nil, &ConfigError{File: c.file, Line: line, Msg: msg}
}

// checkAliases bounds the config's alias-expanded size
// (yamltree.CheckAliases), naming the line that crosses it.
func checkAliases(root *yaml.Node) *ConfigError {
	if e := yamltree.CheckAliases(root, config.MaxExpandedNodes); e != nil {
		return &ConfigError{Line: e.Line, Msg: e.Msg}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkKeys walks node against Go type t (yamltree.CheckKeys) and reports
// the first key that t has no field for, with its line and dotted path.
// Sizes (nn.IntPair) are one integer or two; a type with a Type field
// that decodes itself may be given as its type alone ("loss: mse").
func checkKeys(n *yaml.Node, t reflect.Type, path string) *ConfigError {
	return configError(yamltree.CheckKeys(n, t, path, keyHook))
}

// keyHook checks sizes (nn.IntPair: one integer or two) and lets a type
// with a Type field that decodes itself be given as its type alone
// ("loss: mse").
func keyHook(n *yaml.Node, t reflect.Type, path string) (*yamltree.Error, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[nn.IntPair]() {
		if e := checkIntPair(n, path); e != nil {
			return &yamltree.Error{Line: e.Line, Msg: e.Msg}, true
		}
		return nil, true
	}
	if t.Kind() == reflect.Struct && n.Kind == yaml.ScalarNode {
		if _, ok := t.FieldByName("Type"); ok && reflect.PointerTo(t).Implements(unmarshalerType) {
			return nil, true // shorthand: "loss: mse"
		}
	}
	return nil, false
}

// configError turns a tree error into the config's error (nil for nil).
func configError(e *yamltree.Error) *ConfigError {
	if e == nil {
		return nil
	}
	return &ConfigError{Line: e.Line, Msg: e.Msg}
}
