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
	"github.com/fathom-ml/fathom/launch/launchflag"
	"github.com/fathom-ml/fathom/train/job"
	"gopkg.in/yaml.v3"
)

// The subset of the Kubernetes API types the test checks.

type object struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   metadata          `yaml:"metadata"`
	Spec       yaml.Node         `yaml:"spec"`
	Data       map[string]string `yaml:"data"` // a ConfigMap's
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
		Spec podSpec `yaml:"spec"`
	} `yaml:"template"`
}

type podSpec struct {
	Subdomain     string      `yaml:"subdomain"`
	RestartPolicy string      `yaml:"restartPolicy"`
	Containers    []container `yaml:"containers"`
	Volumes       []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
	} `yaml:"volumes"`
}

type container struct {
	Name         string   `yaml:"name"`
	Image        string   `yaml:"image"`
	Command      []string `yaml:"command"`
	Args         []string `yaml:"args"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
	Env []struct {
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

	// The command line is one `fathom run` that launchflag.Parse accepts,
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
	cfg, err := launchflag.Parse(runArgs)
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
	checkTrainCommand(t, objs, pod, cfg.Command)
	t.Logf("job: %d nodes x %d workers = world size %s", nodes, cfg.NProcPerNode, strconv.Itoa(nodes*cfg.NProcPerNode))
}

// checkTrainCommand checks that a worker command is `fathom train CONFIG
// --json` with CONFIG mounted from a ConfigMap of objs, and that the config
// is one `fathom train` accepts.
func checkTrainCommand(t *testing.T, objs []object, pod podSpec, argv []string) {
	t.Helper()
	if len(argv) < 3 || argv[0] != "fathom" || argv[1] != "train" || !slices.Contains(argv, "--json") {
		t.Fatalf("worker command %q, want fathom train CONFIG --json", argv)
	}
	path := argv[2]
	c := pod.Containers[0]
	var cmName string
	for _, m := range c.VolumeMounts {
		if rest, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/"); ok {
			for _, v := range pod.Volumes {
				if v.Name == m.Name && v.ConfigMap != nil {
					cmName, path = v.ConfigMap.Name, rest
				}
			}
		}
	}
	if cmName == "" {
		t.Fatalf("the config %s is not mounted from a ConfigMap", argv[2])
	}
	if len(objs) == 0 {
		objs = readObjects(t, filepath.Join("kubernetes", "fathom-job.yaml"))
	}
	for _, o := range objs {
		if o.Kind != "ConfigMap" || o.Metadata.Name != cmName {
			continue
		}
		text, ok := o.Data[path]
		if !ok {
			t.Fatalf("ConfigMap %s has no key %q", cmName, path)
		}
		if _, err := job.ParseConfig([]byte(text), "configmap/"+cmName+"/"+path, nil); err != nil {
			t.Fatalf("the ConfigMap's config: %v", err)
		}
		return
	}
	t.Fatalf("no ConfigMap %s in the manifests", cmName)
}

type pytorchJobSpec struct {
	RunPolicy struct {
		BackoffLimit *int `yaml:"backoffLimit"`
	} `yaml:"runPolicy"`
	ReplicaSpecs map[string]struct {
		Replicas      int    `yaml:"replicas"`
		RestartPolicy string `yaml:"restartPolicy"`
		Template      struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"pytorchReplicaSpecs"`
}

// The Kubeflow PyTorchJob: one Master, Workers, every pod a fathom train
// worker with the token from the Secret, and the Master exposing the port
// the operator gives as MASTER_PORT.
func TestPyTorchJobManifest(t *testing.T) {
	objs := readObjects(t, filepath.Join("kubernetes", "fathom-pytorchjob.yaml"))
	if len(objs) != 1 || objs[0].Kind != "PyTorchJob" || objs[0].APIVersion != "kubeflow.org/v1" {
		t.Fatalf("want one kubeflow.org/v1 PyTorchJob, got %d objects", len(objs))
	}
	var spec pytorchJobSpec
	decodeSpec(t, objs[0], &spec)
	master, ok := spec.ReplicaSpecs["Master"]
	if !ok || master.Replicas != 1 {
		t.Fatalf("want one Master replica: %+v", spec.ReplicaSpecs)
	}
	world := 0
	for role, rs := range spec.ReplicaSpecs {
		if role != "Master" && role != "Worker" {
			t.Errorf("unknown replica type %q", role)
		}
		world += rs.Replicas
		pod := rs.Template.Spec
		if len(pod.Containers) != 1 || pod.Containers[0].Name != "pytorch" {
			t.Fatalf("%s: want one container named pytorch (the operator's convention)", role)
		}
		c := pod.Containers[0]
		checkTrainCommand(t, nil, pod, append(slices.Clone(c.Command), c.Args...))
		if !hasSecretToken(c) {
			t.Errorf("%s: %s must come from a secretKeyRef", role, distenv.JobToken)
		}
	}
	if world < 2 {
		t.Errorf("world size %d: a distributed job needs a Worker", world)
	}
	t.Logf("PyTorchJob: world size %d", world)
}

func hasSecretToken(c container) bool {
	for _, e := range c.Env {
		if e.Name == distenv.JobToken {
			return e.Value == "" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
				e.ValueFrom.SecretKeyRef.Name != "" && e.ValueFrom.SecretKeyRef.Key != ""
		}
	}
	return false
}
