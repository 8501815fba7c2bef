package tensor

// SetConvColumnBudget sets the column-buffer budget that decides how many
// images Conv2d unfolds at once and returns the previous value, so tests
// can drive both the one-image and the chunked paths.
func SetConvColumnBudget(n int) int {
	old := convColumnBudget
	convColumnBudget = n
	return old
}
