// Package config is the one config layer of fathom's YAML front ends
// (train/job's training configs, ml/mljob's ml fit configs, and tune,
// which runs either): it reads the text within a size bound, applies
// --set overrides on the YAML tree, bounds alias expansion (a "billion
// laughs"), moves renamed keys to their new names with a deprecation
// line, checks every key against the Go type the front end decodes
// into, and reports every problem as one *Error printed
// "file:line: key: message".
//
// A front end calls Parse (or Load) with its Spec and decodes the
// returned tree into its own type:
//
//	root, err := config.Load(path, sets, config.Spec{Type: reflect.TypeFor[Config]()})
//	if err != nil { return nil, err }
//	var c Config
//	if err := config.Decode(root, path, &c); err != nil { return nil, err }
package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/yamltree"
	"gopkg.in/yaml.v3"
)

// MaxBytes bounds the text of a config file: real configs are a few
// kilobytes.
const MaxBytes = 1 << 20

// MaxExpandedNodes bounds the size of a YAML tree with every alias
// expanded. Checking keys and decoding walk the expanded tree, so a few
// hundred bytes of nested aliases would otherwise run for hours. Real
// configs expand to a few thousand nodes at most.
const MaxExpandedNodes = 100_000

// Error is a problem in a config, located by file, line and key when
// known.
type Error struct {
	File string
	Line int    // 0 when unknown (a value given with --set)
	Key  string // the dotted key, "" when the message names it or there is none
	Msg  string
}

// Error is "file:line: key: message", the parts not known left out.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Rename is a key given a new name; the old one is accepted for one
// release with a deprecation line.
type Rename struct {
	Old, New string // dotted key paths, e.g. "data.path", "data.train"
	// When, if not nil, says whether the old key's value is the renamed
	// idea (a numeric data.test is the old name of data.test_fraction;
	// a path is not).
	When func(v *yaml.Node) bool
}

// Spec says what a front end's config holds.
type Spec struct {
	// Type is the Go type the config decodes into; its yaml tags are
	// the known keys.
	Type reflect.Type
	// Hook checks nodes whose type decodes itself (yamltree.CheckKeys).
	Hook yamltree.Hook
	// Renames are the deprecated keys and their new names.
	Renames []Rename
	// What names the top-level keys for the message on a config that is
	// not a mapping ("data, model, loss, ...").
	What string
	// Warn receives deprecation lines (os.Stderr when nil).
	Warn io.Writer
}

// Load reads a config file (at most MaxBytes) and parses it with Parse.
func Load(path string, overrides []string, s Spec) (*yaml.Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(b, path, overrides, s)
}

// Shorthand decodes a key that takes a scalar as short for one field of
// its mapping ("optimizer: adam" for {type: adam}): a scalar into short,
// anything else into full (the mapping's type without its UnmarshalYAML,
// so that decoding does not recurse).
func Shorthand(n *yaml.Node, short, full any) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(short)
	}
	return n.Decode(full)
}

// RunDir is the output directory of a config file that names none:
// runs/ and the file's name without its extension (runs/iris for
// examples/iris.yaml).
func RunDir(path string) string {
	return filepath.Join("runs", strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
}

// Parse parses config text (name is used in errors): one YAML mapping,
// the overrides ("a.b=value", the value parsed as YAML, as --set takes
// them) applied, aliases bounded, renamed keys moved to their new names
// and every key checked against s.Type. It returns the root mapping for
// the front end to decode and validate.
func Parse(text []byte, name string, overrides []string, s Spec) (*yaml.Node, error) {
	if len(text) > MaxBytes {
		return nil, &Error{File: name, Msg: fmt.Sprintf("the config is over %d bytes", MaxBytes)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var root *yaml.Node
	switch {
	case doc.Kind == 0: // empty document
		root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	case doc.Kind == yaml.DocumentNode && len(doc.Content) == 1:
		root = doc.Content[0]
	default:
		return nil, &Error{File: name, Msg: "want one YAML document"}
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: root.Line, Msg: fmt.Sprintf("the config must be a mapping of keys (%s)", s.What)}
	}
	// Aliases first: an override may not copy a bomb's value around.
	if e := yamltree.CheckAliases(root, MaxExpandedNodes); e != nil {
		return nil, &Error{File: name, Line: e.Line, Msg: e.Msg}
	}
	warn := s.Warn
	if warn == nil {
		warn = os.Stderr
	}
	if err := applyRenames(root, name, s.Renames, warn); err != nil {
		return nil, err
	}
	for _, o := range overrides {
		if err := yamltree.ApplyOverride(root, renameOverride(o, s.Renames, warn)); err != nil {
			return nil, &Error{File: name, Msg: fmt.Sprintf("--set %s: %v", o, err)}
		}
	}
	if e := yamltree.CheckAliases(root, MaxExpandedNodes); e != nil {
		return nil, &Error{File: name, Line: e.Line, Msg: e.Msg}
	}
	if s.Type != nil {
		if e := yamltree.CheckKeys(root, s.Type, "", s.Hook); e != nil {
			msg := e.Msg
			if e.Line == 0 {
				msg += " (given with --set)"
			}
			return nil, &Error{File: name, Line: e.Line, Msg: msg}
		}
	}
	return root, nil
}

// Decode decodes the tree into target (a pointer), over the values it
// holds; a type error names its line.
func Decode(root *yaml.Node, name string, target any) error {
	if err := root.Decode(target); err != nil {
		return DecodeError(root, name, "", err)
	}
	return nil
}

// DecodeError turns a yaml.v3 decoding error at node n (key path path)
// into an *Error; yaml.v3's type errors name their line ("line 7: cannot
// unmarshal ...").
func DecodeError(n *yaml.Node, name, path string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	line := n.Line
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(num); err == nil {
				line, msg = l, tail
			}
		}
	}
	return &Error{File: name, Line: line, Key: path, Msg: msg}
}
