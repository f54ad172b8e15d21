//go:build race

package hds_test

// raceEnabled reports whether the race detector is on.
const raceEnabled = true
