package echolock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyGzipInsideReplayDecoded: with Echo's Gzip inside the
// middleware (on the route, after Idempotency) the stored answer is the
// compressed one its first client took. A retry whose Accept-Encoding does
// not take gzip gets the answer decoded, without Content-Encoding, not
// bytes it said it cannot read; one that takes gzip, or sends no
// Accept-Encoding (any coding then), gets it as stored.
func TestIdempotencyGzipInsideReplayDecoded(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		return c.String(http.StatusCreated, "charged 100")
	}, echolock.Idempotency(store), middleware.Gzip())
	srv := serve(t, e)
	// An explicit Accept-Encoding keeps net/http from decompressing.
	first := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "Accept-Encoding", "gzip")
	if first.code != http.StatusCreated || first.header.Get(echo.HeaderContentEncoding) != "gzip" {
		t.Fatalf("first: %d Content-Encoding %q, want a gzip 201", first.code, first.header.Get(echo.HeaderContentEncoding))
	}
	for _, ae := range []string{"identity", "br, gzip;q=0", "*;q=0, identity"} {
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "Accept-Encoding", ae)
		if r.header.Get(echolock.HeaderIdempotentReplayed) != "true" || r.code != http.StatusCreated {
			t.Fatalf("replay, Accept-Encoding %q: %d, replayed=%q", ae, r.code, r.header.Get(echolock.HeaderIdempotentReplayed))
		}
		if ce := r.header.Get(echo.HeaderContentEncoding); ce != "" || r.body != "charged 100" {
			t.Errorf("replay, Accept-Encoding %q: Content-Encoding %q body %q; want the plain body", ae, ce, r.body)
		}
	}
	for _, ae := range []string{"gzip", "GZIP;q=0.5", "*", ""} {
		hdr := []string{"Idempotency-Key", "K"}
		if ae != "" {
			hdr = append(hdr, "Accept-Encoding", ae)
		}
		// Without a header of its own the client sends none: net/http adds
		// its own only when it may decompress, which a header set stops.
		r := doRaw(t, srv, "POST", "/charges", hdr...)
		if r.header.Get(echo.HeaderContentEncoding) != "gzip" || r.body != first.body {
			t.Errorf("replay, Accept-Encoding %q: Content-Encoding %q body %q; want the stored gzip answer", ae, r.header.Get(echo.HeaderContentEncoding), r.body)
		}
	}
}

// doRaw is do with a client that neither adds Accept-Encoding nor
// decompresses: the request carries only the headers hdr names.
func doRaw(t *testing.T, srv *httptest.Server, method, path string, hdr ...string) result {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, string(b), resp.Header}
}

// TestIdempotencyGzipInsideReplayVary: a replay of an answer stored
// gzip-compressed is sent compressed or decoded by the retry's
// Accept-Encoding, so it says Vary: Accept-Encoding, as the first answer
// (from Gzip) did: a cache that kept one of them must not serve it to a
// client whose Accept-Encoding would get the other.
func TestIdempotencyGzipInsideReplayVary(t *testing.T) {
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		return c.String(http.StatusCreated, "charged 100")
	}, echolock.Idempotency(store), middleware.Gzip())
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "Accept-Encoding", "gzip")
	if !varyAcceptEncoding(first.header) {
		t.Fatalf("first: Vary %q, want Accept-Encoding", first.header.Values(echo.HeaderVary))
	}
	for _, ae := range []string{"identity", "gzip"} {
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "Accept-Encoding", ae)
		if r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
			t.Fatalf("replay, Accept-Encoding %q: not replayed (%d)", ae, r.code)
		}
		if !varyAcceptEncoding(r.header) {
			t.Errorf("replay, Accept-Encoding %q: Vary %q; want Accept-Encoding, as the answer depends on it", ae, r.header.Values(echo.HeaderVary))
		}
	}
}

func varyAcceptEncoding(h http.Header) bool {
	for _, v := range h.Values(echo.HeaderVary) {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, echo.HeaderAcceptEncoding) {
				return true
			}
		}
	}
	return false
}
