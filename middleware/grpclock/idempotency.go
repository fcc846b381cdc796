package grpclock

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	encproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// MetadataIdempotencyKey is the metadata key carrying the idempotency key.
const MetadataIdempotencyKey = "idempotency-key"

// MetadataIdempotentReplayed is set to "true" in the response header of a
// replayed call.
const MetadataIdempotentReplayed = "idempotent-replayed"

type idemOptions struct {
	methods     map[string]bool
	required    bool
	scope       func(ctx context.Context) string
	storeCode   func(codes.Code) bool
	maxResponse int
	logger      *slog.Logger
	outcome     scriptlock.RequestOutcomeFunc
	fpMetadata  []string
}

// IdempotencyOption configures the idempotency interceptors.
type IdempotencyOption func(*idemOptions)

// WithIdempotentMethods limits the interceptors to the given full method
// names; by default every unary method carrying a key is covered. A name
// not of the form "/package.Service/Method" makes
// IdempotencyUnaryServerInterceptor and IdempotencyUnaryClientInterceptor
// panic: no call would match it.
func WithIdempotentMethods(fullMethods ...string) IdempotencyOption {
	return func(o *idemOptions) {
		if o.methods == nil {
			o.methods = map[string]bool{}
		}
		for _, m := range fullMethods {
			o.methods[m] = true
		}
	}
}

// WithFingerprintMetadata names incoming metadata keys that change what a
// call means (a currency, a tenant, a lock key taken with Metadata): their
// values count in the call's fingerprint with the method and request message,
// so the same idempotency key with another value gets FailedPrecondition like
// another message. An absent key counts as absent, not as empty. Keys are
// case-insensitive; each must be a valid metadata key (digits, lower-case
// letters, '-', '_', '.') or ":authority". The server interceptor panics on
// an invalid key, and ValidateIdempotency reports it. Records stored before
// a change of the keys do not match calls after it.
func WithFingerprintMetadata(keys ...string) IdempotencyOption {
	return func(o *idemOptions) { o.fpMetadata = append(o.fpMetadata, keys...) }
}

// WithIdempotencyRequired makes a missing key an InvalidArgument error on the
// covered methods (server side).
func WithIdempotencyRequired(on bool) IdempotencyOption {
	return func(o *idemOptions) { o.required = on }
}

// WithIdempotencyScope sets the namespace of a call's keys: a stored outcome
// is replayed only to calls of the same scope. Default CredentialScope: a hash
// of the "authorization" metadata and the TLS client certificate, so a caller
// never sees another caller's responses and calls without credentials share
// one anonymous scope. Return the authenticated account or tenant instead
// when credentials change between retries; Unscoped opts into one namespace
// shared by every client.
func WithIdempotencyScope(f func(ctx context.Context) string) IdempotencyOption {
	return func(o *idemOptions) { o.scope = f }
}

// WithStoredCodes decides which outcomes are stored for replay. Default: OK,
// InvalidArgument, NotFound, AlreadyExists, FailedPrecondition, OutOfRange;
// other outcomes (Internal, Unavailable, Aborted, ResourceExhausted, ...)
// release the key so the client can retry with it. Errors of the lock
// interceptor (contended, lock lost, Redis down) are never stored. f gets
// the code the client is answered: for an error that is no status but wraps
// a context error, as gRPC answers it, DeadlineExceeded or Canceled; for a
// response gRPC cannot marshal (a string field not valid UTF-8) with the
// call's codec (the one registered for its content-subtype, else proto's),
// Internal, which by default releases the key, so the retry runs again. A
// nil f means the default.
func WithStoredCodes(f func(codes.Code) bool) IdempotencyOption {
	return func(o *idemOptions) { o.storeCode = f }
}

// WithMaxStoredResponse bounds the stored response size: the response
// message (or error status) plus the names and values of the header and
// trailer metadata stored with it (default 1 MiB; 0 or less means the
// default). A larger response is returned but not stored: the key is marked
// used and duplicates get AlreadyExists.
func WithMaxStoredResponse(n int) IdempotencyOption {
	return func(o *idemOptions) { o.maxResponse = n }
}

