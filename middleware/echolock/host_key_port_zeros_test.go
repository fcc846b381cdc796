package echolock_test

import "testing"

// TestHostHeaderKeyPortLeadingZeros: a port is a decimal number, leading
// zeros included (RFC 3986, 3.2.3: net.SplitHostPort and strconv.Atoi read
// "0080" as 80), so "Host: shop-a.example:0080" names shop-a.example as
// ":80" does, and "shop-a.example:08080" the host's port 8080.
func TestHostHeaderKeyPortLeadingZeros(t *testing.T) {
	t.Parallel()
	checkHostSpellings(t, []string{"shop-a.example", "shop-a.example:8080"}, "host and port are",
		[]string{"shop-a.example:0080", "shop-a.example:00443", "shop-a.example:08080"},
		[]string{"shop-a.example:0", "shop-a.example:8", "shop-a.example:044"})
}
