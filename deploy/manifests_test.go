package deploy

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/internal/distenv"
	"github.com/fathom-ml/fathom/launch"
	"gopkg.in/yaml.v3"
)

// The subset of the Kubernetes API types the test checks.

type object struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   metadata `yaml:"metadata"`
	Spec       yaml.Node
}

type metadata struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

type serviceSpec struct {
	ClusterIP                string            `yaml:"clusterIP"`
	PublishNotReadyAddresses bool              `yaml:"publishNotReadyAddresses"`
	Selector                 map[string]string `yaml:"selector"`
	Ports                    []struct {
		Port int `yaml:"port"`
	} `yaml:"ports"`
}

type jobSpec struct {
	CompletionMode string `yaml:"completionMode"`
	Completions    *int   `yaml:"completions"`
	Parallelism    *int   `yaml:"parallelism"`
	BackoffLimit   *int   `yaml:"backoffLimit"`
	Template       struct {
		Spec struct {
			Subdomain     string      `yaml:"subdomain"`
			RestartPolicy string      `yaml:"restartPolicy"`
			Containers    []container `yaml:"containers"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
}

// readObjects decodes every YAML document of a file.
func readObjects(t *testing.T, path string) []object {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var objs []object
	for {
		var o object
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: document %d: %v", path, len(objs)+1, err)
		}
		objs = append(objs, o)
	}
	return objs
}

func decodeSpec(t *testing.T, o object, v any) {
	t.Helper()
	if err := o.Spec.Decode(v); err != nil {
		t.Fatalf("%s %s: spec: %v", o.Kind, o.Metadata.Name, err)
	}
}

// Every YAML file under kubernetes/ parses and every object names its kind.
func TestManifestsParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests found (%v)", err)
	}
	for _, path := range files {
		for i, o := range readObjects(t, path) {
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: document %d lacks apiVersion, kind or name", path, i+1)
			}
		}
	}
}

func TestIndexedJobManifest(t *testing.T) {
	objs := readObjects(t, filepath.Join("kubernetes", "fathom-job.yaml"))
	var svc, job *object
	for i := range objs {
		switch objs[i].Kind {
		case "Service":
			svc = &objs[i]
		case "Job":
			job = &objs[i]
		}
	}
	if svc == nil || job == nil {
		t.Fatalf("want a Service and a Job, got %d objects", len(objs))
	}
	if svc.APIVersion != "v1" || job.APIVersion != "batch/v1" {
		t.Errorf("apiVersions %q, %q", svc.APIVersion, job.APIVersion)
	}

	var ss serviceSpec
	decodeSpec(t, *svc, &ss)
	if ss.ClusterIP != "None" {
		t.Errorf("Service clusterIP = %q, want None (headless)", ss.ClusterIP)
	}
	if ss.Selector["job-name"] != job.Metadata.Name {
		t.Errorf("Service selects job-name=%q, want the Job's name %q", ss.Selector["job-name"], job.Metadata.Name)
	}

	var js jobSpec
	decodeSpec(t, *job, &js)
	if js.CompletionMode != "Indexed" {
		t.Errorf("completionMode = %q, want Indexed", js.CompletionMode)
	}
	if js.Completions == nil || js.Parallelism == nil || *js.Completions != *js.Parallelism || *js.Completions < 1 {
		t.Fatalf("completions and parallelism must be set and equal")
	}
	nodes := *js.Completions
	pod := js.Template.Spec
	if pod.Subdomain != svc.Metadata.Name {
		t.Errorf("pod subdomain %q, want the Service's name %q", pod.Subdomain, svc.Metadata.Name)
	}
	if pod.RestartPolicy != "Never" {
		t.Errorf("restartPolicy %q, want Never (fathom run restarts workers itself)", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]

	// The job token comes from a Secret, never from a literal value.
	found := false
	for _, e := range c.Env {
		if e.Name != distenv.JobToken {
			continue
		}
		found = true
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "" {
			t.Errorf("%s must come from a secretKeyRef", distenv.JobToken)
		}
	}
	if !found {
		t.Errorf("container env lacks %s", distenv.JobToken)
	}

	// The command line is one `fathom run` that launch.ParseArgs accepts,
	// consistent with the Job and the Service.
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) < 2 || argv[0] != "fathom" || argv[1] != "run" {
		t.Fatalf("container runs %q, want fathom run ...", argv)
	}
	runArgs := slices.Clone(argv[2:])
	for i, a := range runArgs {
		// Kubernetes expands $(JOB_COMPLETION_INDEX); stand in index 1.
		runArgs[i] = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", "1")
	}
	if !slices.Contains(argv, "--node-rank=$(JOB_COMPLETION_INDEX)") {
		t.Errorf("node rank does not come from JOB_COMPLETION_INDEX: %q", argv)
	}
	cfg, err := launch.ParseArgs(runArgs)
	if err != nil {
		t.Fatalf("fathom run arguments %q: %v", runArgs, err)
	}
	if cfg.NNodes != nodes {
		t.Errorf("--nnodes %d, but the Job has %d completions", cfg.NNodes, nodes)
	}
	if want := job.Metadata.Name + "-0." + svc.Metadata.Name; cfg.MasterAddr != want {
		t.Errorf("--master-addr %q, want %q (pod 0 through the headless Service)", cfg.MasterAddr, want)
	}
	if len(ss.Ports) == 0 || ss.Ports[0].Port != cfg.MasterPort {
		t.Errorf("Service ports %v do not include --master-port %d", ss.Ports, cfg.MasterPort)
	}
	if len(cfg.Command) == 0 || cfg.Command[0] != "fathom" {
		t.Errorf("worker command %q", cfg.Command)
	}
	t.Logf("job: %d nodes x %d workers = world size %s", nodes, cfg.NProcPerNode, strconv.Itoa(nodes*cfg.NProcPerNode))
}