// WithIdempotencyOutcome reports the outcome of every call that carries a
// key or lacks a required one (executed, replayed, idempotency_conflict,
// over_budget, key_invalid, redis_down, and canceled for a call whose
// context ended before its key was reserved) to f.
func WithIdempotencyOutcome(f scriptlock.RequestOutcomeFunc) IdempotencyOption {
	return func(o *idemOptions) { o.outcome = f }
}

// WithIdempotencyLogger sets the logger for store failures after the handler ran.
func WithIdempotencyLogger(l *slog.Logger) IdempotencyOption {
	return func(o *idemOptions) { o.logger = l }
}

// CredentialScope is the default idempotency scope: the call's
// "authorization" metadata and TLS client certificate hashed by
// idempotency.CredentialScope, or idempotency.AnonymousScope for a call
// without either.
func CredentialScope(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	parts := []string{strings.Join(md.Get("authorization"), "\n"), ""}
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.PeerCertificates) > 0 {
			parts[1] = string(ti.State.PeerCertificates[0].Raw)
		}
	}
	return idempotency.CredentialScope(parts...)
}

// Unscoped puts every client's keys in one namespace: any client presenting a
// key sees the outcome stored under it. Use it only when keys are unguessable
// secrets issued per client, or every client is trusted.
func Unscoped(context.Context) string { return "" }

const defaultMaxResponse = 1 << 20

func defaultStoreCode(c codes.Code) bool {
	switch c {
	case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.FailedPrecondition, codes.OutOfRange:
		return true
	}
	return false
}

