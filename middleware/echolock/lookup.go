package echolock

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// extractor returns the key found in one source, or "" when the source is absent.
type extractor func(c echo.Context) (string, error)

var errBodyTooLarge = errors.New("request body too large for the key lookup")

// errNotJSON: the body a json: lookup read does not begin with a JSON value.
var errNotJSON = errors.New("body is not JSON")

// notJSONBody is what a json: source yields for a body that is not JSON and
// was not declared JSON (a form, plain text): no key from this source, so
// the next one is tried. When no source yields a key, it is the answer (a
// lock key invalid, 400). No handler decoding such a body with encoding/json
// reads a key from it, so taking the key from another source locks what the
// handler works on.
type notJSONBody struct{ error }

func (e notJSONBody) Unwrap() error { return e.error }

// lookupKey returns the key of the first extractor that yields one. An error
// stops the lookup, except notJSONBody, which is returned only when no later
// source yields a key either.
func lookupKey(c echo.Context, extractors []extractor) (string, error) {
	var skipped error
	for _, ex := range extractors {
		v, err := ex(c)
		if nj := (notJSONBody{}); errors.As(err, &nj) {
			if skipped == nil {
				skipped = err
			}
			continue
		}
		if err != nil || v != "" {
			return v, err
		}
	}
	return "", skipped
}

// bodyTooLarge reports whether err comes from a body limit: one set before
// the lookup read the body (net/http's MaxBytesReader or Echo's BodyLimit, a
// 413 HTTPError), or the limits of net/http's form parsing (10 MB of a
// url-encoded form, multipart.ErrMessageTooLarge), so the client gets 413,
// not 400.
func bodyTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe) || chainStatus(err) == http.StatusRequestEntityTooLarge ||
		errors.Is(err, multipart.ErrMessageTooLarge) || formTooLarge(err)
}

// formTooLarge reports whether err, or an error it wraps, is the one
// Request.ParseForm returns for a url-encoded body over its 10 MB: an
// errors.New of net/http, known only by its text.
func formTooLarge(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "http: POST too large" {
			return true
		}
		if m, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range m.Unwrap() {
				if formTooLarge(e) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// parseLookup turns "param:id,header:X-Order-Id,query:id,form:id,cookie:id,json:order.id"
// into extractors tried in order.
func parseLookup(lookup string, maxBody int64) ([]extractor, error) {
	var out []extractor
	for _, src := range strings.Split(lookup, ",") {
		src = strings.TrimSpace(src)
		kind, name, ok := strings.Cut(src, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("echolock: key lookup %q is not <source>:<name>", src)
		}
		switch kind {
		case "param":
			out = append(out, func(c echo.Context) (string, error) { return pathParam(c, name) })
		case "header":
			// A source no request can carry would answer every request 400
			// as if the client had left the key out: refused here instead.
			if !validHeaderName(name) {
				return nil, fmt.Errorf("%w: key lookup %q: %q is not a header field name", ErrConfig, src, name)
			}
			h := textproto.CanonicalMIMEHeaderKey(name)
			if h == "Host" {
				// net/http moves Host out of the header map into
				// Request.Host: the header map never holds it. Its
				// spellings of one host take one lock.
				out = append(out, func(c echo.Context) (string, error) { return core.CanonicalHost(c.Request().Host), nil })
				continue
			}
			out = append(out, func(c echo.Context) (string, error) { return single(c.Request().Header[h]) })
		case "query":
			out = append(out, func(c echo.Context) (string, error) { return single(c.QueryParams()[name]) })
		case "form":
			out = append(out, func(c echo.Context) (string, error) { return formField(c, name, maxBody) })
		case "cookie":
			if !validHeaderName(name) { // cookie names are tokens too
				return nil, fmt.Errorf("%w: key lookup %q: %q is not a cookie name", ErrConfig, src, name)
			}
			out = append(out, func(c echo.Context) (string, error) {
				// Every cookie of that name, as for a header or query
				// key: "id=1; id=2" names two orders, and a handler
				// reading the cookies into a map works on the last one,
				// while c.Cookie reads the first.
				var vs []string
				for _, ck := range c.Cookies() {
					if ck.Name == name {
						vs = append(vs, ck.Value)
					}
				}
				return single(vs)
			})
		case "json":
			path := strings.Split(name, ".")
			if slices.Contains(path, "") {
				// No struct field decodes from a member named "".
				return nil, fmt.Errorf("%w: key lookup %q has an empty member name", ErrConfig, src)
			}
			out = append(out, func(c echo.Context) (string, error) { return jsonField(c, path, maxBody) })
		default:
			return nil, fmt.Errorf("echolock: unknown key source %q in %q", kind, src)
		}
	}
	return out, nil
}

// pathParam returns the path parameter name decoded, one value per spelling
// of it. Echo v4 routes on the request's RawPath when net/url keeps one (the
// path was not sent in its default encoding: "/orders/%31%32%33",
// lower-case escapes, ...) and then hands parameters as sent; otherwise it
// routes on the decoded Path and hands them decoded. A handler decoding the
// parameter reads "123" either way, so a parameter taken from RawPath is
// percent-decoded here (url.PathUnescape) and one that does not decode is
// invalid. A parameter taken from Path is already decoded and is not
// decoded twice ("/orders/%2531" is the order "%31", not "1").
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" || !strings.Contains(v, "%") {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", fmt.Errorf("%w: path parameter %q: %w", core.ErrKeyInvalid, name, err)
	}
	return u, nil
}

