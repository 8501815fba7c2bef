package comm_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/store"
)

// Three ranks as goroutines of one process, over loopback TCP, sharing a
// store the example starts itself (a real job gets all of this from the
// environment with comm.NewFromEnv).
func ExampleAllReduce() {
	token := []byte("example-token")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := store.Serve(ln, token, nil)
	defer srv.Close()

	const world = 3
	sums := make([][]float32, world)
	var wg sync.WaitGroup
	for r := 0; r < world; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			g, err := comm.New(context.Background(), comm.Options{
				Rank: r, WorldSize: world, Token: token, Transport: comm.TransportTCP,
				Timeout: 10 * time.Second, RendezvousTimeout: 10 * time.Second,
				NewStore: func(ctx context.Context) (store.Store, error) {
					return store.Dial(ctx, ln.Addr().String(), token, r)
				},
			})
			if err != nil {
				fmt.Println(err)
				return
			}
			defer g.Close()
			grad := []float32{float32(r), 1, 10 * float32(r)}
			if err := comm.AllReduce(g, grad, comm.Sum); err != nil {
				fmt.Println(err)
				return
			}
			sums[r] = grad
		}(r)
	}
	wg.Wait()
	for r, s := range sums {
		fmt.Println("rank", r, s)
	}
	// Output:
	// rank 0 [3 3 30]
	// rank 1 [3 3 30]
	// rank 2 [3 3 30]
}

// Four ranks split into two pipeline stages, {0, 2} and {1, 3}: each
// stage's all-reduce sums over its own two ranks only, over the links the
// whole group already has.
func ExampleGroup_Subgroup() {
	token := []byte("example-token")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := store.Serve(ln, token, nil)
	defer srv.Close()

	const world = 4
	sums := make([][]float32, world)
	var wg sync.WaitGroup
	for r := 0; r < world; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			g, err := comm.New(context.Background(), comm.Options{
				Rank: r, WorldSize: world, Token: token, Transport: comm.TransportTCP,
				Timeout: 10 * time.Second, RendezvousTimeout: 10 * time.Second,
				NewStore: func(ctx context.Context) (store.Store, error) {
					return store.Dial(ctx, ln.Addr().String(), token, r)
				},
			})
			if err != nil {
				fmt.Println(err)
				return
			}
			defer g.Close()
			stage, err := g.Subgroup([]int{r % 2, r%2 + 2}) // only members call it
			if err != nil {
				fmt.Println(err)
				return
			}
			x := []float32{float32(r), 1}
			if err := comm.AllReduce(stage, x, comm.Sum); err != nil {
				fmt.Println(err)
				return
			}
			sums[r] = x
		}(r)
	}
	wg.Wait()
	for r, s := range sums {
		fmt.Println("rank", r, s)
	}
	// Output:
	// rank 0 [2 2]
	// rank 1 [4 2]
	// rank 2 [2 2]
	// rank 3 [4 2]
}
