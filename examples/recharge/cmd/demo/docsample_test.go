package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	durationRE = regexp.MustCompile(`\d+(\.\d+)?(ms|s|m)\b`)
	numberRE   = regexp.MustCompile(`\d+(\.\d+)?`)
)

// shape is a line of the demo's output with its numbers and durations
// blanked and its spacing collapsed: what a sample in the docs must show as
// the demo prints it.
func shape(line string) string {
	line = durationRE.ReplaceAllString(line, "D")
	line = numberRE.ReplaceAllString(line, "N")
	return strings.Join(strings.Fields(line), " ")
}

// checkDocSamples compares the output samples of docs/demo.md (each block
// showing the result table) with the demo's output, from the table's header
// to the end: each line the demo printed is shown in every sample, and each
// line of a sample is one the demo prints, numbers aside.
func checkDocSamples(t *testing.T, out string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "demo.md"))
	if err != nil {
		t.Fatal(err)
	}
	tail := func(text string) []string {
		var lines []string
		in := false
		for l := range strings.Lines(text) {
			s := shape(l)
			if strings.HasPrefix(s, "mode transport orders") {
				in = true
			}
			if in && s != "" {
				lines = append(lines, s)
			}
		}
		return lines
	}
	got := tail(out)
	if len(got) == 0 {
		t.Fatalf("no result table in the demo's output:\n%s", out)
	}
	printed := map[string]bool{}
	for _, l := range got {
		printed[l] = true
	}
	samples := 0
	defer func() { t.Logf("compared %d samples of docs/demo.md with the output", samples) }()
	for _, block := range codeBlocks(string(doc)) {
		if !strings.Contains(block, "mode  transport  orders") {
			continue
		}
		samples++
		shown := map[string]bool{}
		for _, l := range tail(block) {
			shown[l] = true
			// An unsafe run's summary line is printed only when it credited
			// an order more than once, as it almost always does.
			if !printed[l] && !strings.HasPrefix(l, "unsafe HTTP:") && !strings.HasPrefix(l, "unsafe gRPC:") {
				t.Errorf("docs/demo.md, sample %d shows a line the demo does not print: %q", samples, l)
			}
		}
		for _, l := range got {
			if !shown[l] {
				t.Errorf("docs/demo.md, sample %d lacks a line the demo prints: %q", samples, l)
			}
		}
	}
	if samples == 0 {
		t.Error("docs/demo.md shows no sample of the demo's result table")
	}
}

// codeBlocks returns the contents of a Markdown file's fenced code blocks.
func codeBlocks(text string) []string {
	var (
		blocks []string
		cur    strings.Builder
		in     bool
	)
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, "```") {
			if in {
				blocks = append(blocks, cur.String())
				cur.Reset()
			}
			in = !in
			continue
		}
		if in {
			cur.WriteString(l)
		}
	}
	return blocks
}
