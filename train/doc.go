// Package train is fathom's training loop and the engine of `fathom
// train`: a Trainer that runs epochs of mini-batch steps over a
// data.Loader, evaluates after every epoch, tracks metrics, stops early,
// writes checkpoints and resumes from them exactly; YAML job configs; and
// model files that rebuild a network without Go code.
//
// # Trainer
//
// A Trainer takes a model (any nn.Layer), an optimizer (optim.Optimizer),
// loaders and a task:
//
//	tr, err := train.New(train.Options{
//		Model: net, Optimizer: opt, Epochs: 5,
//		Train: trainLoader, Eval: testLoader, // Task: Classification by default
//		EarlyStopping:  train.EarlyStopping{Monitor: "val_loss", Patience: 3},
//		CheckpointPath: "run.ckpt", CheckpointEvery: 500,
//		Hooks: train.Hooks{EpochEnd: func(r train.EpochResult) error {
//			fmt.Println(r.Epoch, r.Train.Loss, r.Eval.Accuracy)
//			return nil
//		}},
//	})
//	history, err := tr.Fit(ctx)
//
// Each step runs the model in training mode (SetTraining(true)), the loss
// (CrossEntropy for classification, MSE for regression, or any LossFunc),
// Backward and the optimizer step; a NaN or infinite loss stops Fit with a
// *NonFiniteLossError naming the epoch and batch. Evaluation runs in
// evaluation mode on NoGrad inputs, so no graph is recorded. Metrics
// (Metrics) are the mean loss and accuracy (classification) or RMSE
// (regression). A Schedule sets the learning rate per epoch (StepDecay,
// ExponentialDecay, CosineDecay). Hooks report progress (EpochStart, Batch,
// EpochEnd).
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
// # Model files
//
// A model file is one safetensors file: the weights are its tensors (a
// PyTorch state dict, loadable by safetensors.torch.load_file) and the
// architecture is JSON in its __metadata__ under "fathom.architecture":
// the nn.Spec (input shape and layer list), the task, the class names,
// the feature columns and the standardization fitted on the training
// data. One file keeps weights and architecture together and is replaced
// atomically; a truncated or corrupted file fails the safetensors checks
// with an error naming it. Model.Save writes one, LoadModel rebuilds the
// network and loads it, and Model.Predict and Model.Evaluate apply it to
// tables of raw features.
//
// # Configs
//
// A Config is a training job in YAML (see the examples directory):
//
//	data:                       # iris | fashion-mnist | mnist | csv | parquet | idx
//	  source: csv
//	  path: data/linear.csv     # relative to the config file
//	  label: y
//	  test: 0.2                 # held-out fraction when the source has no test split
//	  validation: 0             # evaluated every epoch (default: the test split)
//	  standardize: true
//	  shape: [1, 28, 28]        # example shape for convolutions
//	model:                      # nn layer specs; sizes are inferred
//	  - {type: linear, out: 1}
//	loss: mse                   # cross_entropy | mse | l1 | huber | smooth_l1
//	optimizer: {type: sgd, lr: 0.1}   # sgd | adam | adamw | rmsprop | adagrad
//	schedule: {type: step, step_size: 10, gamma: 0.5}
//	epochs: 100
//	batch_size: 32
//	seed: 1
//	early_stopping: {monitor: val_loss, patience: 5}
//	output: {dir: runs/linear, checkpoint_every: 100, resume: true}
//
// Every key is checked against these types: an unknown key, anywhere, is
// a *ConfigError naming the file, line and key. LoadConfig applies
// overrides such as "optimizer.lr=0.05" or "model.0.out=32" (values are
// YAML). Run executes a config: it loads and splits the data, builds and
// trains the model, scores the test split and writes model.safetensors,
// metrics.csv and curves.png into the output directory.
package train
