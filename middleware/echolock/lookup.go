package echolock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// extractor returns the key found in one source, or "" when the source is absent.
type extractor func(c echo.Context) (string, error)

var errBodyTooLarge = errors.New("request body too large for the key lookup")

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
			out = append(out, func(c echo.Context) (string, error) { return c.Param(name), nil })
		case "header":
			h := textproto.CanonicalMIMEHeaderKey(name)
			out = append(out, func(c echo.Context) (string, error) { return single(c.Request().Header[h]) })
		case "query":
			out = append(out, func(c echo.Context) (string, error) { return single(c.QueryParams()[name]) })
		case "form":
			out = append(out, func(c echo.Context) (string, error) {
				if _, err := c.FormParams(); err != nil {
					return "", fmt.Errorf("%w: form: %v", core.ErrKeyInvalid, err)
				}
				return single(c.Request().Form[name])
			})
		case "cookie":
			out = append(out, func(c echo.Context) (string, error) {
				ck, err := c.Cookie(name)
				if err != nil {
					return "", nil
				}
				return ck.Value, nil
			})
		case "json":
			path := strings.Split(name, ".")
			out = append(out, func(c echo.Context) (string, error) { return jsonField(c, path, maxBody) })
		default:
			return nil, fmt.Errorf("echolock: unknown key source %q in %q", kind, src)
		}
	}
	return out, nil
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
// the handler, and returns the string or number at path.
func jsonField(c echo.Context, path []string, maxBody int64) (string, error) {
	req := c.Request()
	if req.Body == nil || req.Body == http.NoBody {
		return "", nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	rest := req.Body
	req.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil {
		return "", fmt.Errorf("%w: reading body: %v", core.ErrKeyInvalid, err)
	}
	if int64(len(body)) > maxBody {
		return "", fmt.Errorf("%w: %w (limit %d bytes)", core.ErrKeyInvalid, errBodyTooLarge, maxBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: body is not JSON: %v", core.ErrKeyInvalid, err)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return "", nil
		}
		if v, ok = m[p]; !ok {
			return "", nil
		}
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	default:
		return "", fmt.Errorf("%w: JSON field %s is a %T, not a string or number", core.ErrKeyInvalid, strings.Join(path, "."), v)
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}
