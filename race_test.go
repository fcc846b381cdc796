//go:build race

package scriptlock

const raceEnabled = true
