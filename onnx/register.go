package onnx

import "github.com/fathom-ml/fathom/modelfile"

func init() { modelfile.RegisterFormat(".onnx", Load) }