func evaluateIdem(opts []IdempotencyOption) *idemOptions {
	o := &idemOptions{storeCode: defaultStoreCode, maxResponse: defaultMaxResponse, scope: CredentialScope}
	for _, opt := range opts {
		opt(o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	// Zero values mean the defaults, as in echolock's config, never a nil
	// function called at request time or a limit that stores nothing.
	if o.scope == nil {
		o.scope = CredentialScope
	}
	if o.storeCode == nil {
		o.storeCode = defaultStoreCode
	}
	if o.maxResponse <= 0 {
		o.maxResponse = defaultMaxResponse
	}
	return o
}

// check validates the options and puts the fingerprint metadata keys in
// canonical form (lower case, sorted, without duplicates), so that their
// order does not change fingerprints.
func (o *idemOptions) check() error {
	keys := make([]string, 0, len(o.fpMetadata))
	for _, k := range o.fpMetadata {
		lk := strings.ToLower(k)
		if !validMetadataKey(lk) {
			return fmt.Errorf("WithFingerprintMetadata: %q is not a metadata key", k)
		}
		keys = append(keys, lk)
	}
	slices.Sort(keys)
	o.fpMetadata = slices.Compact(keys)
	return nil
}

func validMetadataKey(k string) bool {
	if k == ":authority" {
		return true
	}
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// mustFullMethods panics on a WithIdempotentMethods name that is no full
// method name: no call has it, so the method meant would be left uncovered.
func (o *idemOptions) mustFullMethods() {
	for m := range o.methods {
		if _, _, err := splitMethod(m); err != nil {
			panic("grpclock: WithIdempotentMethods: " + err.Error())
		}
	}
}

func (o *idemOptions) covers(method string) bool { return o.methods == nil || o.methods[method] }

// IdempotencyUnaryServerInterceptor gives unary methods Idempotency-Key
// semantics (metadata "idempotency-key"): the first call with a key runs and its
// outcome (response message bytes, or status with details, and the header and
// trailer metadata the handler set) is stored; a duplicate while it runs gets
// Aborted with RetryInfo; a completed duplicate with the same request gets the
// stored outcome and metadata, with response header "idempotent-replayed:
// true"; the same key with a different request gets
// FailedPrecondition; a malformed key InvalidArgument. Keys are scoped to the
// caller's credentials (CredentialScope, WithIdempotencyScope), and only final
// outcomes are stored (WithStoredCodes); the lock interceptor's own errors
// never are, also when an interceptor between the two rebuilds them (the lock
// interceptor marks the call through the context). A handler returning a nil response with a nil error answers OK
// with an empty message (gRPC sends no bytes for it), which is stored and
// replayed as that empty message.
//
// Metadata is recorded through the transport stream in the handler's context
// (grpc.SetHeader, grpc.SendHeader, grpc.SetTrailer, from the handler or from
// interceptors after this one) and replayed as the first call sent it,
// except keys that describe the transport rather than the response: the
// "grpc-" keys gRPC reserves, HTTP/2 pseudo-headers and connection-specific
// fields, content-type, user-agent and the replay marker. Under it, gRPC's
// experimental grpc.SetSendCompressor and grpc.ClientSupportedCompressors
// fail for calls with a key, as under any interceptor that wraps that stream.
//
// A replayed response is decoded into the method's output type, found in
// protoregistry.GlobalFiles (generated code registers it) or learned from an
// earlier response in this process; failing both, it is sent as the stored
// bytes inside an empty message, which the client decodes identically but
// which later server interceptors see as *emptypb.Empty. Twice in a chain on
// one store with one scope, the inner interceptor runs the call under the
// outer one's claim; with another scope it keeps records of its own.
func IdempotencyUnaryServerInterceptor(store *idempotency.Store, opts ...IdempotencyOption) grpc.UnaryServerInterceptor {
	if store == nil {
		panic("grpclock: nil IdempotencyStore")
	}
	o := evaluateIdem(opts)
	if err := o.check(); err != nil {
		panic("grpclock: " + err.Error())
	}
	o.mustFullMethods()
	var types sync.Map // full method → protoreflect.MessageType learned from responses
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		method := info.FullMethod
		if !o.covers(method) {
			return handler(ctx, req)
		}
		md, _ := metadata.FromIncomingContext(ctx)
		vs := md.Get(MetadataIdempotencyKey)
		switch {
		case len(vs) == 0 && o.required:
			o.outcome.Report(ctx, scriptlock.RequestKeyInvalid)
			return nil, status.Error(codes.InvalidArgument, "idempotency-key metadata missing")
		case len(vs) == 0:
			return handler(ctx, req)
		case len(vs) > 1:
			o.outcome.Report(ctx, scriptlock.RequestKeyInvalid)
			return nil, status.Errorf(codes.InvalidArgument, "idempotency-key given %d times", len(vs))
		}
		key, err := store.ParseKey(vs[0])
		if err != nil {
			o.outcome.Report(ctx, scriptlock.RequestKeyInvalid)
			return nil, status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "idempotency: "))
		}
		m, ok := req.(proto.Message)
		if !ok {
			o.logger.ErrorContext(ctx, "grpclock: request is not a proto message", "method", method, "type", fmt.Sprintf("%T", req))
			return nil, status.Error(codes.Internal, "internal error")
		}
		body, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			o.logger.ErrorContext(ctx, "grpclock: marshal request", "method", method, "err", err)
			return nil, status.Error(codes.Internal, "internal error")
		}
		fpParts := [][]byte{[]byte(method), body}
		if len(o.fpMetadata) > 0 {
			fpParts = append(fpParts, core.FieldsPart("metadata", o.fpMetadata, md.Get))
		}
		fp := idempotency.Fingerprint(fpParts...)
		scope := o.scope(ctx)
		running := claimedCall{store, info, scope, key}
		if r, ok := ctx.Value(claimedCallKey{}).(claimedCall); ok && r == running {
			// An interceptor further out in this call's chain, on the same
			// store, runs the call under its claim on the key already;
			// claiming it again would find it in flight. This one's own
			// checks of the key and request above stand.
			return handler(ctx, req)
		}
		res, err := store.Reserve(ctx, scope, key, fp)
		if err != nil && ctx.Err() != nil {
			// The client has gone (or its deadline passed); Redis may be fine.
			o.outcome.Report(ctx, scriptlock.RequestCanceled)
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if err != nil {
			o.outcome.Report(ctx, scriptlock.RequestRedisDown)
			o.logger.ErrorContext(ctx, "grpclock: idempotency store unavailable", "method", method, "err", err)
			// Says when to try again, as echolock's 503 does (Retry-After).
			return nil, withRetryInfo(status.New(codes.Unavailable, "idempotency store unavailable"), time.Second).Err()
		}
		switch res.State {
		case idempotency.Mismatch, idempotency.InFlight:
			o.outcome.Report(ctx, scriptlock.RequestIdempotencyConflict)
		case idempotency.Done:
			// Reported by replayCall: a record it cannot read is no replay.
		case idempotency.OverBudget:
			o.outcome.Report(ctx, scriptlock.RequestOverBudget)
		}
		switch res.State {
		case idempotency.Mismatch:
			return nil, status.Error(codes.FailedPrecondition, "idempotency-key was used for a different request")
		case idempotency.InFlight:
			return nil, withRetryInfo(status.New(codes.Aborted, "a call with this idempotency-key is in flight"), time.Second).Err()
		case idempotency.Done:
			return replayCall(ctx, o.logger, o.outcome, method, res.Response, &types)
		case idempotency.OverBudget:
			return nil, status.Error(codes.ResourceExhausted, "too many stored idempotency-key responses for this client")
		}

		claim := res.Claim
		hctx, detach := claim.Context(ctx)
		hctx = context.WithValue(hctx, claimedCallKey{}, running)
		hctx, lockAnswered := withLockAnswer(hctx)
		// The handler's header and trailer metadata are recorded as it sets
		// them, to be stored with its response and replayed with it.
		var rec *mdRecorder
		if sts := grpc.ServerTransportStreamFromContext(hctx); sts != nil {
			rec = &mdRecorder{ServerTransportStream: sts}
			hctx = grpc.NewContextWithServerTransportStream(hctx, rec)
		}
		// Every way out completes or releases the claim exactly once. One
		// that does neither (a panic in the handler, or after it, before the
		// outcome was stored) releases it here, so that the retry runs:
		// a claim left behind would be renewed, and the key answered "in
		// flight", for as long as the process runs.
		settled := false
		release := func() {
			settled = true
			if rerr := claim.Release(ctx); rerr != nil {
				o.logger.WarnContext(ctx, "grpclock: idempotency release failed", "method", method, "err", rerr)
			}
		}
		defer func() {
			detach()
			if !settled {
				release()
			}
		}()
		// Reported once the claim is released on every way out, a panic of
		// the outcome callback included.
		o.outcome.Report(ctx, scriptlock.RequestExecuted)
		hctx, innerStored := withStoredAnswer(hctx)
		resp, herr := handler(hctx, req)
		if herr != nil && innerStored.set.Load() {
			// An idempotency interceptor further in (of another scope)
			// stored this failure: it is the answer, whatever this one
			// does with it, so an interceptor further out is told too.
			markStoredAnswer(ctx)
		}
		if herr != nil && claim.Lost() && !innerStored.set.Load() {
			// A retry may be running the call already: answer so that the
			// client retries, and store nothing. A handler that returned a
			// response despite the loss keeps it (Complete stores it only if
			// the claim is still this call's).
			o.logger.WarnContext(ctx, "grpclock: idempotency claim lost while handling the call", "method", method, "err", herr)
			release()
			return nil, claimLostError()
		}
		if herr != nil && lostFurtherOut(ctx) {
			// A lock interceptor further out lost its lock, or an outer
			// idempotency interceptor its claim: it answers the failure
			// Aborted, so the failure is no answer the client gets, and
			// stored it would be replayed for a call that never answered
			// it. The key is released: the retry runs the call.
			release()
			return resp, herr
		}
		// The status the client gets: gRPC answers an error that is no
		// status but a context error (a database call's own deadline,
		// wrapped) with that context's code, not Unknown.
		st := answerStatus(herr)
		// gRPC sends no bytes for a nil response, whatever the codec, and
		// the client decodes an empty message: stored as an empty body,
		// replayed as the same empty message.
		var respBody []byte
		var encErr error // the response or status cannot be stored
		if herr == nil && resp != nil {
			var sendErr error
			if respBody, sendErr, encErr = marshalResponse(ctx, resp); sendErr != nil {
				// gRPC cannot send it either (a string field not valid
				// UTF-8, no proto message): the client gets Internal, and
				// that is the outcome to store or not. An OK recorded
				// without its response would answer the retry
				// AlreadyExists, which the call never answered.
				st = status.Newf(codes.Internal, "grpc: error while marshaling: %v", sendErr.Error())
			}
		}
		code := st.Code()
		var le *lockError
		if !o.storeCode(code) || errors.As(herr, &le) || (herr != nil && lockAnswered.set.Load()) {
			release()
			return resp, herr
		}
		sr := idempotency.StoredResponse{Status: int(code)}
		if code == codes.OK {
			sr.Body = respBody
			if t := messageType(resp); t != nil {
				types.Store(method, t)
			}
		} else {
			sr.Body, encErr = proto.Marshal(sentStatus(st))
		}
		size := len(sr.Body)
		if rec != nil {
			sr.Header, sr.Trailer = rec.stored()
			size += fieldsSize(sr.Header) + fieldsSize(sr.Trailer)
		}
		if encErr != nil || size > o.maxResponse {
			sr.Body, sr.Header, sr.Trailer, sr.NotReplayable = nil, nil, nil, true
		}
		settled = true
		ok, serr := claim.Complete(ctx, sr.Encode())
		switch {
		case errors.Is(serr, idempotency.ErrRetryDropped):
			// Lost: once the claim expires, a retry runs the request again.
			o.logger.ErrorContext(ctx, "grpclock: idempotent response not stored and not retried", "method", method, "err", serr)
		case serr != nil: // the store keeps trying in the background
			o.logger.WarnContext(ctx, "grpclock: idempotent response not stored yet", "method", method, "err", serr)
		case !ok:
			o.logger.WarnContext(ctx, "grpclock: idempotent response not stored", "method", method, "claim_lost", true)
		}
		if herr != nil && (ok || serr != nil && !errors.Is(serr, idempotency.ErrRetryDropped)) {
			// Stored (or being stored): a lock interceptor further out
			// that notices its loss only now answers this failure, not
			// Aborted, so the client gets what the retry is replayed.
			markStoredAnswer(ctx)
		}
		return resp, herr
	}
}

