// Package serve answers the Open Inference Protocol (KServe v2) over HTTP
// for fathom model files: health, server and model metadata, and
// inference with typed tensors, for several models at once.
//
// # Endpoints
//
//	GET  /v2/health/live, /v2/health/ready
//	GET  /v2                                     server metadata
//	GET  /v2/models/{name}[/versions/{v}]        model metadata
//	GET  /v2/models/{name}[/versions/{v}]/ready
//	POST /v2/models/{name}[/versions/{v}]/infer
//	GET  /metrics                                Prometheus metrics
//
// A model has one input, "input", of shape [batch, the model's input
// shape...] (or [batch, features]); its data may be flat or nested,
// of datatype BOOL, UINT8…UINT64, INT8…INT64, FP16 (as JSON numbers),
// FP32 or FP64, and becomes float32. A classifier answers "predict"
// (INT64 class indices) and "probabilities" (FP32 [batch, classes]), and
// "label" (BYTES class names) when a request names it; a regression
// model answers "predict" (FP32). Errors are {"error": "..."} with 400
// (bad request), 401 (token), 404 (unknown model or endpoint), 405, 413
// (body over the limit), 503 (queue full, timeout, shutting down).
//
// # Dynamic batching
//
// Each model has a bounded queue and one batcher goroutine: it takes the
// first waiting request, gathers more until the batch holds MaxBatch rows
// or MaxDelay has passed (by default, until the queue is empty: whatever
// queued while the model was busy), runs one modelfile.Model.PredictRows
// over all their rows (their features prepared by the model's
// modelfile.Features, as eval, predict and batch predict prepare theirs)
// and hands each request its own rows' results. Only the
// batcher calls the model. A full queue answers 503 at once.
//
//	m, err := modelfile.Load("runs/iris/model.safetensors")
//	if err != nil { ... }
//	s, err := serve.New([]serve.Model{{Name: "iris", Model: m}}, serve.Options{})
//	if err != nil { ... }
//	l, err := net.Listen("tcp", "127.0.0.1:8080")
//	if err != nil { ... }
//	go s.Serve(l)
//	...
//	s.Shutdown(ctx) // finishes the requests in flight, then stops the batchers
//
// # Security
//
// Serve refuses a listener beyond loopback unless Options.Token is set;
// with a token, every endpoint but the two health checks needs
// "Authorization: Bearer <token>". The token is never logged.
package serve
