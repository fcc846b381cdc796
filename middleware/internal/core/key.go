package core

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scriptlock/scriptlock/internal/layout"
)

// DefaultMaxKeyLen is the longest request key accepted by default, in bytes,
// before escaping.
const DefaultMaxKeyLen = 256

// DefaultKeyPrefix is the prefix lock keys derived from requests get unless
// configured otherwise. Echo and gRPC share it, so an HTTP and a gRPC endpoint
// locking the same order id exclude each other.
const DefaultKeyPrefix = "scriptlock:req:"

var (
	// ErrKeyMissing: the configured key source yielded nothing.
	ErrKeyMissing = errors.New("request key missing")
	// ErrKeyInvalid: the request key is too long, not valid UTF-8 or contains
	// control characters. Errors returned by ValidateKey wrap it.
	ErrKeyInvalid = errors.New("request key invalid")
)

// ValidateKey checks an untrusted request key: non-empty, at most maxLen bytes
// (DefaultMaxKeyLen when maxLen <= 0), valid UTF-8 and free of control
// characters (C0, DEL, C1), format characters (Unicode Cf: zero-width
// spaces, bidi controls, ...) and line/paragraph separators (Zl, Zp). The
// error wraps ErrKeyMissing or ErrKeyInvalid.
func ValidateKey(raw string, maxLen int) error {
	if maxLen <= 0 {
		maxLen = DefaultMaxKeyLen
	}
	if raw == "" {
		return ErrKeyMissing
	}
	if len(raw) > maxLen {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrKeyInvalid, len(raw), maxLen)
	}
	for i, r := range raw {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(raw[i:]); size == 1 {
				return fmt.Errorf("%w: invalid UTF-8 at byte %d", ErrKeyInvalid, i)
			}
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character at byte %d", ErrKeyInvalid, i)
		}
		// Invisible characters would make keys that look alike ("1" and
		// "1\u200b") lock different names.
		if unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Errorf("%w: invisible character %U at byte %d", ErrKeyInvalid, r, i)
		}
	}
	return nil
}

// escaped reports the bytes EscapeKey percent-encodes.
func escaped(b byte) bool {
	switch b {
	case '%', '{', '}', ':', '*', '?', '[', ']', '\\':
		return true
	}
	return false
}

const hexDigits = "0123456789ABCDEF"

