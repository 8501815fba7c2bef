// Command linear-regression fits y = w·x + b to examples/data/linear.csv
// by plain gradient descent on the mean squared error, written out step by
// step: forward, loss, backward, update. It is the Go counterpart of
// examples/linear-regression.yaml.
//
//	go run ./examples/linear-regression
package main

import (
	"fmt"
	"log"
	"math"
	"path/filepath"
	"runtime"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

func main() {
	_, self, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(self), "..", "data", "linear.csv")
	tab, err := data.ReadCSV(path, data.CSVOptions{Label: "y", LabelKind: data.LabelNumeric})
	if err != nil {
		log.Fatal(err)
	}
	x := tensor.FromFloat32(tab.X, tab.Rows, tab.Cols)
	y := tensor.FromFloat32(tab.Y, tab.Rows, 1)

	model := nn.NewLinear(tensor.NewRNG(1), tab.Cols, 1)
	opt, err := optim.NewSGD(model.Parameters(), optim.SGDOptions{LR: 0.1})
	if err != nil {
		log.Fatal(err)
	}
	for step := range 100 {
		loss := nn.MSELoss(model.Forward(x), y, nn.ReduceMean) // full batch: every row, every step
		opt.ZeroGrad()
		loss.Backward()
		if err := opt.Step(); err != nil {
			log.Fatal(err)
		}
		if step%25 == 0 || step == 99 {
			fmt.Printf("step %3d: MSE %.5f, RMSE %.4f\n", step, loss.Item(), math.Sqrt(loss.Item()))
		}
	}
	fmt.Printf("w = %.3f, b = %.3f (the data was made with w = [3 -2], b = 1)\n",
		model.Weight.Float32s(), model.Bias.Float32s()[0])
}
