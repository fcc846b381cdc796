package core

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateKey(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{"order-42", nil},
		{"ünïcødé", nil},
		{"{tag}", nil},
		{strings.Repeat("a", DefaultMaxKeyLen), nil},
		{"", ErrKeyMissing},
		{strings.Repeat("a", DefaultMaxKeyLen+1), ErrKeyInvalid},
		{"a\x00b", ErrKeyInvalid},
		{"a\nb", ErrKeyInvalid},
		{"a\x7fb", ErrKeyInvalid},
		{"a\u0085b", ErrKeyInvalid},
		{"a\xffb", ErrKeyInvalid},
		{"1\u200b", ErrKeyInvalid},
		{"a\u2028b", ErrKeyInvalid},
		{"a\u2029b", ErrKeyInvalid},
		{"\ufeff1", ErrKeyInvalid},
		{"a\u202eb", ErrKeyInvalid},
	}
	for _, c := range cases {
		err := ValidateKey(c.in, 0)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("ValidateKey(%q) = %v, want %v", c.in, err, c.want)
		}
	}
	if err := ValidateKey("\uFFFD", 0); err != nil {
		t.Errorf("a literal U+FFFD is valid UTF-8: %v", err)
	}
}

func TestEscapeKey(t *testing.T) {
	cases := map[string]string{
		"42":          "42",
		"{42}":        "%7B42%7D",
		"a:b":         "a%3Ab",
		"100%":        "100%25",
		"%7B":         "%257B",
		"x*?[]\\":     "x%2A%3F%5B%5D%5C",
		"ключ-{slot}": "ключ-%7Bslot%7D",
	}
	for in, want := range cases {
		if got := EscapeKey(in); got != want {
			t.Errorf("EscapeKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzKey checks the two promises Key makes about untrusted input: distinct
// inputs never map to the same Redis key, and the result stays inside the
// prefix: no hash tag, no ':' that could reach another namespace, no glob
// character.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"42", "{42}", "%7B42%7D", "a:b", "a%3Ab", "%", "%%", "%2", "}{", "\xff", "é", "*", "timeout", "timeou%74", "%74", "042", "+42", "-0", "-", "+", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}"} {
		f.Add(s, s+"x")
		f.Add(s, EscapeKey(s))
	}
	const prefix = "lock:orders:"
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, erra := Key(prefix, a, 0)
		kb, errb := Key(prefix, b, 0)
		for _, c := range []struct {
			in, key string
			err     error
		}{{a, ka, erra}, {b, kb, errb}} {
			if c.err != nil {
				if ValidateKey(c.in, 0) == nil {
					t.Fatalf("Key(%q) failed but the key is valid: %v", c.in, c.err)
				}
				continue
			}
			if !utf8.ValidString(c.in) {
				t.Fatalf("Key accepted invalid UTF-8 %q", c.in)
			}
			if !strings.HasPrefix(c.key, prefix) {
				t.Fatalf("Key(%q) = %q does not start with the prefix", c.in, c.key)
			}
			rest := c.key[len(prefix):]
			if strings.ContainsAny(rest, "{}:*?[]\\") {
				t.Fatalf("Key(%q) = %q: escaped part contains a reserved byte", c.in, c.key)
			}
			if got, err := UnescapeKey(rest); err != nil || got != CanonicalKey(c.in) {
				t.Fatalf("UnescapeKey(%q) = %q, %v; want %q", rest, got, err, CanonicalKey(c.in))
			}
		}
		// Spellings of one integer ("042", "+42", "42") or UUID share a
		// key, as a handler parsing them reads one id; any other distinct
		// inputs never do.
		if erra == nil && errb == nil && CanonicalKey(a) != CanonicalKey(b) && ka == kb {
			t.Fatalf("distinct inputs %q and %q share key %q", a, b, ka)
		}
	})
}

func TestCheckPrefix(t *testing.T) {
	for _, c := range []struct {
		prefix string
		ok     bool
	}{
		{"orders:", true},
		{"{orders}:", true},
		{"app:{orders}:", true},
		{"orders{", false},
		{"orders{}:", false},
		{"orders}:", false},
		{"a}{b:", false},
		{strings.Repeat("p", 10), true},
	} {
		if err := CheckPrefix(c.prefix, 0, 1024); (err == nil) != c.ok {
			t.Errorf("CheckPrefix(%q) = %v, want ok=%v", c.prefix, err, c.ok)
		}
	}
	if err := CheckPrefix("p:", 400, 1024); err == nil {
		t.Error("CheckPrefix accepted keys whose escaped form exceeds the limit")
	}
}

