package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// asHelper names the shared helper that reads a reply of kind k; each
// returns the value and, when the reply has another shape, what it is.
var asHelper = map[Kind]string{
	String: "asString", Bytes: "asBytes", Int64: "asInt64", Float64: "asFloat64", Bool: "asBool",
	StringList: "asStrings", Int64List: "asInt64s", StringMap: "asStringMap",
}

func decodeError(s *Script, got jen.Code) jen.Code {
	return jen.Op("&").Id("DecodeError").Values(jen.Dict{
		jen.Id("Script"): jen.Lit(s.Name),
		jen.Id("Want"):   jen.Id("want"),
		jen.Id("Got"):    got,
	})
}

// okReturn returns v (and ok=true for a nullable reply) with a nil error.
func okReturn(s *Script, v jen.Code) jen.Code {
	if s.Return.Nullable {
		return jen.Return(v, jen.True(), jen.Nil())
	}
	return jen.Return(v, jen.Nil())
}

func (e *emitter) emitDecode(s *Script) jen.Code {
	redisErr := jen.Err()
	if len(s.Errors) > 0 {
		redisErr = jen.Id(errorFunc(s)).Call(jen.Err())
	}
	var onNil jen.Code
	switch {
	case s.Return.Kind == None:
		onNil = jen.Return(jen.Nil())
	case s.Return.Nullable:
		onNil = jen.Return(zeroValue(s), jen.False(), jen.Nil())
	case s.Return.Kind == Bool:
		onNil = jen.Return(jen.False(), jen.Nil())
	default:
		onNil = zeroReturn(s, decodeError(s, jen.Lit("nil")))
	}
	return jen.Commentf("%s reads a reply of %s as %s.", decodeFunc(s), s.Name, s.Return.String()).Line().
		Func().Id(decodeFunc(s)).Params(jen.Id("resp").Qual(rueidisPath, "RedisResult")).Params(results(s)...).BlockFunc(func(g *jen.Group) {
		g.Const().Id("want").Op("=").Lit(s.Return.String())
		g.List(jen.Id("msg"), jen.Err()).Op(":=").Id("resp").Dot("ToMessage").Call()
		g.If(jen.Err().Op("!=").Nil()).Block(
			jen.If(jen.Qual(rueidisPath, "IsRedisNil").Call(jen.Err())).Block(onNil),
			zeroReturn(s, redisErr),
		)
		switch s.Return.Kind {
		case None:
			g.If(jen.Id("msg").Dot("IsString").Call()).Block(jen.Return(jen.Nil()))
			g.Return(decodeError(s, e.use("describeReply").Call(jen.Op("&").Id("msg"))))
		case Record:
			e.emitDecodeRecord(g, s)
		default:
			g.List(jen.Id("v"), jen.Id("got")).Op(":=").Add(e.use(asHelper[s.Return.Kind])).Call(jen.Op("&").Id("msg"))
			g.If(jen.Id("got").Op("!=").Lit("")).Block(zeroReturn(s, decodeError(s, jen.Id("got"))))
			g.Add(okReturn(s, jen.Id("v")))
		}
	})
}

