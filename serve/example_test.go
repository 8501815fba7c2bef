package serve_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/serve"
)

// Serve a model file on a free loopback port and ask it for two rows'
// classes, as any Open Inference Protocol client would.
// tiny.safetensors is modelfile's two-class linear model over (x, y).
func Example() {
	m, err := modelfile.Load("../modelfile/testdata/tiny.safetensors")
	if err != nil {
		log.Fatal(err)
	}
	s, err := serve.New([]serve.Model{{Name: "tiny", Model: m}},
		serve.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(l)
	defer s.Shutdown(context.Background())

	body := `{"inputs": [{"name": "input", "shape": [2, 2], "datatype": "FP32", "data": [[0, 1], [2, -1]]}],
	          "outputs": [{"name": "label"}]}`
	resp, err := http.Post("http://"+l.Addr().String()+"/v2/models/tiny/infer", "application/json", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(answer))
	// Output:
	// 200 {"model_name":"tiny","model_version":"1","outputs":[{"name":"label","shape":[2],"datatype":"BYTES","data":["above","below"]}]}
}