// lostFurtherOut reports whether ctx, a call's context as the idempotency
// interceptor got it, ended because a lock interceptor further out lost its
// lock or an outer idempotency interceptor its claim.
func lostFurtherOut(ctx context.Context) bool {
	return core.LockLost(ctx) || ctx.Err() != nil && errors.Is(context.Cause(ctx), idempotency.ErrClaimLost)
}

// claimedCallKey holds, in a covered call's context, the claim it runs
// under (see claimedCall): an idempotency interceptor nested in the same
// chain on the same store, scoping the call alike, runs the call under it.
// info is the call's, shared by the interceptors of its chain, so a call made
// in process with this context claims its own.
type claimedCallKey struct{}

// claimedCall names a claim by its store, call, scope and key: an
// interceptor whose scope differs keeps records of its own, which the claim
// does not cover.
type claimedCall struct {
	store *idempotency.Store
	info  *grpc.UnaryServerInfo
	scope string
	key   string
}

func replayCall(ctx context.Context, log *slog.Logger, report scriptlock.RequestOutcomeFunc, method string, stored []byte, types *sync.Map) (any, error) {
	sr, err := idempotency.DecodeStoredResponse(stored)
	if err == nil {
		err = checkStoredMetadata(sr.Header, sr.Trailer)
	}
	if errors.Is(err, idempotency.ErrStoredVersion) {
		// Answered Unavailable like a store that cannot be reached, and
		// counted so: the client got no replay.
		report.Report(ctx, scriptlock.RequestRedisDown)
		// A later version stored it during a rolling deploy: the call ran,
		// so it must not run again, and an instance that reads the record
		// replays it to the retry.
		log.WarnContext(ctx, "grpclock: stored response written by a later version", "method", method)
		return nil, withRetryInfo(status.New(codes.Unavailable, "stored response not readable by this server"), time.Second).Err()
	}
	if err != nil {
		// A record this version should read but cannot is a store failure
		// to the client, which gets no replay: counted like the other.
		report.Report(ctx, scriptlock.RequestRedisDown)
		log.ErrorContext(ctx, "grpclock: stored response", "method", method, "err", err)
		return nil, status.Error(codes.Internal, "internal error")
	}
	var p spb.Status
	if codes.Code(sr.Status) != codes.OK && !sr.NotReplayable {
		err := proto.Unmarshal(sr.Body, &p)
		if err == nil && int64(p.GetCode()) != int64(sr.Status) {
			// The interceptor stores the error's own status: one of
			// another code (OK would answer nothing at all) is no record
			// of it.
			err = fmt.Errorf("%w: record of code %d holds a status of code %d", errStoredStatus, sr.Status, p.GetCode())
		}
		if err != nil {
			report.Report(ctx, scriptlock.RequestRedisDown)
			log.ErrorContext(ctx, "grpclock: stored status", "method", method, "err", err)
			return nil, status.Error(codes.Internal, "internal error")
		}
	}
	if sr.NotReplayable {
		// Nothing is replayed: the duplicate is refused like a reused key.
		report.Report(ctx, scriptlock.RequestIdempotencyConflict)
		return nil, status.Error(codes.AlreadyExists, "idempotency-key was used; its response was not stored")
	}
	report.Report(ctx, scriptlock.RequestReplayed)
	hdr := metadata.Pairs(MetadataIdempotentReplayed, "true")
	for _, f := range sr.Header {
		hdr.Append(f.Name, f.Value)
	}
	_ = grpc.SetHeader(ctx, hdr)
	if len(sr.Trailer) > 0 {
		tr := metadata.MD{}
		for _, f := range sr.Trailer {
			tr.Append(f.Name, f.Value)
		}
		_ = grpc.SetTrailer(ctx, tr)
	}
	if codes.Code(sr.Status) != codes.OK {
		return nil, status.ErrorProto(&p)
	}
	if mt := outputType(method, types); mt != nil {
		msg := mt.New().Interface()
		if err := proto.Unmarshal(sr.Body, msg); err == nil {
			return msg, nil
		}
	}
	carrier := &emptypb.Empty{}
	carrier.ProtoReflect().SetUnknown(protoreflect.RawFields(sr.Body))
	return carrier, nil
}

