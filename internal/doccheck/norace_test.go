//go:build !race

package doccheck

const raceEnabled = false
