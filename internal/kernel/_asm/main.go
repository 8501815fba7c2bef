// Command _asm generates the assembly of package kernel with avo: one
// generator per output, chosen by -gen. Every output has a go:generate line
// in internal/kernel (gemm_amd64.go, elementwise_amd64.go, gemm_bf16_amd64.go,
// int8_amd64.go, optim_amd64.go, gram_amd64.go); `go generate` there
// regenerates them all, or one at a time:
//
//	go run . -gen gemm -out ../gemm_amd64.s -stubs ../gemm_stubs_amd64.go -pkg kernel
//
// The other flags are avo's (-out, -stubs, -pkg).
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	. "github.com/mmcloughlin/avo/build"

	"github.com/fathom-ml/fathom/internal/kernel/_asm/bf16"
	"github.com/fathom-ml/fathom/internal/kernel/_asm/elem"
	"github.com/fathom-ml/fathom/internal/kernel/_asm/gemm"
	"github.com/fathom-ml/fathom/internal/kernel/_asm/gram"
	"github.com/fathom-ml/fathom/internal/kernel/_asm/int8"
	"github.com/fathom-ml/fathom/internal/kernel/_asm/optim"
)

// generators maps each -gen value to the function that adds its kernels to
// avo's context.
var generators = map[string]func(){
	"gemm":  gemm.Build,
	"elem":  elem.Build,
	"bf16":  bf16.Build,
	"int8":  int8.Build,
	"optim": optim.Build,
	"gram":  gram.Build,
}

func names() string {
	var ns []string
	for n := range generators {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return strings.Join(ns, ", ")
}

func main() {
	gen := flag.String("gen", "", "generator to run: "+names())
	// avo's Generate parses the command line (its -out, -stubs, -pkg
	// flags live on flag.CommandLine too).
	flag.Parse()
	build, ok := generators[*gen]
	if !ok {
		fmt.Fprintf(os.Stderr, "_asm: -gen %q: want one of %s\n", *gen, names())
		os.Exit(2)
	}
	ConstraintExpr("!purego")
	build()
	Generate()
}