func (e *emitter) emitDecodeRecord(g *jen.Group, s *Script) {
	n := len(s.Return.Fields)
	g.List(jen.Id("vals"), jen.Err()).Op(":=").Id("msg").Dot("ToArray").Call()
	g.If(jen.Err().Op("!=").Nil().Op("||").Len(jen.Id("vals")).Op(">").Lit(n)).Block(
		zeroReturn(s, decodeError(s, e.use("describeReply").Call(jen.Op("&").Id("msg")))),
	)
	g.Var().Id("v").Id(resultType(s))
	for i, f := range s.Return.Fields {
		field := jen.Id("v").Dot(camel(f.Name))
		elem := jen.Op("&").Id("vals").Index(jen.Lit(i))
		got := func(got jen.Code) jen.Code {
			return e.use("fieldGot").Call(jen.Id("vals"), jen.Lit(i), jen.Lit(f.Name), got)
		}
		assign := field.Clone().Op("=").Id("x")
		if f.Type.Nullable && f.Type.Kind != Bytes {
			assign = field.Clone().Op("=").Op("&").Id("x")
		}
		present := jen.Len(jen.Id("vals")).Op(">").Lit(i).Op("&&").Op("!").Id("vals").Index(jen.Lit(i)).Dot("IsNil").Call()
		read := []jen.Code{
			jen.List(jen.Id("x"), jen.Id("got")).Op(":=").Add(e.use(asHelper[f.Type.Kind])).Call(elem),
			jen.If(jen.Id("got").Op("!=").Lit("")).Block(zeroReturn(s, decodeError(s, got(jen.Id("got"))))),
			assign,
		}
		stmt := jen.If(present).Block(read...)
		if !f.Type.Nullable && f.Type.Kind != Bool {
			stmt.Else().Block(zeroReturn(s, decodeError(s, got(jen.Lit("")))))
		}
		g.Add(stmt)
	}
	g.Add(okReturn(s, jen.Id("v")))
}

// helperDeps lists the helpers each helper calls.
var helperDeps = map[string][]string{
	"asString": {"describeReply"}, "asBytes": {"describeReply"}, "asInt64": {"describeReply"},
	"asFloat64": {"describeReply"}, "asBool": {"describeReply"}, "asStrings": {"describeReply"},
	"asInt64s": {"describeReply"}, "asStringMap": {"describeReply"}, "fieldGot": {},
	"checkSlots": {"keySlot"}, "keySlot": {"crc16Table"},
}

func (e *emitter) emitSharedFile() []jen.Code {
	evalOf := e.emitEvalOf() // before the helpers are gathered: it uses checkSlots
	for changed := true; changed; {
		changed = false
		for h := range e.helpers {
			for _, d := range helperDeps[h] {
				if !e.helpers[d] {
					e.helpers[d], changed = true, true
				}
			}
		}
	}
	out := []jen.Code{
		emitScriptType(),
		emitScriptsVar(e.pkg),
		emitPreload(),
		evalOf,
		emitSentinels(e.pkg),
		emitScriptError(),
		emitDecodeErrorType(),
		emitCrossSlotError(),
	}
	for _, h := range helperOrder {
		if e.helpers[h] {
			out = append(out, helperCode[h]())
		}
	}
	return out
}

func emitScriptType() jen.Code {
	return jen.Comment("Script describes one script of this package.").Line().
		Type().Id("Script").Struct(
		jen.Id("Name").String().Comment("Go function name"),
		jen.Id("File").String().Comment("file the script was generated from"),
		jen.Id("Source").String().Comment("the script, verbatim"),
		jen.Id("SHA1").String().Comment("SHA-1 of Source, as SCRIPT LOAD answers"),
		jen.Id("ReadOnly").Bool().Comment("run with EVALSHA_RO / EVAL_RO"),
		jen.Id("Retryable").Bool().Comment("safe to retry on a lost reply"),
		jen.Id("Keys").Index().String().Comment("KEYS names in order; a variadic one ends in ..."),
		jen.Id("Args").Index().String().Comment("ARGV names in order; a variadic one ends in ..."),
	)
}

func paramNames(ps []Param) jen.Code {
	if len(ps) == 0 {
		return jen.Nil()
	}
	return jen.Index().String().ValuesFunc(func(g *jen.Group) {
		for _, p := range ps {
			n := p.Name
			if p.Variadic {
				n += "..."
			}
			g.Lit(n)
		}
	})
}

