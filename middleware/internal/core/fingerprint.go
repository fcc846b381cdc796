package core

import "encoding/binary"

// FieldsPart encodes the values of the named request fields (headers,
// metadata) as one part of an idempotency fingerprint: a tag, then each
// name, its number of values and the values, every string length-prefixed,
// so that different names, values, splits into values or absent fields never
// encode alike. values returns a field's values in the order received.
func FieldsPart(tag string, names []string, values func(name string) []string) []byte {
	b := appendString(nil, tag)
	for _, name := range names {
		b = appendString(b, name)
		vs := values(name)
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = appendString(b, v)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
