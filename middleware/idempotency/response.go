package idempotency

import (
	"encoding/binary"
	"errors"
)

// StoredResponse is what an idempotency record replays. HTTP stores the status
// code, selected headers and body; gRPC stores the status code and the
// marshalled response message (or the marshalled google.rpc.Status).
type StoredResponse struct {
	Status int
	Header []HeaderField
	Body   []byte
	// NotReplayable marks a request that completed but whose response was not
	// stored (over the size limit): it must not run again, and cannot be
	// replayed.
	NotReplayable bool
}

// HeaderField is one stored header line.
type HeaderField struct{ Name, Value string }

const storedVersion = 1

var errStoredFormat = errors.New("idempotency: malformed stored response")

// Encode serializes r (version byte, flags, then uvarint-length-prefixed fields).
func (r *StoredResponse) Encode() []byte {
	n := 2 + 2*binary.MaxVarintLen64 + len(r.Body)
	for _, h := range r.Header {
		n += 2*binary.MaxVarintLen64 + len(h.Name) + len(h.Value)
	}
	b := make([]byte, 0, n)
	var flags byte
	if r.NotReplayable {
		flags |= 1
	}
	b = append(b, storedVersion, flags)
	b = binary.AppendUvarint(b, uint64(r.Status))
	b = binary.AppendUvarint(b, uint64(len(r.Header)))
	for _, h := range r.Header {
		b = binary.AppendUvarint(b, uint64(len(h.Name)))
		b = append(b, h.Name...)
		b = binary.AppendUvarint(b, uint64(len(h.Value)))
		b = append(b, h.Value...)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Body)))
	return append(b, r.Body...)
}

// DecodeStoredResponse parses what Encode produced.
func DecodeStoredResponse(b []byte) (*StoredResponse, error) {
	if len(b) < 2 || b[0] != storedVersion || b[1]&^1 != 0 {
		return nil, errStoredFormat
	}
	r := &StoredResponse{NotReplayable: b[1]&1 != 0}
	b = b[2:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 || n != uvarintLen(v) { // only the minimal encoding Encode writes
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	bytesField := func() ([]byte, bool) {
		l, ok := next()
		if !ok || l > uint64(len(b)) {
			return nil, false
		}
		v := b[:l:l]
		b = b[l:]
		return v, true
	}
	st, ok := next()
	if !ok || st > 1<<31 {
		return nil, errStoredFormat
	}
	r.Status = int(st)
	nh, ok := next()
	if !ok || nh > uint64(len(b)) {
		return nil, errStoredFormat
	}
	for range nh {
		name, ok1 := bytesField()
		value, ok2 := bytesField()
		if !ok1 || !ok2 {
			return nil, errStoredFormat
		}
		r.Header = append(r.Header, HeaderField{string(name), string(value)})
	}
	body, ok := bytesField()
	if !ok || len(b) != 0 {
		return nil, errStoredFormat
	}
	r.Body = body
	return r, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
