package nn

import (
	"fmt"
	"reflect"
	"strings"
)

// normType canonicalizes a layer or activation name: lower case, with
// '_' and '-' removed, so "LeakyReLU", "leaky_relu" and "leakyrelu" agree.
func normType(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("_", "", "-", "").Replace(s)
}

// describer is implemented by modules with settings worth printing.
type describer interface{ describe() string }

// Describe returns a multi-line description of a module tree in the style
// of printing a PyTorch module: each module's type and settings, its
// children indented under it, and the parameter count at the end.
//
//	Sequential(
//	  (0): Linear(in=784, out=256, bias=true)
//	  (1): ReLU()
//	  ...
//	)
func Describe(m Module) string {
	return fmt.Sprintf("%s\nparameters: %d", describeTree(m, 0), m.base().NumParameters())
}

// header returns "Type(settings)" for one module.
func header(m Module) string {
	if d, ok := m.(describer); ok {
		return d.describe()
	}
	t := reflect.TypeOf(m)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 { // generic: ModuleList[...]
		name = name[:i]
	}
	return name + "()"
}

func describeTree(m Module, depth int) string {
	h := header(m)
	kids := m.NamedChildren()
	if len(kids) == 0 {
		return h
	}
	// Open the header's parentheses for the children: "Type(" or "Type(settings, ".
	var b strings.Builder
	if strings.HasSuffix(h, "()") {
		b.WriteString(h[:len(h)-1])
	} else {
		b.WriteString(h[:len(h)-1] + ", ")
	}
	pad := strings.Repeat("  ", depth+1)
	for _, c := range kids {
		fmt.Fprintf(&b, "\n%s(%s): %s", pad, c.Name, describeTree(c.Module, depth+1))
	}
	b.WriteString("\n" + strings.Repeat("  ", depth) + ")")
	return b.String()
}