func emitScriptsVar(pkg *Package) jen.Code {
	return jen.Comment("Scripts lists every script of this package, sorted by name.").Line().
		Var().Id("Scripts").Op("=").Index().Id("Script").ValuesFunc(func(g *jen.Group) {
		for _, s := range pkg.Scripts {
			g.Values(jen.Dict{
				jen.Id("Name"):      jen.Lit(s.Name),
				jen.Id("File"):      jen.Lit(s.File),
				jen.Id("Source"):    jen.Id(sourceConst(s)),
				jen.Id("SHA1"):      jen.Id(shaConst(s)),
				jen.Id("ReadOnly"):  jen.Lit(s.ReadOnly),
				jen.Id("Retryable"): jen.Lit(s.Retryable),
				jen.Id("Keys"):      paramNames(s.Keys),
				jen.Id("Args"):      paramNames(s.Args),
			})
		}
	})
}

func emitPreload() jen.Code {
	return jen.Comment("Preload loads every script into the script cache of every node of c (SCRIPT LOAD,").Line().
		Comment("one round trip per node, nodes in parallel) and checks the SHA-1 each node answers.").Line().
		Comment("It returns the failures joined.").Line().
		Func().Id("Preload").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("c").Qual(rueidisPath, "Client")).Error().Block(
		jen.Var().Defs(
			jen.Id("mu").Qual("sync", "Mutex"),
			jen.Id("wg").Qual("sync", "WaitGroup"),
			jen.Id("errs").Index().Error(),
		),
		jen.For(jen.List(jen.Id("addr"), jen.Id("node")).Op(":=").Range().Id("c").Dot("Nodes").Call()).Block(
			jen.Id("wg").Dot("Add").Call(jen.Lit(1)),
			jen.Go().Func().Params(jen.Id("addr").String(), jen.Id("node").Qual(rueidisPath, "Client")).Block(
				jen.Defer().Id("wg").Dot("Done").Call(),
				jen.Id("cmds").Op(":=").Make(jen.Qual(rueidisPath, "Commands"), jen.Len(jen.Id("Scripts"))),
				jen.For(jen.List(jen.Id("i"), jen.Id("s")).Op(":=").Range().Id("Scripts")).Block(
					jen.Id("cmds").Index(jen.Id("i")).Op("=").Id("node").Dot("B").Call().Dot("ScriptLoad").Call().
						Dot("Script").Call(jen.Id("s").Dot("Source")).Dot("Build").Call(),
				),
				jen.For(jen.List(jen.Id("i"), jen.Id("resp")).Op(":=").Range().Id("node").Dot("DoMulti").Call(jen.Id("ctx"), jen.Id("cmds").Op("..."))).Block(
					jen.List(jen.Id("sha"), jen.Err()).Op(":=").Id("resp").Dot("ToString").Call(),
					jen.If(jen.Err().Op("==").Nil().Op("&&").Id("sha").Op("!=").Id("Scripts").Index(jen.Id("i")).Dot("SHA1")).Block(
						jen.Err().Op("=").Qual("fmt", "Errorf").Call(jen.Lit("SHA-1 is %s, want %s"), jen.Id("sha"), jen.Id("Scripts").Index(jen.Id("i")).Dot("SHA1")),
					),
					jen.If(jen.Err().Op("!=").Nil()).Block(
						jen.Id("mu").Dot("Lock").Call(),
						jen.Id("errs").Op("=").Append(jen.Id("errs"), jen.Qual("fmt", "Errorf").Call(
							jen.Lit("scriptgen: preload %s on %s: %w"), jen.Id("Scripts").Index(jen.Id("i")).Dot("Name"), jen.Id("addr"), jen.Err())),
						jen.Id("mu").Dot("Unlock").Call(),
					),
				),
			).Call(jen.Id("addr"), jen.Id("node")),
		),
		jen.Id("wg").Dot("Wait").Call(),
		jen.Return(jen.Qual("errors", "Join").Call(jen.Id("errs").Op("..."))),
	)
}

