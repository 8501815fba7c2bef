module github.com/fathom-ml/fathom

go 1.26.8

require github.com/spf13/cobra v1.10.2

require (
	github.com/apache/arrow-go/v18 v18.8.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
