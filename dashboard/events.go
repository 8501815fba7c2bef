package dashboard

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"time"
)

// RunInfo describes a job: what it runs, where, and on what.
type RunInfo struct {
	// Title names the job, e.g. the config file.
	Title string `json:"title"`
	// Kind is the kind of job ("train").
	Kind string `json:"kind,omitempty"`
	// Config is the job's configuration as text (YAML).
	Config string `json:"config,omitempty"`
	// Model is a summary of the model (its layers and parameter count).
	Model string `json:"model,omitempty"`
	// Parameters counts the model's parameters.
	Parameters int `json:"parameters,omitempty"`
	// Task is "classification" or "regression"; Headline names the metric
	// the page plots per epoch ("accuracy", "rmse").
	Task     string `json:"task,omitempty"`
	Headline string `json:"headline,omitempty"`
	// EvalSplit names the split evaluated after each epoch ("val", "test").
	EvalSplit string `json:"eval_split,omitempty"`
	// Epochs is the number of epochs planned; StepsPerEpoch the optimizer
	// steps in each (0 when not yet known).
	Epochs        int `json:"epochs,omitempty"`
	StepsPerEpoch int `json:"steps_per_epoch,omitempty"`
	// TrainRows is the number of training examples.
	TrainRows int `json:"train_rows,omitempty"`
	// WorldSize is the number of processes of a distributed job (1 or 0
	// for one process).
	WorldSize int `json:"world_size,omitempty"`
	// Machine is where the job (its rank 0) runs.
	Machine Machine `json:"machine"`
	// Started is when the job started; the zero time means when the
	// Board was made.
	Started time.Time `json:"started"`
	// Trials is the number of trials of a hyperparameter search (Kind
	// "tune"), Mode "max" or "min": the direction of its metric, which
	// Headline names.
	Trials int    `json:"trials,omitempty"`
	Mode   string `json:"mode,omitempty"`
}

// Machine describes the computer a job runs on.
type Machine struct {
	Hostname   string `json:"hostname,omitempty"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu,omitempty"` // the processor's model name
	CPUs       int    `json:"cpus"`          // logical CPUs
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
}

// LocalMachine describes the computer this process runs on.
func LocalMachine() Machine {
	host, _ := os.Hostname()
	return Machine{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: cpuModel(),
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
}

// cpuModel reads the processor's model name where the system tells it
// (Linux's /proc/cpuinfo); "" elsewhere.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan() && n < 200; n++ {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Step is one training step (optimizer update), or, after downsampling,
// the mean of N neighbouring steps ending at Step.
type Step struct {
	Step  int `json:"step"`  // optimizer steps so far in the run, from 1
	Epoch int `json:"epoch"` // from 1
	// Batch and Batches place the step within its epoch.
	Batch   int `json:"batch,omitempty"`
	Batches int `json:"batches,omitempty"`
	// Loss is the batch's mean loss.
	Loss float64 `json:"loss"`
	// LR is the learning rate of the step.
	LR float64 `json:"lr"`
	// SamplesPerSec is the training throughput so far in the epoch.
	SamplesPerSec float64 `json:"samples_per_sec"`
	// Compute, Comm and Data split the step's time into computation,
	// communication (gradient all-reduce) and data loading, in seconds;
	// zero when not measured.
	Compute float64 `json:"compute,omitempty"`
	Comm    float64 `json:"comm,omitempty"`
	Data    float64 `json:"data,omitempty"`
	// T is the time of the step in seconds since the run started; the
	// Board sets it when it is zero.
	T float64 `json:"t"`
	// N is the number of steps this point stands for (1 unless merged).
	N int `json:"n"`
}

// Epoch is the record of a finished epoch.
type Epoch struct {
	Epoch int `json:"epoch"` // from 1
	// Steps is the number of optimizer steps so far in the run.
	Steps int `json:"steps"`
	// Train holds the training metrics measured during the epoch, Eval
	// those of the evaluation split after it (nil without one), by name:
	// "loss", "accuracy", "rmse". Non-finite values are dropped.
	Train map[string]float64 `json:"train"`
	Eval  map[string]float64 `json:"eval,omitempty"`
	LR    float64            `json:"lr"`
	// Seconds is the training pass's wall time, EvalSeconds the
	// evaluation's.
	Seconds     float64 `json:"seconds"`
	EvalSeconds float64 `json:"eval_seconds"`
	// T is the time the epoch ended in seconds since the run started; the
	// Board sets it when it is zero.
	T float64 `json:"t"`
}

// Worker is the state of one process of a distributed job.
type Worker struct {
	Rank          int       `json:"rank"`
	Host          string    `json:"host,omitempty"`
	Step          int       `json:"step"`
	Epoch         int       `json:"epoch"`
	SamplesPerSec float64   `json:"samples_per_sec"`
	LastSeen      time.Time `json:"last_seen"`
}

// Status is how a run ended.
type Status struct {
	Done  bool    `json:"done"`
	Error string  `json:"error,omitempty"`
	T     float64 `json:"t,omitempty"` // seconds since the start
}

// Trial is one trial of a hyperparameter search (`fathom tune`).
type Trial struct {
	ID     int          `json:"id"`
	Params []TrialParam `json:"params"`
	// Status is "running", "done", "stopped" (early, by ASHA) or
	// "failed".
	Status string `json:"status"`
	// Metric is the searched metric (the run's Headline) when known.
	Metric  *float64 `json:"metric"`
	Epochs  int      `json:"epochs"`
	Seconds float64  `json:"seconds"`
	// Rank is the process that runs the trial.
	Rank  int    `json:"rank"`
	Error string `json:"error,omitempty"`
}

// TrialParam is one searched key of a trial and its value (YAML text).
type TrialParam struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Partition is one input partition of a batch prediction (`fathom
// predict MODEL INPUT... --out DIR`).
type Partition struct {
	// Name is the partition's path relative to its input.
	Name string `json:"name"`
	// Rank is the worker that predicts it.
	Rank int `json:"rank"`
	// Status is "running", "done", "skipped" (its output existed) or
	// "failed".
	Status string `json:"status"`
	// Rows scored and Errors (rows that failed) so far, and the seconds
	// since the partition started.
	Rows    int64   `json:"rows"`
	Errors  int64   `json:"errors"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}