// outputType finds the response type of a method.
func outputType(method string, learned *sync.Map) protoreflect.MessageType {
	if t, ok := learned.Load(method); ok {
		return t.(protoreflect.MessageType)
	}
	svc, name, ok := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	if !ok {
		return nil
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		return nil
	}
	learned.Store(method, mt)
	return mt
}

// WithIdempotencyKey returns a context whose outgoing calls carry key as their
// idempotency key (instead of one IdempotencyUnaryClientInterceptor draws). A
// key ctx carries already is replaced: a call carrying two would be refused.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	md, ok := metadata.FromOutgoingContext(ctx)
	if !ok || len(md.Get(MetadataIdempotencyKey)) == 0 {
		return metadata.AppendToOutgoingContext(ctx, MetadataIdempotencyKey, key)
	}
	// md is a copy holding every pair ctx carries, appended ones included.
	md.Set(MetadataIdempotencyKey, key)
	return metadata.NewOutgoingContext(ctx, md)
}

// NewIdempotencyKey returns a random (version 4) UUID.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// IdempotencyUnaryClientInterceptor attaches one idempotency key to each
// logical call that has none (see WithIdempotencyKey), on the covered methods.
// gRPC's own retries (service config retryPolicy, transparent retry) resend the
// same metadata, so every attempt carries the same key. A retrying interceptor
// must come after this one in the chain (grpc.WithChainUnaryInterceptor(
// idempotency, retry)) so that its attempts share the key too. A
// WithIdempotentMethods name not of the form "/package.Service/Method" makes
// it panic, as it does the server interceptor: no call would get a key.
func IdempotencyUnaryClientInterceptor(opts ...IdempotencyOption) grpc.UnaryClientInterceptor {
	o := evaluateIdem(opts)
	o.mustFullMethods()
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		if o.covers(method) {
			md, _ := metadata.FromOutgoingContext(ctx)
			if len(md.Get(MetadataIdempotencyKey)) == 0 {
				ctx = WithIdempotencyKey(ctx, NewIdempotencyKey())
			}
		}
		return invoker(ctx, method, req, reply, cc, callOpts...)
	}
}

