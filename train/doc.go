// Package train is fathom's training loop: a Trainer that runs epochs of
// mini-batch steps over a data.Loader, evaluates after every epoch, tracks
// metrics, stops early, writes checkpoints and resumes from them exactly.
// The YAML jobs of `fathom train` are package train/job; the trained model
// and the evaluation loop are package modelfile; metrics are package
// metrics and the per-epoch records package runlog.
//
// # Trainer
//
// A Trainer takes a model (any nn.Layer), an optimizer (optim.Optimizer),
// loaders and a task (metrics.Task):
//
//	tr, err := train.New(train.Options{
//		Model: net, Optimizer: opt, Epochs: 5,
//		Train: trainLoader, Eval: testLoader, // Task: metrics.Classification by default
//		EarlyStopping:  train.EarlyStopping{Monitor: "val_loss", Patience: 3},
//		CheckpointPath: "run.ckpt", CheckpointEvery: 500,
//		Hooks: train.Hooks{EpochEnd: func(r runlog.Epoch) error {
//			fmt.Println(r.Epoch, r.Train.Loss, r.Eval.Accuracy)
//			return nil
//		}},
//	})
//	history, err := tr.Fit(ctx)
//
// Each step runs the model in training mode (SetTraining(true)), the loss
// (CrossEntropy for classification, MSE for regression, or any LossFunc),
// Backward and the optimizer step; a NaN or infinite loss stops Fit with a
// *NonFiniteLossError naming the epoch and batch. Evaluation is
// modelfile's evaluation loop: evaluation mode, NoGrad inputs, so no graph
// is recorded. Metrics (metrics.Metrics) are the mean loss and accuracy
// (classification) or RMSE (regression). A schedule of package optim
// (Options.Schedule: optim.NewStepLR, NewExponentialLR,
// NewCosineWithWarmup, ...) counts epochs: the trainer moves it to each
// epoch before the epoch's first step. Hooks report progress (EpochStart,
// Batch, EpochEnd).
//
// # Steps
//
// What differs between the ways of training is only the step, which New
// picks once (step.go): the mini-batch step above; the deterministic
// micro-shard step (Options.MicroShards, deterministic.go); and the step
// of a full-batch optimizer (Options.FullBatch, such as optim.LBFGS),
// which gets the whole training set as one batch and evaluates the loss
// through a closure as often as it needs. The loop around the step
// (position, hooks, NaN/Inf checks, checkpoints, evaluation, early
// stopping) is the same for all, and New is where combinations that
// cannot work are refused.
//
// # Strategy
//
// The per-step work that depends on how training is spread over processes
// goes through a Strategy: Setup before the first step, Batches (this
// process's share of an epoch), AfterBackward (before clipping and the
// optimizer step: where a data-parallel strategy all-reduces gradients),
// ReduceMetrics (combining the metric sums of all processes) and IsMain
// (only the main process writes checkpoints and runs the hooks). Local, the
// default, is one process and leaves everything as it is. A Stepper is a
// strategy that runs a step's forward and backward passes itself
// (Pipeline: the stages of package pipe in a GPipe or 1F1B schedule, with
// data-parallel replicas); New then picks its step, and the loop around it
// is the same.
//
// # Checkpoints
//
// SaveCheckpoint writes one safetensors file (modelfile.WriteCheckpoint,
// temp file and rename) with the model's state dict, the optimizer's
// buffers and JSON state, the random streams of the model's modules
// (dropout), the position (epoch, step) and the loop's running metrics.
// LoadCheckpoint restores all of it; since a Loader's order for an epoch
// depends only on its seed and the epoch, a resumed run yields bit for bit
// the weights and metrics of one never interrupted. Fit writes a
// checkpoint every CheckpointEvery steps, after every epoch and when its
// context is cancelled.
//
// A strategy whose processes each hold a part of the state no other holds
// (Pipeline; later fully sharded or tensor-parallel strategies) implements
// ShardedCheckpoints: every process writes its part under a step-numbered
// name, and the main process commits the step in a manifest between two
// barriers (sharded.go); LoadCheckpoint loads the part of the step the
// manifest names.
package train
