package gen

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a script, at a position.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	// Warning marks a problem that does not stop generation (unless strict).
	Warning bool
}

func (e Error) Error() string {
	if e.Warning {
		return fmt.Sprintf("%s:%d:%d: warning: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Errors is every problem found in one run, sorted by position.
type Errors []Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es Errors) sort() {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Msg < b.Msg
	})
}
