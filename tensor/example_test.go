package tensor_test

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/tensor"
)

func Example() {
	x := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
	w := tensor.FromFloat32([]float32{0.5, -1, 1, 0.25}, 2, 2).SetRequiresGrad(true)
	b := tensor.FromFloat32([]float32{0.1, 0.2}, 2).SetRequiresGrad(true)

	y := tensor.Linear(x, w, b).Relu() // x·wᵀ + b, then max(·, 0)
	loss := y.MeanAll()
	loss.Backward()

	fmt.Println(y)
	fmt.Println(w.Grad())
	fmt.Println(b.Grad())
	// Output:
	// tensor([[0.0000, 1.7000],
	//         [0.0000, 4.2000]], dtype=float32, grad_fn=Relu)
	// tensor([[0.0000, 0.0000],
	//         [1.0000, 1.5000]], dtype=float32)
	// tensor([0.0000, 0.5000], dtype=float32)
}

func ExampleTensor_NoGrad() {
	w := tensor.Ones(tensor.Float32, 3, 2).SetRequiresGrad(true)
	x := tensor.Ones(tensor.Float32, 4, 3)

	train := x.MatMul(w)          // records a graph: w requires grad
	serve := x.NoGrad().MatMul(w) // records nothing, safe to run from many goroutines
	fmt.Println(train.RequiresGrad(), serve.RequiresGrad())
	// Output: true false
}

func ExampleTensor_Backward_retainGraph() {
	x := tensor.Scalar(3, tensor.Float64).SetRequiresGrad(true)
	y := x.Square()
	y.Backward(tensor.RetainGraph) // keep the graph for a second pass
	y.Backward()
	fmt.Println(x.Grad().Item())
	// Output: 12
}

func ExampleTensor_String() {
	fmt.Println(tensor.Arange(tensor.Int64, 0, 6, 1).Reshape(2, 3))
	fmt.Println(tensor.FromFloat64([]float64{1.5, 1e-6, 300}))
	fmt.Println(tensor.Zeros(tensor.Float32, 2000).Reshape(2, 1000))
	fmt.Printf("%.2v\n", tensor.FromFloat32([]float32{3.14159}))
	// Output:
	// tensor([[0, 1, 2],
	//         [3, 4, 5]], dtype=int64)
	// tensor([1.5000e+00, 1.0000e-06, 3.0000e+02], dtype=float64)
	// tensor([[0., 0., 0., ..., 0., 0., 0.],
	//         [0., 0., 0., ..., 0., 0., 0.]], dtype=float32)
	// tensor([3.14], dtype=float32)
}

func ExampleTensor_Reshape() {
	x := tensor.Arange(tensor.Float32, 0, 6, 1)
	m := x.Reshape(2, -1) // a view: no copy
	t := m.T()            // a transposed view
	fmt.Println(m.SharesStorage(x), t.IsContiguous(), t.Shape())
	fmt.Println(t.Contiguous().Float32s())
	// Output:
	// true false [3 2]
	// [0 3 1 4 2 5]
}

func ExampleRNG() {
	rng := tensor.NewRNG(7)
	state, _ := rng.MarshalBinary() // save, e.g. in a checkpoint
	a := rng.Perm(5)
	_ = rng.UnmarshalBinary(state) // restore
	b := rng.Perm(5)
	fmt.Println(fmt.Sprint(a) == fmt.Sprint(b))
	// Output: true
}

func ExampleMatMul() {
	a := tensor.Ones(tensor.Float32, 10, 2, 3) // a batch of 10 matrices
	b := tensor.Ones(tensor.Float32, 3, 4)     // broadcast over the batch
	fmt.Println(tensor.MatMul(a, b).Shape())
	// Output: [10 2 4]
}

// Data-parallel training starts reducing a parameter's gradient as soon as
// Backward has finished it, while Backward works on earlier layers.
func ExampleTensor_RegisterGradReadyHook() {
	x := tensor.FromFloat64([]float64{1, 2}, 1, 2)
	w1 := tensor.FromFloat64([]float64{1, 0, 0, 1}, 2, 2).SetRequiresGrad(true)
	w2 := tensor.FromFloat64([]float64{1, 1}, 1, 2).SetRequiresGrad(true)
	unused := tensor.Zeros(tensor.Float64, 2).SetRequiresGrad(true)
	for _, p := range []struct {
		name string
		t    *tensor.Tensor
	}{{"w1", w1}, {"w2", w2}, {"unused", unused}} {
		p.t.RegisterGradReadyHook(func(t *tensor.Tensor) {
			fmt.Println(p.name, "ready:", t.Grad().Values()) // start its all-reduce here
		})
	}

	loss := tensor.Linear(tensor.Linear(x, w1, nil), w2, nil).SumAll()
	if !slices.Contains(loss.ReachableLeaves(), unused) {
		fmt.Println("unused will receive no gradient")
	}
	loss.Backward() // the last layer's parameter is ready first
	// Output:
	// unused will receive no gradient
	// w2 ready: [1 2]
	// w1 ready: [1 2 1 2]
}
