package gen

import (
	"go/token"
	"strings"
	"unicode"
)

// commonInitialisms are written in upper case in Go names (golint's list).
var commonInitialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "LHS": true, "QPS": true, "RAM": true, "RHS": true,
	"RPC": true, "SLA": true, "SMTP": true, "SQL": true, "SSH": true, "TCP": true,
	"TLS": true, "TTL": true, "UDP": true, "UI": true, "UID": true, "UUID": true,
	"URI": true, "URL": true, "UTF8": true, "VM": true, "XML": true, "XMPP": true,
	"XSRF": true, "XSS": true,
}

// words splits snake_case, kebab-case, dotted and camelCase names into words.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 &&
			(unicode.IsLower(cur[len(cur)-1]) || unicode.IsDigit(cur[len(cur)-1]) ||
				(i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// camel turns a name into an exported Go name: mutex_acquire → MutexAcquire,
// ttl → TTL, owner_id → OwnerID, OVER_LIMIT → OverLimit.
func camel(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		up := strings.ToUpper(w)
		if commonInitialisms[up] {
			b.WriteString(up)
			continue
		}
		rs := []rune(strings.ToLower(w))
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// lowerCamel turns a name into an unexported Go name: lock_id → lockID,
// TTL → ttl, URLPath → urlPath.
func lowerCamel(s string) string {
	ws := words(s)
	if len(ws) == 0 {
		return ""
	}
	first := strings.ToLower(ws[0])
	rest := camel(strings.Join(ws[1:], "_"))
	return first + rest
}

// reservedParamNames are names a generated function cannot use for a
// parameter: keywords, predeclared identifiers, imported package names and the
// function's own parameters and locals.
var reservedParamNames = func() map[string]bool {
	m := map[string]bool{
		// parameters and locals of generated functions
		"ctx": true, "c": true, "keys": true, "args": true, "resp": true, "err": true,
		"v": true, "ok": true, "calls": true, "out": true, "argsBuf": true,
		// imported packages
		"context": true, "rueidis": true, "strconv": true, "time": true, "errors": true,
		"sync": true, "fmt": true, "strings": true,
	}
	for _, s := range []string{
		"any", "append", "bool", "byte", "cap", "clear", "close", "comparable", "complex",
		"complex128", "complex64", "copy", "delete", "error", "false", "float32", "float64",
		"imag", "int", "int16", "int32", "int64", "int8", "iota", "len", "make", "max", "min",
		"new", "nil", "panic", "print", "println", "real", "recover", "rune", "string", "true",
		"uint", "uint16", "uint32", "uint64", "uint8", "uintptr",
	} {
		m[s] = true
	}
	return m
}()

// paramName is the Go parameter name of a key or argument.
func paramName(name string) string {
	n := lowerCamel(name)
	if token.IsKeyword(n) || reservedParamNames[n] {
		n += "_"
	}
	return n
}

// unexported lowers the first letter of an exported Go name, keeping a
// leading initialism together: TTLCheck → ttlCheck, MutexAcquire → mutexAcquire.
func unexported(name string) string {
	return lowerCamel(name)
}

// isIdent reports whether s is a valid annotation name: ASCII letters, digits
// and underscores, not starting with a digit.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// isExportedIdent reports whether s is an exported Go identifier (ASCII).
func isExportedIdent(s string) bool {
	return isIdent(s) && s[0] >= 'A' && s[0] <= 'Z' && !token.IsKeyword(s)
}

// goIdentErr says why an annotation name gives no Go identifier (camel and
// lowerCamel drop underscores: _ gives "", _1 gives 1); "" when it does.
func goIdentErr(s string) string {
	if !token.IsIdentifier(camel(s)) { // lowerCamel's keywords get a _ (paramName)
		return "it gives no Go identifier; start it with a letter"
	}
	return ""
}