// EscapeKey percent-encodes '%', '{', '}', ':', '*', '?', '[', ']' and '\' in
// s. The result never contains any of those bytes except '%' as the start of
// an escape, and UnescapeKey(EscapeKey(s)) == s for every s.
func EscapeKey(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if escaped(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escaped(c) {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// UnescapeKey reverses EscapeKey, and the "%74" that Key may end a key
// with. It fails on input neither can produce.
func UnescapeKey(s string) (string, error) {
	if rest, ok := strings.CutSuffix(s, "%74"); ok && strings.HasSuffix("timeou", rest) {
		return rest + "t", nil
	}
	if !strings.Contains(s, "%") {
		for i := 0; i < len(s); i++ {
			if escaped(s[i]) {
				return "", fmt.Errorf("%w: unescaped %q", ErrKeyInvalid, s[i])
			}
		}
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			if escaped(c) {
				return "", fmt.Errorf("%w: unescaped %q", ErrKeyInvalid, c)
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("%w: truncated escape", ErrKeyInvalid)
		}
		hi, lo := strings.IndexByte(hexDigits, s[i+1]), strings.IndexByte(hexDigits, s[i+2])
		if hi < 0 || lo < 0 || !escaped(byte(hi<<4|lo)) {
			return "", fmt.Errorf("%w: bad escape %q", ErrKeyInvalid, s[i:i+3])
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	return b.String(), nil
}

// CanonicalInteger returns the plain decimal of a key that spells an integer
// the way strconv.Atoi reads one (an optional sign, then ASCII digits), or
// PostgreSQL's integer types do (from PostgreSQL 16 also in hexadecimal,
// octal or binary, "0x2A", "0o52", "0b101010", and with single underscores
// between digits, "1_000"; spaces around it are skipped): "042", "+42",
// " 42 ", "0x2A" and "42" are "42", "-0" and "00" are "0". A handler reading
// its id with strconv.Atoi (or a JSON ",string" int field), or passing it to
// an integer column, reads them as one order, so they must take one lock.
// Any other key is returned as is.
func CanonicalInteger(s string) string {
	d := strings.Trim(s, " ")
	neg := false
	if d != "" && (d[0] == '+' || d[0] == '-') {
		neg, d = d[0] == '-', d[1:]
	}
	base := 10
	if len(d) > 2 && d[0] == '0' {
		switch d[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 10 {
			d = d[2:]
		}
	}
	d, ok := integerDigits(d, base)
	if !ok {
		return s
	}
	if base != 10 {
		var n big.Int
		n.SetString(d, base)
		d = n.Text(10)
	}
	d = strings.TrimLeft(d, "0")
	switch {
	case d == "":
		return "0"
	case neg:
		return "-" + d
	}
	return d
}

// integerDigits returns the digits of d, an integer's digits in base as
// PostgreSQL reads them: at least one, an underscore allowed between two of
// them and, after a base prefix (base other than 10), before the first. ok
// is false for anything else.
func integerDigits(d string, base int) (string, bool) {
	if d == "" || d[len(d)-1] == '_' || strings.Contains(d, "__") || base == 10 && d[0] == '_' {
		return "", false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		var v int
		switch {
		case c == '_':
			continue
		case c >= '0' && c <= '9':
			v = int(c - '0')
		case c >= 'a' && c <= 'f':
			v = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = int(c-'A') + 10
		default:
			return "", false
		}
		if v >= base {
			return "", false
		}
	}
	return strings.ReplaceAll(d, "_", ""), true
}

// CanonicalHost returns a request's host (a Host header or gRPC's
// :authority, host[:port]) in one spelling per host: in lower case (a host
// is case-insensitive), without the dot that ends a fully qualified name,
// and without an empty port or the default port of http or https, which
// name the same host as no port (RFC 9110, 4.2.3).
// Both default ports are dropped whatever the scheme: behind a proxy that
// ends TLS the server cannot tell, and merging them only over-locks.
func CanonicalHost(host string) string {
	if !utf8.ValidString(host) {
		// strings.ToLower would turn each bad byte into U+FFFD, a valid
		// key that different hosts share: left as is, ValidateKey refuses it.
		return host
	}
	h := strings.ToLower(host)
	// The port follows the last ':' not inside an IPv6 literal's brackets.
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		port := h[i+1:]
		if port != "" && strings.Trim(port, "0123456789") == "" {
			// A port is a decimal number: "0080" is port 80 (RFC 3986,
			// 3.2.3), as net.SplitHostPort and strconv.Atoi read it.
			if port = strings.TrimLeft(port, "0"); port == "" {
				port = "0"
			}
		}
		switch port {
		case "", "80", "443":
			return fqdn(h[:i])
		default:
			return fqdn(h[:i]) + ":" + port
		}
	}
	return fqdn(h)
}

// fqdn drops the dot that ends a fully qualified name ("shop.example."):
// it names the same host as the name without it (RFC 1034, 3.1).
func fqdn(host string) string {
	if len(host) > 1 && host[len(host)-1] == '.' && host[len(host)-2] != '.' {
		return host[:len(host)-1]
	}
	return host
}

// CanonicalKey returns one spelling for the spellings of a key that the
// usual parsers of ids read as one: CanonicalInteger for integers,
// CanonicalUUID for UUIDs. A UUID whose 32 hex digits are all decimal
// digits takes the plain decimal of those digits: spelled without dashes
// ("00000000000000000000000000000042") it is an integer too, which a
// handler passing it to an integer column reads as 42, so every spelling of
// that UUID and of that integer share one lock. Any other key is returned
// as is.
func CanonicalKey(s string) string {
	if u, ok := CanonicalUUID(s); ok {
		if d := strings.ReplaceAll(u, "-", ""); strings.Trim(d, "0123456789") == "" {
			return CanonicalInteger(d)
		}
		return u
	}
	return CanonicalInteger(s)
}

// CanonicalUUID returns the lower-case dashed form of a key in any spelling
// github.com/google/uuid's Parse or PostgreSQL's uuid type reads as one
// UUID: upper or lower case, with dashes, without ("a0eebc99...0a11"), with
// a dash after any group of four hex digits (PostgreSQL), in braces (or,
// for the dashed form, any one byte each side, as uuid.Parse reads them) or
// after "urn:uuid:". ok is false for any other key.
func CanonicalUUID(s string) (string, bool) {
	switch len(s) {
	case 36 + 9:
		if strings.EqualFold(s[:9], "urn:uuid:") {
			return dashedUUID(s[9:])
		}
	case 36 + 2:
		// uuid.Parse skips the first and last bytes unread, braces or not.
		if u, ok := dashedUUID(s[1:37]); ok {
			return u, true
		}
	case 36:
		if u, ok := dashedUUID(s); ok {
			return u, true
		}
	}
	return postgresUUID(s)
}

// dashedUUID returns s, 36 bytes with dashes at 8, 13, 18 and 23 and hex
// digits elsewhere, in lower case.
func dashedUUID(s string) (string, bool) {
	var b [36]byte
	for i := 0; i < 36; i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return "", false
		}
		b[i] = c
	}
	return string(b[:]), true
}

// postgresUUID reads s as PostgreSQL's uuid input does: optionally in
// braces, 32 hex digits, each group of four but the last optionally
// followed by one dash. The result is the lower-case dashed form.
func postgresUUID(s string) (string, bool) {
	if len(s) < 32 || len(s) > 32+7+2 {
		return "", false
	}
	if s[0] == '{' {
		if s[len(s)-1] != '}' {
			return "", false
		}
		s = s[1 : len(s)-1]
	}
	var b [36]byte
	n, j := 0, 0 // hex digits read, bytes of b written
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-':
			// After a group of four, not the last, and not after a dash.
			if n == 0 || n%4 != 0 || n == 32 || s[i-1] == '-' {
				return "", false
			}
			continue
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return "", false
		}
		if n == 32 {
			return "", false
		}
		if n == 8 || n == 12 || n == 16 || n == 20 {
			b[j] = '-'
			j++
		}
		b[j] = c
		j++
		n++
	}
	if n != 32 {
		return "", false
	}
	return string(b[:]), true
}

// Key validates raw with ValidateKey and returns prefix +
// EscapeKey(CanonicalKey(raw)), except that a key ending in ":timeout"
// ("orders:" + "timeout") ends in ":timeou%74" instead. scriptlock refuses
// names of that form, which are a PermitSemaphore's lease set
// ("{orders}:timeout"; a brace in a client's own key prefix is enough), so
// such a request would be refused as if its key were invalid. EscapeKey
// never writes "%74", so two keys share a name only when they spell the
// same integer or UUID (or a UUID of decimal digits and the integer those
// digits spell).
func Key(prefix, raw string, maxLen int) (string, error) {
	if err := ValidateKey(raw, maxLen); err != nil {
		return "", err
	}
	key := prefix + EscapeKey(CanonicalKey(raw))
	if strings.HasSuffix(key, ":timeout") {
		key = key[:len(key)-1] + "%74"
	}
	return key, nil
}

// CheckPrefix validates a configured key prefix: together with a fully escaped
// key of maxLen bytes it must fit within limit bytes (scriptlock.MaxNameLen for
// lock names), and its braces, if any, must make a complete, non-empty hash
// tag ("{orders}:"). Escaped keys hold no braces, so a prefix with a '{' not
// closed by a later '}', an empty tag "{}" or a '}' before any '{' would make
// every lock name invalid: each request would be refused as if its key were
// bad. So would a prefix that names another lock's companion keys
// ("redisson_lock_token:"), or under which an integer key does
// ("orders:rwlock_timeout:" + "42", a read hold's lease key).
func CheckPrefix(prefix string, maxLen, limit int) error {
	if maxLen <= 0 {
		maxLen = DefaultMaxKeyLen
	}
	// Divided, not multiplied: 3*maxLen overflows for a huge maxLen.
	if len(prefix) > limit || maxLen > (limit-len(prefix))/3 {
		return fmt.Errorf("key prefix (%d bytes) plus escaped keys of up to %d bytes exceed %d bytes", len(prefix), maxLen, limit)
	}
	switch fault := layout.PrefixTagFault(prefix); {
	case fault != "":
		return fmt.Errorf("key prefix %q: %s", prefix, fault)
	case layout.Companion(prefix + "probe"):
		// Every lock name would be another lock's companion key (its
		// fencing counter, queue, ...), which no lock may take.
		return fmt.Errorf("key prefix %q names another lock's companion keys (fencing counter, queue, latch, ...)", prefix)
	case layout.Companion(prefix + "0"):
		// Every integer key would give a read hold's lease key
		// (...:rwlock_timeout:<n>), which no lock may take either.
		return fmt.Errorf("key prefix %q makes integer keys name read lease keys (...:rwlock_timeout:<n>)", prefix)
	}
	return nil
}