// TestKeyTimeout: a key that would end in ":timeout", the form of a
// PermitSemaphore's lease set that scriptlock refuses as a lock name, ends
// in "%74" instead, which no other input escapes to.
func TestKeyTimeout(t *testing.T) {
	for _, c := range []struct{ prefix, raw, want string }{
		{"orders:", "timeout", "orders:timeou%74"},
		{"{orders}:", "timeout", "{orders}:timeou%74"},
		{"orders:", "timeou%74", "orders:timeou%2574"},
		{"orders:", "xtimeout", "orders:xtimeout"},
		{"orders:t", "imeout", "orders:timeou%74"},
	} {
		got, err := Key(c.prefix, c.raw, 0)
		if err != nil || got != c.want {
			t.Errorf("Key(%q, %q) = %q, %v; want %q", c.prefix, c.raw, got, err, c.want)
			continue
		}
		if u, err := UnescapeKey(got[len(c.prefix):]); err != nil || u != c.raw {
			t.Errorf("UnescapeKey(%q) = %q, %v; want %q", got[len(c.prefix):], u, err, c.raw)
		}
	}
	if _, err := UnescapeKey("abc%74"); err == nil {
		t.Error("UnescapeKey accepted a %74 that Key cannot produce")
	}
}

// TestCheckPrefixHugeMaxLen: a MaxKeyLen so large that three times it
// overflows int is refused like any other too large for lock names; it
// wrapped to a negative length and passed.
func TestCheckPrefixHugeMaxLen(t *testing.T) {
	for _, n := range []int{1 << 62, math.MaxInt / 3 * 2, math.MaxInt} {
		if err := CheckPrefix("p:", n, 1024); err == nil {
			t.Errorf("CheckPrefix accepted MaxKeyLen %d", n)
		}
	}
}

// TestCanonicalInteger: every spelling strconv.Atoi reads as one integer is
// one key; anything else is kept as it is.
func TestCanonicalInteger(t *testing.T) {
	for in, want := range map[string]string{
		"42": "42", "042": "42", "+42": "42", "0000042": "42", "-42": "-42", "-042": "-42",
		"0": "0", "00": "0", "-0": "0", "+0": "0", "-000": "0",
		"-": "-", "+": "+", "": "", "4.2": "4.2", "42a": "42a", "4 2": "4 2", "  ": "  ", " - 42": " - 42",
		"--1": "--1", "\u0664\u0662": "\u0664\u0662",
		"123456789012345678901234567890": "123456789012345678901234567890",
		// PostgreSQL's integer input skips spaces around the number: a
		// handler passing the id to an integer column reads these as 42.
		" 42": "42", "42 ": "42", " +042 ": "42", " -0 ": "0",
		// From PostgreSQL 16 its integer input also reads other bases and
		// underscores between digits.
		"0x2A": "42", "0X2a": "42", "-0x2A": "-42", "0o52": "42", "0b101010": "42", "0x_2A": "42",
		"1_000": "1000", "0b_1": "1", "0xFFFFFFFFFFFFFFFFFFFF": "1208925819614629174706175",
		"0x": "0x", "0x_": "0x_", "0x2A_": "0x2A_", "1__000": "1__000", "_1": "_1", "1_": "1_",
		"0b12": "0b12", "0o8": "0o8", "0xG": "0xG", "2A": "2A",
	} {
		if got := CanonicalInteger(in); got != want {
			t.Errorf("CanonicalInteger(%q) = %q, want %q", in, got, want)
		}
		if n, err := strconv.Atoi(in); err == nil && CanonicalInteger(in) != strconv.Itoa(n) {
			t.Errorf("CanonicalInteger(%q) = %q, strconv.Atoi reads %d", in, CanonicalInteger(in), n)
		}
	}
}

