package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/scriptlock/scriptlock/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("scriptgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg gen.Config
	fs.StringVar(&cfg.In, "in", "", "directory of annotated *.lua scripts (required)")
	fs.StringVar(&cfg.Out, "out", "", "directory of the generated Go package (required)")
	fs.StringVar(&cfg.Package, "pkg", "", "Go package name of the generated package (required)")
	fs.BoolVar(&cfg.Check, "check", false, "exit 1 if -out is stale instead of writing it")
	fs.BoolVar(&cfg.Strict, "strict", false, "treat warnings as errors")
	removePlaceholder := fs.String("remove-placeholder", "", "remove `FILE`, a placeholder left for a removed script (run by the placeholder's go:generate line)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scriptgen -in DIR -out DIR -pkg NAME [-check] [-strict]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *removePlaceholder != "" {
		if err := gen.RemovePlaceholder(*removePlaceholder); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	if cfg.In == "" || cfg.Out == "" || cfg.Package == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg.Warnings = stderr
	if err := gen.Run(cfg); err != nil {
		var stale *gen.StaleError
		if errors.As(err, &stale) {
			for _, f := range stale.Files {
				fmt.Fprintln(stderr, f)
			}
			return 1
		}
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
