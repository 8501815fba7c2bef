package job

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/safetensors"
	"github.com/fathom-ml/fathom/tensor"
)

// Fine-tuning: init_from loads a trained model's weights into the
// config's network by name (layer i's parameters are "i.weight",
// "i.bias", ...), freeze stops named layers from training.

// layerOf returns the layer index of a state dict name ("3.weight": 3).
func layerOf(name string) (int, bool) {
	head, _, ok := strings.Cut(name, ".")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(head)
	return i, err == nil
}

// lastParamLayer returns the index of the last layer that has parameters
// among entries, or −1.
func lastParamLayer(names []string) int {
	last := -1
	for _, n := range names {
		if i, ok := layerOf(n); ok && i > last {
			last = i
		}
	}
	return last
}

// initFrom loads the weights of the model file c.InitFrom into net: every
// tensor of the network the file has under the same name and shape. The
// network's last layer with parameters (the head) may differ from the
// file's (other classes, another size): it then keeps its fresh
// initialization. Any other difference is an error naming the tensor and
// both shapes. It returns a line for the log.
func (c *Config) initFrom(net *nn.Sequential) (string, error) {
	path := c.InitFrom
	if !filepath.IsAbs(path) && c.dir != "" {
		path = filepath.Join(c.dir, path)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("init_from: %w", err)
	}
	file := map[string]safetensors.Entry{}
	for _, e := range f.Tensors {
		file[e.Name] = e
	}
	entries := nn.StateEntries(net)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	head := lastParamLayer(names)
	sd := map[string]*tensor.Tensor{}
	var fresh []string
	for _, e := range entries {
		fe, ok := file[e.Name]
		layer, _ := layerOf(e.Name)
		if !ok {
			if layer == head {
				fresh = append(fresh, e.Name)
				continue
			}
			return "", fmt.Errorf("init_from %s: the file has no tensor %q (model layer %d); its tensors: %s", c.InitFrom, e.Name, layer, tensorList(f.Tensors))
		}
		if !slices.Equal(fe.Shape, e.Tensor.Shape()) {
			if layer == head {
				fresh = append(fresh, e.Name)
				continue
			}
			return "", fmt.Errorf("init_from %s: tensor %q has shape %v in the file and %v in the model: only the last layer (the head, layer %d) may differ",
				c.InitFrom, e.Name, fe.Shape, e.Tensor.Shape(), head)
		}
		t, err := modelfile.EntryTensor(fe)
		if err != nil {
			return "", fmt.Errorf("init_from %s: %q: %w", c.InitFrom, e.Name, err)
		}
		sd[e.Name] = t
	}
	if len(sd) == 0 {
		return "", fmt.Errorf("init_from %s: no tensor of the file fits the model", c.InitFrom)
	}
	if err := nn.LoadStateDict(net, sd, false); err != nil {
		return "", fmt.Errorf("init_from %s: %w", c.InitFrom, err)
	}
	msg := fmt.Sprintf("init_from %s: %d tensors loaded", c.InitFrom, len(sd))
	if len(fresh) > 0 {
		msg += fmt.Sprintf("; head replaced, initialized fresh: %s", strings.Join(fresh, ", "))
	}
	return msg, nil
}

func tensorList(es []safetensors.Entry) string {
	var n []string
	for _, e := range es {
		n = append(n, fmt.Sprintf("%s %v", e.Name, e.Shape))
	}
	return strings.Join(n, ", ")
}

// freeze turns off requires_grad for the parameters of the layers named
// in c.Freeze: the tape records no gradient work for them (nor for the
// layers before them, when all of those are frozen too) and the optimizer
// does not see them.
func (c *Config) freeze(net *nn.Sequential) error {
	if len(c.Freeze) == 0 {
		return nil
	}
	entries := nn.StateEntries(net)
	for _, name := range c.Freeze {
		i, err := strconv.Atoi(strings.TrimSpace(name))
		if err != nil || i < 0 || i >= net.Len() {
			return fmt.Errorf("freeze: %q is not a layer index of the model (0 to %d)", name, net.Len()-1)
		}
		found := false
		for _, e := range entries {
			if l, ok := layerOf(e.Name); ok && l == i && e.Tensor.RequiresGrad() {
				e.Tensor.SetRequiresGrad(false)
				found = true
			}
		}
		if !found {
			return fmt.Errorf("freeze: layer %d (%s) has no parameters to freeze", i, c.Model[i].Type)
		}
	}
	return nil
}

// trainable returns the parameters that require gradients.
func trainable(params []*tensor.Tensor) []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, p := range params {
		if p.RequiresGrad() {
			out = append(out, p)
		}
	}
	return out
}
