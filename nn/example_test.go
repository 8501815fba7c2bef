package nn_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// ToyModel is the model of PyTorch's DDP tutorial written as a custom
// module: embed nn.Base, register the parts, write Forward.
type ToyModel struct {
	nn.Base
	net1 *nn.Linear
	relu *nn.ReLU
	net2 *nn.Linear
}

func NewToyModel(rng *tensor.RNG) *ToyModel {
	m := &ToyModel{net1: nn.NewLinear(rng, 10, 10), relu: nn.NewReLU(), net2: nn.NewLinear(rng, 10, 5)}
	m.Register("net1", m.net1)
	m.Register("relu", m.relu)
	m.Register("net2", m.net2)
	return m
}

func (m *ToyModel) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.net2.Forward(m.relu.Forward(m.net1.Forward(x)))
}

func Example() {
	rng := tensor.NewRNG(0)
	model := NewToyModel(rng)
	for _, p := range model.NamedParameters() {
		fmt.Println(p.Name, p.Tensor.Shape())
	}

	x := rng.Normal(tensor.Float32, 0, 1, 20, 10)
	y := rng.Normal(tensor.Float32, 0, 1, 20, 5)
	loss := nn.MSELoss(model.Forward(x), y, nn.ReduceMean)
	loss.Backward()
	for _, p := range model.Parameters() { // one step of plain SGD
		p.AxpyInPlace(-0.001, p.Grad())
		p.ZeroGrad()
	}
	fmt.Println(model.NumParameters(), "parameters")
	// Output:
	// net1.weight [10 10]
	// net1.bias [10]
	// net2.weight [5 10]
	// net2.bias [5]
	// 165 parameters
}

func ExampleBuild() {
	spec, err := nn.DecodeSpecJSON([]byte(`{
  "input": [1, 28, 28],
  "layers": [
    {"type": "conv2d", "out": 32, "kernel": 3, "padding": 1},
    {"type": "relu"},
    {"type": "maxpool2d", "kernel": 2},
    {"type": "flatten"},
    {"type": "dropout", "p": 0.2},
    {"type": "linear", "out": 10}
  ]
}`))
	if err != nil {
		panic(err)
	}
	model, out, err := spec.Build(tensor.NewRNG(1))
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	fmt.Println(nn.Describe(model))

	spec.Layers[5].In = 3000 // a wrong explicit size is reported
	_, _, err = spec.Build(tensor.NewRNG(1))
	fmt.Println(err)
	// Output:
	// [10]
	// Sequential(
	//   (0): Conv2d(1, 32, kernel=[3 3], stride=[1 1], padding=[1 1], bias=true)
	//   (1): ReLU()
	//   (2): MaxPool2d(kernel=[2 2], stride=[2 2], padding=[0 0], dilation=[1 1])
	//   (3): Flatten(start_dim=1, end_dim=-1)
	//   (4): Dropout(p=0.2)
	//   (5): Linear(in=6272, out=10, bias=true)
	// )
	// parameters: 63050
	// model.layers[5] (linear): input has 6272 features but in=3000
}

func ExampleLoadStateDict() {
	rng := tensor.NewRNG(2)
	src := nn.NewSequential(nn.NewLinear(rng, 4, 3), nn.NewReLU(), nn.NewLinear(rng, 3, 2))
	dst := nn.NewSequential(nn.NewLinear(rng, 4, 3), nn.NewReLU(), nn.NewLinear(rng, 3, 2))
	fmt.Println(nn.LoadStateDict(dst, nn.StateDict(src), true))

	wrong := nn.NewSequential(nn.NewLinear(rng, 4, 3), nn.NewReLU(), nn.NewLinear(rng, 3, 5))
	fmt.Println(nn.LoadStateDict(wrong, nn.StateDict(src), true))
	// Output:
	// <nil>
	// nn: loading state dict: size mismatch for 2.weight: state dict has shape [2 3], model has [5 3]; size mismatch for 2.bias: state dict has shape [2], model has [5]
}