// single returns the value of a source that may repeat (headers, query
// parameters): one distinct value, or an error when they disagree.
func single(vs []string) (string, error) {
	if len(vs) == 0 {
		return "", nil
	}
	for _, v := range vs[1:] {
		if v != vs[0] {
			return "", fmt.Errorf("%w: %d different values", core.ErrKeyInvalid, len(vs))
		}
	}
	return vs[0], nil
}

// jsonField reads the request body (at most maxBody bytes), puts it back for
// the handler, and returns the key at path (see jsonLookup). The body is read
// as JSON whatever its Content-Type, as a handler decoding it with
// encoding/json would; one that does not begin with a JSON value (over
// maxBody: whose first maxBody bytes already cannot) is a notJSONBody unless
// its Content-Type declares JSON, in which case it is an invalid key.
func jsonField(c echo.Context, path []string, maxBody int64) (string, error) {
	req := c.Request()
	if req.Body == nil || req.Body == http.NoBody {
		return "", nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	rest := req.Body
	req.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil {
		return "", fmt.Errorf("%w: reading body: %w", core.ErrKeyInvalid, err)
	}
	declared := declaredJSON(req.Header.Get(echo.HeaderContentType))
	if int64(len(body)) > maxBody {
		if !declared && !jsonPrefix(body) {
			return "", notJSONBody{fmt.Errorf("%w: %w", core.ErrKeyInvalid, errNotJSON)}
		}
		return "", fmt.Errorf("%w (limit %d bytes)", errBodyTooLarge, maxBody)
	}
	key, err := jsonLookup(body, path)
	if !declared && errors.Is(err, errNotJSON) {
		return "", notJSONBody{err}
	}
	if err == nil && key != "" {
		if mt := readsOtherwise(req.Header.Get(echo.HeaderContentType), body); mt != "" {
			// Echo's Bind and FormValue read a body declared a form or
			// XML as that: one that is also JSON could name one key there
			// and another in the form, so that the request locks one while
			// the handler works on the other.
			return "", fmt.Errorf("%w: body declared %s also reads as one, with values, besides JSON naming a key", core.ErrKeyInvalid, mt)
		}
	}
	return key, err
}

// formField returns the form value name (the query string's included, as
// Request.Form has it). A body declared JSON or XML is parsed as no form,
// so the value came from the query string, while Echo's Bind reads the body
// as JSON or XML, where a field tagged form:"id" (named ID) is filled from
// an "id" member or an <ID> element: such a body naming another key is
// refused, one that does not name the key keeps the form's. The
// body (at most maxBody bytes read) is put back for the handler.
func formField(c echo.Context, name string, maxBody int64) (string, error) {
	if _, err := formValues(c); err != nil {
		return "", fmt.Errorf("%w: form: %w", core.ErrKeyInvalid, err)
	}
	v, err := single(c.Request().Form[name])
	req := c.Request()
	ctype := req.Header.Get(echo.HeaderContentType)
	isXML := declaredXML(ctype)
	if err != nil || v == "" || !declaredJSON(ctype) && !isXML || req.Body == nil || req.Body == http.NoBody {
		return v, err
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	rest := req.Body
	req.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil {
		return "", fmt.Errorf("%w: reading body: %w", core.ErrKeyInvalid, err)
	}
	if int64(len(body)) > maxBody {
		return "", fmt.Errorf("%w (limit %d bytes)", errBodyTooLarge, maxBody)
	}
	if isXML {
		if xmlNamesOther(body, name, v) {
			return "", fmt.Errorf("%w: body declared XML names another key than the form", core.ErrKeyInvalid)
		}
		return v, nil
	}
	key, err := jsonLookup(body, []string{name})
	switch {
	case errors.Is(err, errNotJSON):
		return v, nil // no handler reads a key from it
	case err != nil:
		return "", err
	case key != "" && core.CanonicalKey(key) != core.CanonicalKey(v):
		return "", fmt.Errorf("%w: body declared JSON names another key than the form", core.ErrKeyInvalid)
	}
	return v, nil
}

// xmlNamesOther reports whether the XML document body has a child of its
// root element, or an attribute of the root, named name in any case (as a
// field ID, tagged form:"id", is filled from <ID>) whose text is a key other
// than v. Echo's Bind decodes the root element into the handler's struct:
// only those fill its fields, the last one winning, and a field keeps what
// it got before a syntax error. Text is read as encoding/xml reads it into a
// string: the element's own character data, nested elements skipped.
func xmlNamesOther(body []byte, name, v string) bool {
	want := core.CanonicalKey(v)
	other := func(s string) bool { return core.CanonicalKey(s) != want }
	dec := xml.NewDecoder(bytes.NewReader(body))
	depth := 0
	var text *strings.Builder // the matching element's text, while in it
	for {
		t, err := dec.Token()
		if err != nil {
			// End of the root, or of what decodes: Bind got no further.
			return text != nil && other(text.String())
		}
		switch t := t.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				for _, a := range t.Attr {
					if strings.EqualFold(a.Name.Local, name) && other(a.Value) {
						return true
					}
				}
			case depth == 2 && strings.EqualFold(t.Name.Local, name):
				text = new(strings.Builder)
			}
		case xml.CharData:
			if depth == 2 && text != nil {
				text.Write(t)
			}
		case xml.EndElement:
			depth--
			switch {
			case depth == 1 && text != nil:
				if other(text.String()) {
					return true
				}
				text = nil
			case depth == 0:
				return false
			}
		}
	}
}