// TestCanonicalUUID: the spellings of one UUID that uuid.Parse reads alike
// are one key; anything else is no UUID.
func TestCanonicalUUID(t *testing.T) {
	const want = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	for _, in := range []string{
		want, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
		"{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}", "(" + want + ")", "urn:uuid:" + want, "URN:uuid:" + want,
	} {
		if got, ok := CanonicalUUID(in); !ok || got != want {
			t.Errorf("CanonicalUUID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99x9c0b-4ef8-bb6d-6bb9bd380a11",
		"g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		"urn:uuix:" + want, "a0eebc999c0b4ef8bb6d6bb9bd380a1g",
	} {
		if got, ok := CanonicalUUID(in); ok {
			t.Errorf("CanonicalUUID(%q) = %q, want no UUID", in, got)
		}
	}
}

// TestCanonicalUUIDPostgres: the spellings PostgreSQL's uuid type reads as
// one UUID (a hyphen, or none, after any group of four hex digits; the
// whole in braces) are one key, as a handler passing the id to a uuid
// column reads one order; malformed ones are no UUID.
func TestCanonicalUUIDPostgres(t *testing.T) {
	const want = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	for _, in := range []string{
		"a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
		"{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}",
		"a0eebc99-9c0b4ef8bb6d6bb9bd380a11",
	} {
		if got, ok := CanonicalUUID(in); !ok || got != want {
			t.Errorf("CanonicalUUID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"a0eebc99--9c0b4ef8bb6d6bb9bd380a11", "-a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0eebc999c0b4ef8bb6d6bb9bd380a11-",
		"a0eeb-c999c0b4ef8bb6d6bb9bd380a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0eebc999c0b4ef8bb6d6bb9bd380a11}",
		"{a0eebc999c0b4ef8bb6d6bb9bd380a11)", "{}", "{", "a0eebc999c0b4ef8bb6d6bb9bd380a1122",
		"{{a0eebc999c0b4ef8bb6d6bb9bd380a11}}",
	} {
		if got, ok := CanonicalUUID(in); ok {
			t.Errorf("CanonicalUUID(%q) = %q, want no UUID", in, got)
		}
	}
}

// TestCanonicalKeyDecimalUUID: 32 decimal digits are a UUID and an integer
// alike, so that UUID's spellings and that integer's share one key; a UUID
// with a hex letter stays a UUID.
func TestCanonicalKeyDecimalUUID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000000000000000000000000042":              "42",
		"00000000-0000-0000-0000-000000000042":          "42",
		"{00000000000000000000000000000042}":            "42",
		"urn:uuid:00000000-0000-0000-0000-000000000042": "42",
		"042": "42", "0x2A": "42",
		"00000000000000000000000000000000":     "0",
		"12345678123412341234123456789012":     "12345678123412341234123456789012",
		"12345678-1234-1234-1234-123456789012": "12345678123412341234123456789012",
		"0000000000000000000000000000004A":     "00000000-0000-0000-0000-00000000004a",
	} {
		if got := CanonicalKey(in); got != want {
			t.Errorf("CanonicalKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCanonicalHost: one spelling per host, never merging two hosts or a
// host's other ports.
func TestCanonicalHost(t *testing.T) {
	for in, want := range map[string]string{
		"shop.example": "shop.example", "SHOP.Example": "shop.example", "shop.example:": "shop.example",
		"shop.example:80": "shop.example", "shop.example:443": "shop.example", "shop.example:8443": "shop.example:8443",
		"[2001:DB8::A]": "[2001:db8::a]", "[2001:db8::a]:443": "[2001:db8::a]", "[2001:db8::80]": "[2001:db8::80]",
		"[2001:db8::a]:8080": "[2001:db8::a]:8080", "": "",
		"shop.example:0080": "shop.example", "shop.example:00443": "shop.example", "shop.example:08080": "shop.example:8080",
		"shop.example:00": "shop.example:0", "shop.example:044": "shop.example:44", "[2001:db8::a]:0443": "[2001:db8::a]",
		"shop.example.": "shop.example", "SHOP.example.:443": "shop.example", "shop.example.:8080": "shop.example:8080",
		"shop.example..": "shop.example..", ".": ".",
	} {
		if got := CanonicalHost(in); got != want {
			t.Errorf("CanonicalHost(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckPrefixReadLeaseForm: a prefix ending in ":rwlock_timeout:" makes
// every integer key a name of the form of a read hold's lease key
// (<name>:<field>:rwlock_timeout:<n>), which scriptlock refuses as a lock
// name: every request with an integer key would be answered as if its key
// were invalid. Such a prefix is refused when the middleware is built.
func TestCheckPrefixReadLeaseForm(t *testing.T) {
	for _, prefix := range []string{"orders:rwlock_timeout:", "{orders}:x:rwlock_timeout:"} {
		if err := CheckPrefix(prefix, 0, 1024); err == nil {
			key, _ := Key(prefix, "42", 0)
			t.Errorf("CheckPrefix(%q) accepted a prefix under which the integer key 42 locks %q, a read lease key's form", prefix, key)
		}
	}
	if err := CheckPrefix("orders:rwlock_timeout", 0, 1024); err != nil {
		t.Errorf("CheckPrefix refused a prefix no key completes to a read lease key's form: %v", err)
	}
}