// marshalResponse marshals resp, a call's OK response, to be stored, as
// gRPC's proto codec marshals it (messages of the older
// github.com/golang/protobuf API included), failing where it fails: err.
// A replay is decoded from those bytes and sent with the retry's codec.
// sendErr is the error of the codec gRPC answers this call with, the one
// registered for its content-subtype (see callCodec): where that one fails
// gRPC sends nothing and answers Internal, and where it sends what the
// proto codec refuses the call was answered OK all the same, with a
// response that is not stored.
func marshalResponse(ctx context.Context, resp any) (body []byte, sendErr, err error) {
	body, err = marshalWith(encproto.Name, resp)
	if name := callCodec(ctx); name != encproto.Name {
		_, sendErr = marshalWith(name, resp)
		return body, sendErr, err
	}
	return body, err, err
}

// callCodec names the codec gRPC answers the call in ctx with: the one
// registered for the content-subtype of its content-type, else proto's, as
// gRPC picks it. A codec a server forces (grpc.ForceServerCodec) is not
// visible to an interceptor.
func callCodec(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	ct := md.Get("content-type")
	if len(ct) == 0 {
		return encproto.Name
	}
	sub, ok := strings.CutPrefix(ct[0], "application/grpc")
	if !ok || sub == "" || (sub[0] != '+' && sub[0] != ';') {
		return encproto.Name
	}
	if sub = sub[1:]; sub != "" && (encoding.GetCodec(sub) != nil || encoding.GetCodecV2(sub) != nil) {
		return sub
	}
	return encproto.Name
}