// readsOtherwise returns the media type of a Content-Type that declares body
// a form or XML when body, read as that, holds values (a form field with a
// value, an XML element), as a JSON body may in its strings; "" otherwise.
// A JSON body that is no such form or XML (sent with a form Content-Type, as
// curl -d does) reads as nothing else, so its JSON key stands. A JSON body
// is never a multipart form, whose boundary lines are no JSON.
func readsOtherwise(ctype string, body []byte) string {
	mt, _, _ := strings.Cut(ctype, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == echo.MIMEApplicationForm:
		// Pairs that do not parse are skipped, as ParseForm skips them.
		vals, _ := url.ParseQuery(string(body))
		for _, vs := range vals {
			for _, v := range vs {
				if v != "" {
					return mt
				}
			}
		}
	case mt == echo.MIMEApplicationXML, mt == echo.MIMETextXML, strings.HasSuffix(mt, "+xml"):
		// encoding/xml skips text before the first element, and stops at
		// the first syntax error.
		dec := xml.NewDecoder(bytes.NewReader(body))
		for {
			t, err := dec.Token()
			if err != nil {
				break
			}
			if _, ok := t.(xml.StartElement); ok {
				return mt
			}
		}
	}
	return ""
}

// declaredJSON reports whether a Content-Type names JSON: application/json
// or a +json type (application/merge-patch+json, ...).
func declaredJSON(ctype string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == echo.MIMEApplicationJSON || strings.HasSuffix(mt, "+json")
}

