package gen

import (
	"fmt"
	"strings"
)

// knownOS and knownArch are the GOOS and GOARCH values go/build recognises as
// file name suffixes (go/build's internal syslist: every entry of
// `go tool dist list`, plus the names it keeps for ports to come). A file
// name whose part before the first dot ends in _GOOS, _GOARCH or
// _GOOS_GOARCH (optionally followed by _test) is built only on that platform.
var knownOS = map[string]bool{
	"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
	"hurd": true, "illumos": true, "ios": true, "js": true, "linux": true, "nacl": true,
	"netbsd": true, "openbsd": true, "plan9": true, "solaris": true, "wasip1": true,
	"windows": true, "zos": true,
}

var knownArch = map[string]bool{
	"386": true, "amd64": true, "amd64p32": true, "arm": true, "armbe": true, "arm64": true,
	"arm64be": true, "loong64": true, "mips": true, "mipsle": true, "mips64": true,
	"mips64le": true, "mips64p32": true, "mips64p32le": true, "ppc": true, "ppc64": true,
	"ppc64le": true, "riscv": true, "riscv64": true, "s390": true, "s390x": true,
	"sparc": true, "sparc64": true, "wasm": true,
}

// outputName is the name of the generated file of a script file.
func outputName(base string) string { return base + ".go" }

// checkFileName explains why the generated file of script file base (e.g.
// rate_limit.lua) would not be built everywhere by Go; "" when it would.
//
// A script whose name ends in _test (rate_test.lua) is accepted: its
// generated file, rate_test.lua.go, is no test file, since Go's test files
// end in _test.go; go/build only drops a final _test before it reads a
// platform suffix, so rate_js_test.lua is refused as rate_js.lua is.
func checkFileName(base string) string {
	out := outputName(base)
	if strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".") {
		return fmt.Sprintf("script file name %q starts with %q: Go ignores the generated file %s; rename the script", base, base[:1], out)
	}
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Sprintf("script file name %q has the character %q: use only letters, digits, _, - and . in script file names", base, r)
		}
	}
	// As go/build: only the part before the first dot, and only after its
	// first underscore, counts, less a final _test.
	stem, _, _ := strings.Cut(base, ".")
	i := strings.Index(stem, "_")
	if i < 0 {
		return ""
	}
	l := strings.Split(stem[i:], "_")
	test := ""
	if l[len(l)-1] == "test" {
		l, test = l[:len(l)-1], "_test"
	}
	note := ""
	if test != "" {
		note = " (a final _test does not hide the platform)"
	}
	const rename = "rename the script (@name sets the Go name apart from the file name)"
	n := len(l)
	if n >= 2 && knownOS[l[n-2]] && knownArch[l[n-1]] {
		return fmt.Sprintf("script file name %q ends in _%s_%s%s: Go would build the generated file %s only for GOOS=%s GOARCH=%s%s; %s", base, l[n-2], l[n-1], test, out, l[n-2], l[n-1], note, rename)
	}
	if last := l[n-1]; knownOS[last] || knownArch[last] {
		what := "GOOS"
		if knownArch[last] {
			what = "GOARCH"
		}
		return fmt.Sprintf("script file name %q ends in _%s%s: Go would build the generated file %s only for %s=%s%s; %s", base, last, test, out, what, last, note, rename)
	}
	return ""
}
