package data

// NextColumns (temporary stand-in until the page reader's lands): Next
// into a row-major buffer, transposed.
func (m *ParquetMatrix) NextColumns(x []float32, ld int) (int, []NullCell, error) {
	rm := make([]float32, m.batch*m.width)
	n, nulls, err := m.Next(rm)
	if err != nil {
		return n, nulls, err
	}
	for i := range n {
		for j := range m.width {
			x[j*ld+i] = rm[i*m.width+j]
		}
	}
	return n, nulls, nil
}