// declaredXML reports whether a Content-Type names XML, as readsOtherwise
// reads it: application/xml, text/xml or a +xml type.
func declaredXML(ctype string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == echo.MIMEApplicationXML || mt == echo.MIMETextXML || strings.HasSuffix(mt, "+xml")
}

// jsonPrefix reports whether body, cut short, may still begin with a JSON
// value: decoding it ends in a complete value or runs out of input, not in a
// syntax error.
func jsonPrefix(body []byte) bool {
	var v json.RawMessage
	var se *json.SyntaxError
	return !errors.As(json.NewDecoder(bytes.NewReader(body)).Decode(&v), &se)
}

// jsonLookup returns the string or number at path in the JSON document body,
// as a handler decoding body with encoding/json would see it:
//
//   - object member names match the way encoding/json matches struct fields,
//     case-insensitively ("ORDER" is "order"), and an object with two members
//     matching the same name is refused, since encoding/json would let the
//     last one win while a lookup might see the first;
//   - numbers are canonical: -0 and 0, 4.2e1 and 42, 42.0 and 42 are the same
//     key (integers are exact; other numbers go through float64);
//   - the body must be one JSON value.
//
// A missing member, a non-object on the way or null at the end is a missing
// key ("").
func jsonLookup(body []byte, path []string) (string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var cur json.RawMessage
	if err := dec.Decode(&cur); err != nil {
		return "", fmt.Errorf("%w: %w: %w", core.ErrKeyInvalid, errNotJSON, err)
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) != 0 {
		return "", fmt.Errorf("%w: data after the JSON value", core.ErrKeyInvalid)
	}
	for _, name := range path {
		v, n, err := member(cur, name)
		if err != nil || n == 0 {
			return "", err
		}
		if n > 1 {
			return "", fmt.Errorf("%w: JSON member %q appears %d times (names match case-insensitively)", core.ErrKeyInvalid, name, n)
		}
		cur = v
	}
	var v any
	dec = json.NewDecoder(bytes.NewReader(cur))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: %w", core.ErrKeyInvalid, err)
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case json.Number:
		return canonicalNumber(string(v))
	default:
		return "", fmt.Errorf("%w: JSON member %s is a %s, not a string or number", core.ErrKeyInvalid, strings.Join(path, "."), jsonKind(v))
	}
}

// member returns the value of the members of object obj whose name matches
// name as encoding/json matches a struct field (strings.EqualFold), and how
// many matched. A non-object has no members.
func member(obj json.RawMessage, name string) (json.RawMessage, int, error) {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return nil, 0, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", core.ErrKeyInvalid, err)
	}
	var found json.RawMessage
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %w", core.ErrKeyInvalid, err)
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, 0, fmt.Errorf("%w: %w", core.ErrKeyInvalid, err)
		}
		if strings.EqualFold(k, name) {
			found = v
			n++
		}
	}
	return found, n, nil
}

// canonicalNumber returns one spelling per JSON number value: integers in
// plain decimal without sign for zero ("-0", "0.0", "0e3" are "0"; "4.2e1"
// and "42.00" are "42"), other numbers as the shortest float64 spelling.
func canonicalNumber(s string) (string, error) {
	num := s
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	exp := 0
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		e, err := strconv.Atoi(num[i+1:])
		if err != nil || e > core.DefaultMaxKeyLen*4 || e < -core.DefaultMaxKeyLen*4 {
			return "", fmt.Errorf("%w: number %.32s exponent out of range", core.ErrKeyInvalid, s)
		}
		exp, num = e, num[:i]
	}
	intPart, frac, _ := strings.Cut(num, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp++
	}
	switch {
	case digits == "":
		return "0", nil
	case exp >= 0:
		if len(digits)+exp > core.DefaultMaxKeyLen*4 {
			return "", fmt.Errorf("%w: number %.32s too long", core.ErrKeyInvalid, s)
		}
		out := digits + strings.Repeat("0", exp)
		if neg {
			out = "-" + out
		}
		return out, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", fmt.Errorf("%w: number %.32s: %w", core.ErrKeyInvalid, s, err)
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case []any:
		return "array"
	default:
		return "object"
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}
