// Package job runs the training jobs of `fathom train`: a job is a YAML
// file (Config) that names the data, the model's layers, the loss, the
// optimizer and its schedule, the loop's settings and the output
// directory. Run loads and splits the data (LoadData), builds the model,
// optimizer, loss and schedule from the config, trains with a
// train.Trainer (full-batch L-BFGS, optimizer type lbfgs, as its
// train.FullBatch step), scores the test split and writes
// model.safetensors (modelfile.Model, which records
// the data and split it was trained on: UseTrainedSplit and
// CheckTrainedOn score it again on the same held-out rows), metrics.csv
// and curves.png (runlog, runlog/plot). What `fathom train` prints comes
// from here too: Config.EpochSummary and Config.EpochLine after each
// epoch, Result.FinalSummary and Result.FinalLine (the --json line) at the
// end.
//
//	data:                       # iris | fashion-mnist | mnist | csv | parquet | idx
//	  source: csv
//	  train: data/linear.csv    # relative to the config file
//	  label: y
//	  test_fraction: 0.2        # held-out fraction when the source has no test split
//	  validation: 0.1           # evaluated every epoch (default 0: the test split, for the curves)
//	  standardize: true
//	  shape: [1, 28, 28]        # example shape for convolutions
//	model:                      # nn layer specs; sizes are inferred
//	  - {type: linear, out: 1}
//	loss: mse                   # cross_entropy | mse | l1 | huber | smooth_l1
//	optimizer: {type: sgd, lr: 0.1}   # sgd | adam | adamw | rmsprop | adagrad | lbfgs
//	schedule: {type: step, step_size: 10, gamma: 0.5}   # step | exponential | cosine
//	epochs: 100
//	batch_size: 32
//	seed: 1
//	early_stopping: {monitor: val_loss, patience: 5}   # needs data.validation
//	output: {dir: runs/linear, checkpoint_every: 100, resume: true}
//
// Every key is checked against these types: an unknown key, anywhere, is
// a *ConfigError naming the file, line and key (internal/config reads,
// bounds and checks the text for train, ml fit and tune alike; renamed
// keys are listed in docs/config.md). Load applies
// overrides such as "optimizer.lr=0.05" or "model.0.out=32" (values are
// YAML), as `fathom train --set` does:
//
//	c, err := job.Load("examples/iris.yaml", []string{"epochs=10"})
//	if err != nil { ... }
//	res, err := job.Run(ctx, c, job.RunOptions{Log: os.Stderr})
//	fmt.Println(res.Test.Accuracy, res.ModelPath)
//
// The schedules are package optim's, counted in epochs: step is StepLR,
// exponential is ExponentialLR and cosine (t_max, default the epoch count;
// eta_min) is CosineWithWarmup without warm-up, which stays at eta_min
// after t_max.
//
// # Distributed
//
// When the environment names several workers (WORLD_SIZE > 1, as `fathom
// run -n N` and torchrun set it), Run joins their process group and trains
// one model with train.DataParallel: batch_size is the global batch and
// must divide by N, evaluation is sharded with its sums reduced, and only
// rank 0 writes the files and logs (Result.Main). Result.WeightsSHA256
// fingerprints the trained weights either way (WeightsSHA256).
package job
