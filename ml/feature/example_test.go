package feature_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/feature"
)

// A pipeline that indexes a string column, one-hot encodes it, assembles
// it with a numeric column and standardizes the result.
func Example() {
	f, _ := data.NewFrame(
		data.NewColumn("color", []string{"red", "blue", "red", "green", "red", "blue"}, nil),
		data.NewColumn("size", []float64{1, 2, 3, 4, 5, 6}, nil),
	)
	index := feature.NewStringIndexer()
	index.InputCol, index.OutputCol = "color", "colorIndex"
	onehot := feature.NewOneHotEncoder()
	onehot.InputCol, onehot.OutputCol = "colorIndex", "colorVec"
	assemble := feature.NewVectorAssembler("colorVec", "size")
	assemble.OutputCol = "raw"
	scale := feature.NewStandardScaler()
	scale.InputCol, scale.OutputCol = "raw", ml.FeaturesCol

	model, err := ml.NewPipeline(index, onehot, assemble, scale).Fit(ml.Local(f))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("labels:", model.(*ml.PipelineModel).Stages[0].(*feature.StringIndexerModel).Labels)
	out, _ := model.Transform(f)
	raw, _ := out.Vectors("raw")
	std, _ := out.Vectors(ml.FeaturesCol)
	for i := range out.Len() {
		fmt.Printf("%v → %.3f\n", raw.Float64s()[3*i:3*i+3], std.Float64s()[3*i:3*i+3])
	}
	// Output:
	// labels: [red blue green]
	// [1 0 1] → [1.826 0.000 0.535]
	// [0 1 2] → [0.000 1.936 1.069]
	// [1 0 3] → [1.826 0.000 1.604]
	// [0 0 4] → [0.000 0.000 2.138]
	// [1 0 5] → [1.826 0.000 2.673]
	// [0 1 6] → [0.000 1.936 3.207]
}
