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
	// first underscore, counts.
	stem, _, _ := strings.Cut(base, ".")
	i := strings.Index(stem, "_")
	if i < 0 {
		return ""
	}
	l := strings.Split(stem[i:], "_")
	if l[len(l)-1] == "test" {
		return fmt.Sprintf("script file name %q ends in _test: the generated file %s would look like a test file; rename the script", base, out)
	}
	n := len(l)
	if n >= 2 && knownOS[l[n-2]] && knownArch[l[n-1]] {
		return fmt.Sprintf("script file name %q ends in _%s_%s: Go would build the generated file %s only for GOOS=%s GOARCH=%s; rename the script (@name sets the Go name apart from the file name)", base, l[n-2], l[n-1], out, l[n-2], l[n-1])
	}
	if last := l[n-1]; knownOS[last] || knownArch[last] {
		what := "GOOS"
		if knownArch[last] {
			what = "GOARCH"
		}
		return fmt.Sprintf("script file name %q ends in _%s: Go would build the generated file %s only for %s=%s; rename the script (@name sets the Go name apart from the file name)", base, last, out, what, last)
	}
	return ""
}
