package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// DefaultFashionMNISTDir is where Debian's dataset-fashion-mnist package puts
// the Fashion-MNIST files.
const DefaultFashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// FashionMNISTDir returns the directory to read Fashion-MNIST from: the
// directory named by the FATHOM_DATA environment variable (or its
// fashion-mnist subdirectory, if it has one), else DefaultFashionMNISTDir.
func FashionMNISTDir() string {
	root := os.Getenv("FATHOM_DATA")
	if root == "" {
		return DefaultFashionMNISTDir
	}
	sub := filepath.Join(root, "fashion-mnist")
	if st, err := os.Stat(sub); err == nil && st.IsDir() {
		return sub
	}
	return root
}

// FashionMNISTClasses returns the names of the ten Fashion-MNIST classes, in
// label order (Xiao, Rasul and Vollgraf, "Fashion-MNIST: a Novel Image Dataset
// for Benchmarking Machine Learning Algorithms", 2017, table 1).
func FashionMNISTClasses() []string {
	return []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
		"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}
}

// MNISTOptions tunes LoadMNIST.
type MNISTOptions struct {
	// RawPixels keeps pixel values in [0, 255]; by default they are scaled to
	// [0, 1].
	RawPixels bool
	// Classes names the labels; nil means the digits "0" to "9".
	Classes []string
	// MaxBytes bounds the memory the images and labels of the split take
	// once decoded, float32 copy included; 0 means [MaxInputBytes]
	// (FATHOM_MAX_INPUT_BYTES).
	MaxBytes int64
}

// LoadMNIST loads one split of an MNIST-format data set (MNIST,
// Fashion-MNIST, KMNIST, ...) from dir: split "train" reads
// train-images-idx3-ubyte and train-labels-idx1-ubyte, split "t10k" (or
// "test") the t10k-* files, each plain or with a .gz suffix. The table has one
// row per image, FeatureShape [rows, cols] of the images, and class labels.
func LoadMNIST(dir, split string, opts MNISTOptions) (*Table, error) {
	prefix := split
	switch split {
	case "train", "t10k":
	case "test":
		prefix = "t10k"
	default:
		return nil, fmt.Errorf("MNIST: unknown split %q: want \"train\" or \"t10k\"", split)
	}
	imagesPath, err := findMNISTFile(dir, prefix, "images", 3)
	if err != nil {
		return nil, err
	}
	labelsPath, err := findMNISTFile(dir, prefix, "labels", 1)
	if err != nil {
		return nil, err
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		if limit, err = MaxInputBytes(); err != nil {
			return nil, err
		}
	}
	images, err := ReadIDXLimit(imagesPath, limit)
	if err != nil {
		return nil, err
	}
	if images.Type != IDXUint8 || len(images.Dims) != 3 {
		return nil, fmt.Errorf("%s: want unsigned bytes in 3 dimensions (count, rows, cols), have %s in %d dimensions %v",
			imagesPath, images.Type, len(images.Dims), images.Dims)
	}
	// The labels get what the images left of the limit (at least a byte:
	// 0 would mean the default).
	left := limit - int64(idxCost(images.Type, uint64(images.Len())))
	labels, err := ReadIDXLimit(labelsPath, max(left, 1))
	if err != nil {
		return nil, err
	}
	if labels.Type != IDXUint8 || len(labels.Dims) != 1 {
		return nil, fmt.Errorf("%s: want unsigned bytes in 1 dimension, have %s in %d dimensions %v",
			labelsPath, labels.Type, len(labels.Dims), labels.Dims)
	}
	n := images.Dims[0]
	if labels.Dims[0] != n {
		return nil, fmt.Errorf("%s has %d images but %s has %d labels", imagesPath, n, labelsPath, labels.Dims[0])
	}
	classes := opts.Classes
	if classes == nil {
		classes = make([]string, 10)
		for i := range classes {
			classes[i] = strconv.Itoa(i)
		}
	}
	t := &Table{
		Rows: n, Cols: images.Dims[1] * images.Dims[2],
		FeatureShape: []int{images.Dims[1], images.Dims[2]},
		LabelName:    "label",
		Labels:       make([]int64, n),
		Classes:      classes,
	}
	for i, l := range labels.Uint8 {
		if int(l) >= len(classes) {
			return nil, fmt.Errorf("%s: label %d of item %d is not below the class count %d", labelsPath, l, i, len(classes))
		}
		t.Labels[i] = int64(l)
	}
	t.X = make([]float32, len(images.Uint8))
	div := float32(255) // as torchvision's ToTensor: x / 255, correctly rounded
	if opts.RawPixels {
		div = 1
	}
	for i, v := range images.Uint8 {
		t.X[i] = float32(v) / div
	}
	return t, nil
}

// LoadFashionMNIST loads a Fashion-MNIST split ("train" or "t10k") from
// FashionMNISTDir, with pixels scaled to [0, 1] and the class names set.
func LoadFashionMNIST(split string) (*Table, error) {
	return LoadMNIST(FashionMNISTDir(), split, MNISTOptions{Classes: FashionMNISTClasses()})
}

// findMNISTFile finds e.g. train-images-idx3-ubyte in dir, with or without .gz
// and with the dash or the dot some mirrors use before "idx".
func findMNISTFile(dir, prefix, kind string, ndim int) (string, error) {
	var tried []string
	for _, sep := range []string{"-", "."} {
		base := fmt.Sprintf("%s-%s%sidx%d-ubyte", prefix, kind, sep, ndim)
		for _, ext := range []string{"", ".gz"} {
			p := filepath.Join(dir, base+ext)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			tried = append(tried, base+ext)
		}
	}
	return "", fmt.Errorf("MNIST: no %s %s file in %s (looked for %v)", prefix, kind, dir, tried)
}