// marshalWith marshals resp with the codec registered under name, as gRPC
// does: one of the older interface (encoding.Codec) registered so is the
// one it uses.
func marshalWith(name string, resp any) ([]byte, error) {
	if c := encoding.GetCodec(name); c != nil {
		return c.Marshal(resp)
	}
	if c := encoding.GetCodecV2(name); c != nil {
		b, err := c.Marshal(resp)
		if err != nil {
			return nil, err
		}
		defer b.Free()
		return b.Materialize(), nil
	}
	m, ok := resp.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("response %T is not a proto message", resp)
	}
	return proto.Marshal(m)
}

// messageType is the type of resp, a response marshalResponse marshalled,
// or nil.
func messageType(resp any) protoreflect.MessageType {
	switch m := resp.(type) {
	case proto.Message:
		return m.ProtoReflect().Type()
	case protoadapt.MessageV1:
		return protoadapt.MessageV2Of(m).ProtoReflect().Type()
	}
	return nil
}

// answerStatus is the status gRPC answers a handler's error with (OK for
// nil): the error's own status, or for an error that has none, the code of
// the context error it wraps (DeadlineExceeded, Canceled), else Unknown.
func answerStatus(err error) *status.Status {
	if st, ok := status.FromError(err); ok {
		return st
	}
	return status.FromContextError(err)
}

// sentStatus is st as gRPC sends it, to be stored and replayed. gRPC sends
// the details only if the whole status marshals: not with a message that is
// not valid UTF-8 (a handler quoting a client's bytes), nor with a detail
// whose type URL is not; such a message goes out with each bad byte as
// U+FFFD. Stored as it is, such a status would not marshal either, and the
// retry would get AlreadyExists instead of that answer.
func sentStatus(st *status.Status) *spb.Status {
	p := st.Proto()
	if len(p.GetDetails()) > 0 {
		if _, err := proto.Marshal(p); err != nil {
			p.Details = nil
		}
	}
	if utf8.ValidString(p.GetMessage()) {
		return p
	}
	var b strings.Builder
	for _, r := range p.GetMessage() { // a bad byte ranges as one utf8.RuneError
		b.WriteRune(r)
	}
	p.Message = b.String()
	return p
}

// claimLostError answers a call whose idempotency claim was lost while its
// handler ran and failed: Aborted with RetryInfo, like a lost lock, so the
// client retries.
func claimLostError() error {
	return withRetryInfo(status.New(codes.Aborted, "idempotency-key claim lost while handling the call"), time.Second).Err()
}

// mdRecorder is the transport stream a covered call's handler runs with: it
// passes the handler's header and trailer metadata on and records what was
// accepted, so that a replay sends the same.
type mdRecorder struct {
	grpc.ServerTransportStream
	mu      sync.Mutex
	header  metadata.MD
	trailer metadata.MD
}

func (r *mdRecorder) SetHeader(md metadata.MD) error {
	return r.record(&r.header, md, r.ServerTransportStream.SetHeader(md))
}

