// Package deploy holds the files that run fathom outside a single machine:
// Kubernetes manifests (kubernetes/fathom-job.yaml: an Indexed Job plus a
// headless Service, each pod running `fathom run` as one node of the job)
// and a Dockerfile for a static image. README.md explains them. The Go code
// here is only the test that keeps the manifests well-formed and consistent
// with the flags of `fathom run`.
package deploy
