package idempotency

import (
	"encoding/binary"
	"errors"
)

// StoredResponse is what an idempotency record replays. HTTP stores the status
// code, selected headers and body; gRPC stores the status code, the
// marshalled response message (or the marshalled google.rpc.Status) and the
// header and trailer metadata the handler set.
type StoredResponse struct {
	Status int
	Header []HeaderField
	Body   []byte
	// Trailer holds trailing metadata (gRPC); HTTP stores none.
	Trailer []HeaderField
	// NotReplayable marks a request that completed but whose response was not
	// stored (over the size limit): it must not run again, and cannot be
	// replayed.
	NotReplayable bool
}

// HeaderField is one stored header line.
type HeaderField struct{ Name, Value string }

const storedVersion = 1

var errStoredFormat = errors.New("idempotency: malformed stored response")

// ErrStoredVersion: a stored response was written by a later version of this
// package in a form this one cannot read (another version byte, or a flag
// that changes the layout). The request it belongs to completed, so it must
// not run again; another instance that reads the record can replay it. The
// middleware answers 503 / Unavailable with a retry hint.
var ErrStoredVersion = errors.New("idempotency: stored response written by a later version")

// Flags of an encoded StoredResponse.
const (
	flagNotReplayable = 1
	// flagTrailer: a trailer section follows the body. Records without
	// trailers (every HTTP record, and those written before trailers were
	// stored) encode as they always did.
	flagTrailer = 2
	// flagsLayout are the flags a later version may set for a change that
	// a reader must understand: a reader that does not know one refuses the
	// record with ErrStoredVersion.
	flagsLayout = 0x0c
	// flagsOptional are the flags a later version may set for sections
	// appended after those this version knows, which a replay may go
	// without: a reader that does not know one ignores the rest of the
	// record. This version writes none.
	flagsOptional = 0xf0
)

// Encode serializes r (version byte, flags, then uvarint-length-prefixed
// fields: status, headers, body and, when there are any, trailers). A
// response without trailers encodes as it did before trailers were stored,
// so that versions from then read it.
func (r *StoredResponse) Encode() []byte {
	n := 2 + 3*binary.MaxVarintLen64 + len(r.Body)
	for _, h := range r.Header {
		n += 2*binary.MaxVarintLen64 + len(h.Name) + len(h.Value)
	}
	for _, h := range r.Trailer {
		n += 2*binary.MaxVarintLen64 + len(h.Name) + len(h.Value)
	}
	b := make([]byte, 0, n)
	var flags byte
	if r.NotReplayable {
		flags |= flagNotReplayable
	}
	if len(r.Trailer) > 0 {
		flags |= flagTrailer
	}
	b = append(b, storedVersion, flags)
	b = binary.AppendUvarint(b, uint64(r.Status))
	b = appendFields(b, r.Header)
	b = binary.AppendUvarint(b, uint64(len(r.Body)))
	b = append(b, r.Body...)
	if len(r.Trailer) > 0 {
		b = appendFields(b, r.Trailer)
	}
	return b
}

func appendFields(b []byte, fs []HeaderField) []byte {
	b = binary.AppendUvarint(b, uint64(len(fs)))
	for _, h := range fs {
		b = binary.AppendUvarint(b, uint64(len(h.Name)))
		b = append(b, h.Name...)
		b = binary.AppendUvarint(b, uint64(len(h.Value)))
		b = append(b, h.Value...)
	}
	return b
}

// DecodeStoredResponse parses what Encode produced. A record of a later
// version that this one cannot read fails with ErrStoredVersion; sections a
// later version appended behind an optional flag are ignored.
func DecodeStoredResponse(b []byte) (*StoredResponse, error) {
	if len(b) < 2 || b[0] == 0 {
		return nil, errStoredFormat
	}
	if b[0] != storedVersion || b[1]&flagsLayout != 0 {
		return nil, ErrStoredVersion
	}
	r := &StoredResponse{NotReplayable: b[1]&flagNotReplayable != 0}
	trailer := b[1]&flagTrailer != 0
	optional := b[1]&flagsOptional != 0
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
	fields := func() ([]HeaderField, bool) {
		n, ok := next()
		if !ok || n > uint64(len(b)) {
			return nil, false
		}
		var fs []HeaderField
		for range n {
			name, ok1 := bytesField()
			value, ok2 := bytesField()
			if !ok1 || !ok2 {
				return nil, false
			}
			fs = append(fs, HeaderField{string(name), string(value)})
		}
		return fs, true
	}
	if r.Header, ok = fields(); !ok {
		return nil, errStoredFormat
	}
	if r.Body, ok = bytesField(); !ok {
		return nil, errStoredFormat
	}
	if trailer {
		// Encode writes the flag only for a non-empty trailer section.
		if r.Trailer, ok = fields(); !ok || len(r.Trailer) == 0 {
			return nil, errStoredFormat
		}
	}
	if len(b) != 0 && !optional {
		return nil, errStoredFormat
	}
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
