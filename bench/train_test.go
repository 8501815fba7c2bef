package bench

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/train/job"
)

// TestTrainRecipesMatchExamples keeps `fathom bench train` and the example
// configs describing the same jobs.
func TestTrainRecipesMatchExamples(t *testing.T) {
	for model, file := range map[string]string{"mlp": "fashion-mlp.yaml", "cnn": "fashion-cnn.yaml"} {
		bench, err := job.ParseConfig([]byte(TrainRecipes[model]), model, nil)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := job.Load("../examples/"+file, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(bench.Model, ex.Model) || !reflect.DeepEqual(bench.Optimizer, ex.Optimizer) ||
			bench.BatchSize != ex.BatchSize || bench.Epochs != ex.Epochs || bench.Seed != ex.Seed ||
			!reflect.DeepEqual(bench.Data.Shape, ex.Data.Shape) || bench.Loss != ex.Loss {
			t.Errorf("bench recipe %s differs from examples/%s", model, file)
		}
	}
}

// TestTrainOptions checks the refusals of Train before any training.
func TestTrainOptions(t *testing.T) {
	for _, test := range []struct {
		o    TrainOptions
		want string
	}{
		{TrainOptions{Model: "rnn", Epochs: 1}, `bench train: unknown --model "rnn" (want mlp or cnn)`},
		{TrainOptions{Model: "mlp", Epochs: 0}, "bench train: --epochs must be at least 1, got 0"},
	} {
		if _, err := Train(nil, test.o, nil); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%+v: error %v, want %q", test.o, err, test.want)
		}
	}
}