func (r *mdRecorder) SendHeader(md metadata.MD) error {
	return r.record(&r.header, md, r.ServerTransportStream.SendHeader(md))
}

func (r *mdRecorder) SetTrailer(md metadata.MD) error {
	return r.record(&r.trailer, md, r.ServerTransportStream.SetTrailer(md))
}

// record adds md to *to when the stream accepted it (err == nil): metadata
// refused (a header set after headers were sent) never reached the client.
func (r *mdRecorder) record(to *metadata.MD, md metadata.MD, err error) error {
	if err == nil {
		r.mu.Lock()
		*to = metadata.Join(*to, md)
		r.mu.Unlock()
	}
	return err
}

// stored returns the header and trailer metadata to store, keys sorted,
// without the keys a replay must not send (see replayedMetadata).
func (r *mdRecorder) stored() (header, trailer []idempotency.HeaderField) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return storedFields(r.header), storedFields(r.trailer)
}

func storedFields(md metadata.MD) []idempotency.HeaderField {
	var out []idempotency.HeaderField
	for _, k := range slices.Sorted(maps.Keys(md)) {
		if !storableMetadataKey(k) {
			continue
		}
		for _, v := range md[k] {
			// A value gRPC may not send (the unary transport does not
			// check): a record holding it would be refused as malformed.
			if storableMetadataValue(k, v) {
				out = append(out, idempotency.HeaderField{Name: k, Value: v})
			}
		}
	}
	return out
}

// storableMetadataKey reports whether metadata key k is stored and may be
// replayed: a metadata key (matched in lower case, as metadata.MD.Append
// writes it on the replay) that replayedMetadata lets through.
func storableMetadataKey(k string) bool {
	lk := strings.ToLower(k)
	return lk != ":authority" && validMetadataKey(lk) && replayedMetadata(lk)
}

// storableMetadataValue reports whether v is a value gRPC may send under
// key k: any bytes for a "-bin" key, printable ASCII otherwise.
func storableMetadataValue(k, v string) bool {
	if strings.HasSuffix(strings.ToLower(k), "-bin") {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// replayedMetadata reports whether response metadata key k is stored and
// replayed. Not replayed: the replay marker (set on every replay, once),
// keys gRPC reserves for itself ("grpc-" prefix: status, message, encoding,
// retry pushback ...), HTTP/2 pseudo-headers (":status") and the header
// fields the transport writes itself or HTTP/2 forbids as specific to one
// connection (content-type, user-agent, te, connection, keep-alive,
// proxy-connection, transfer-encoding, upgrade, host).
func replayedMetadata(k string) bool {
	k = strings.ToLower(k)
	if k == "" || k[0] == ':' || strings.HasPrefix(k, "grpc-") {
		return false
	}
	switch k {
	case MetadataIdempotentReplayed, "content-type", "user-agent", "te", "connection", "keep-alive",
		"proxy-connection", "transfer-encoding", "upgrade", "host":
		return false
	}
	return true
}

var errStoredMetadata = errors.New("grpclock: malformed stored response: invalid metadata")

var errStoredStatus = errors.New("grpclock: malformed stored response: status")

// checkStoredMetadata refuses a stored record holding metadata this
// interceptor does not store (see storedFields): a key that is no metadata
// key or one a replay must not send, or a value gRPC may not send. gRPC
// would send it unchecked, and the client would fail the call on it or read
// it as the handler's.
func checkStoredMetadata(sections ...[]idempotency.HeaderField) error {
	for _, fs := range sections {
		for _, f := range fs {
			if !storableMetadataKey(f.Name) {
				return fmt.Errorf("%w: key %q", errStoredMetadata, f.Name)
			}
			if !storableMetadataValue(f.Name, f.Value) {
				return fmt.Errorf("%w: value of %q", errStoredMetadata, f.Name)
			}
		}
	}
	return nil
}

// fieldsSize is what fs adds to a stored response, counted against
// WithMaxStoredResponse.
func fieldsSize(fs []idempotency.HeaderField) int {
	n := 0
	for _, f := range fs {
		n += len(f.Name) + len(f.Value)
	}
	return n
}