func emitSentinels(pkg *Package) jen.Code {
	type sentinel struct{ code, text string }
	seen := map[string]bool{}
	var list []sentinel
	for _, s := range pkg.Scripts {
		for _, d := range s.Errors {
			if !seen[d.Code] {
				seen[d.Code] = true
				list = append(list, sentinel{d.Code, d.Text})
			}
		}
	}
	sortSentinels := func() {
		for i := 1; i < len(list); i++ {
			for j := i; j > 0 && list[j].code < list[j-1].code; j-- {
				list[j], list[j-1] = list[j-1], list[j]
			}
		}
	}
	sortSentinels()
	return jen.Comment("Errors declared by the scripts (@error): a *ScriptError with that code matches").Line().
		Comment("its sentinel with errors.Is. ErrCrossSlot is matched by every *CrossSlotError.").Line().
		Var().DefsFunc(func(g *jen.Group) {
		g.Id("ErrCrossSlot").Op("=").Qual("errors", "New").Call(jen.Lit("scriptgen: keys of one call are in different hash slots"))
		for _, d := range list {
			g.Id(sentinelName(d.code)).Op("=").Qual("errors", "New").Call(jen.Lit(fmt.Sprintf("%s: %s", d.code, d.text)))
		}
	})
}

func emitScriptError() jen.Code {
	recv := jen.Id("e").Op("*").Id("ScriptError")
	return jen.Comment("ScriptError is an error reply whose code the script declares with @error.").Line().
		Comment("errors.Is matches it against the code's sentinel (ErrCode).").Line().
		Type().Id("ScriptError").Struct(
		jen.Id("Script").String().Comment("script name"),
		jen.Id("Code").String().Comment("declared code, the first word of Message"),
		jen.Id("Message").String().Comment("the script's error message, in full"),
		jen.Id("sentinel").Error(),
	).Line().Line().
		Func().Params(recv.Clone()).Id("Error").Params().String().Block(
		jen.Return(jen.Id("e").Dot("Script").Op("+").Lit(": ").Op("+").Id("e").Dot("Message")),
	).Line().Line().
		Comment("Unwrap returns the sentinel of the error's code.").Line().
		Func().Params(recv.Clone()).Id("Unwrap").Params().Error().Block(jen.Return(jen.Id("e").Dot("sentinel")))
}

func emitDecodeErrorType() jen.Code {
	return jen.Comment("DecodeError is a reply whose shape does not match the script's @return type.").Line().
		Type().Id("DecodeError").Struct(
		jen.Id("Script").String().Comment("script name"),
		jen.Id("Want").String().Comment("declared reply type"),
		jen.Id("Got").String().Comment("what the reply was"),
	).Line().Line().
		Func().Params(jen.Id("e").Op("*").Id("DecodeError")).Id("Error").Params().String().Block(
		jen.Return(jen.Lit("scriptgen: ").Op("+").Id("e").Dot("Script").Op("+").Lit(": reply is ").Op("+").
			Id("e").Dot("Got").Op("+").Lit(", want ").Op("+").Id("e").Dot("Want")),
	)
}

func emitCrossSlotError() jen.Code {
	recv := jen.Id("e").Op("*").Id("CrossSlotError")
	return jen.Comment("CrossSlotError refuses a call on a cluster client whose keys are in different").Line().
		Comment("hash slots; Redis Cluster cannot run it. errors.Is matches it against ErrCrossSlot.").Line().
		Type().Id("CrossSlotError").Struct(
		jen.Id("Script").String().Comment("script name"),
		jen.Id("Keys").Index().String().Comment("the keys of the call"),
	).Line().Line().
		Func().Params(recv.Clone()).Id("Error").Params().String().Block(
		jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: keys %q are in different hash slots"), jen.Id("e").Dot("Script"), jen.Id("e").Dot("Keys"))),
	).Line().Line().
		Comment("Unwrap returns ErrCrossSlot.").Line().
		Func().Params(recv.Clone()).Id("Unwrap").Params().Error().Block(jen.Return(jen.Id("ErrCrossSlot")))
}
