package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// rawCmd sends one command over a fresh RESP2 connection and returns the
// decoded reply: string for simple and bulk strings, int64, []any, nil, or a
// respError. The harness uses it to probe nodes while they start, without a
// client library and without leaving goroutines behind.
func rawCmd(addr string, timeout time.Duration, args ...string) (any, error) {
	return rawCmdAuth(addr, "", timeout, args...)
}

// rawCmdAuth is rawCmd that first authenticates with password, unless it is
// empty. A refused AUTH is returned as the reply.
func rawCmdAuth(addr, password string, timeout time.Duration, args ...string) (any, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	cmds := [][]string{args}
	if password != "" {
		cmds = [][]string{{"AUTH", password}, args}
	}
	var b strings.Builder
	for _, cmd := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(cmd))
		for _, a := range cmd {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, err
	}
	r := bufio.NewReader(conn)
	if password != "" {
		if reply, err := readReply(r); err != nil || reply != "OK" {
			return reply, err
		}
	}
	return readReply(r)
}

// respError is an error reply from the server, such as "LOADING ...".
type respError string

func (e respError) Error() string { return string(e) }

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("malformed reply line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return respError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, errors.New("unsupported reply type " + strconv.QuoteRune(rune(kind)))
}

// infoField returns the value of field in an INFO or CLUSTER INFO reply.
func infoField(reply any, field string) string {
	s, _ := reply.(string)
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}
