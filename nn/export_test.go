package nn

// CrossEntropyComposite exposes the composite cross-entropy to the tests.
var CrossEntropyComposite = crossEntropyComposite
