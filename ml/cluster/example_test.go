package cluster_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/cluster"
)

func ExampleKMeans() {
	x := []float64{0, 0, 0, 1, 1, 0, 10, 10, 10, 11, 11, 10}
	f, _ := data.NewFrame(data.NewVectorColumn(ml.FeaturesCol, 2, x, nil, nil))
	km := cluster.NewKMeans()
	km.InitMode = cluster.InitKMeansPlusPlus
	m, err := km.Fit(ml.Local(f))
	if err != nil {
		panic(err)
	}
	model := m.(*cluster.KMeansModel)
	out, _ := model.Transform(f)
	pred, _ := ml.Numbers(out, ml.PredictionCol)
	fmt.Println("same cluster:", pred[0] == pred[1], pred[3] == pred[5], pred[0] != pred[3])
	fmt.Printf("cost %.4f, sizes %v\n", model.TrainingCost, model.ClusterSizes)
	// Output:
	// same cluster: true true true
	// cost 2.6667, sizes [3 3]
}
