package gen

import (
	"github.com/dave/jennifer/jen"
)

// emitCommand emits <Name>Command, which builds a script call as a rueidis
// command without sending it, so callers can pipeline it with other commands
// on one connection (for example a write followed by WAIT), and
// Decode<Name>, which reads its reply.
func (e *emitter) emitCommand(s *Script) jen.Code {
	name := s.Name + "Command"
	params := []jen.Code{jen.Id("c").Qual(rueidisPath, "Client")}
	for _, k := range s.Keys {
		if k.Variadic {
			params = append(params, jen.Id(paramName(k.Name)).Index().String())
		} else {
			params = append(params, jen.Id(paramName(k.Name)).String())
		}
	}
	for _, a := range s.Args {
		if a.Variadic {
			params = append(params, jen.Id(paramName(a.Name)).Op("...").Add(goType(s, a.Type)))
		} else {
			params = append(params, jen.Id(paramName(a.Name)).Add(goType(s, a.Type)))
		}
	}
	cmd := jen.Commentf("%s builds the EVALSHA command of %s without sending it, for a", name, s.Name).Line().
		Comment("pipeline with other commands (c.DoMulti). Read its reply with Decode" + s.Name + ".").Line().
		Comment("A NOSCRIPT error reply means the script is not loaded on that node yet:").Line().
		Comment("build the command again and send EvalOf of it to that node, which runs the").Line().
		Comment("script from its source and caches it there.").Line()
	commentParagraph(cmd, bytesNote(bytesParams(s, func(p Param) string { return paramName(p.Name) }), "argument",
		[2]string{"is not copied", "are not copied"},
		[2]string{"the command refers to it, so do not modify it once the command is made (a Do whose context ends returns at once, and the command may be written after that)",
			"the command refers to them, so do not modify them once the command is made (a Do whose context ends returns at once, and the command may be written after that)"}), false)
	commentParagraph(cmd, flagsNote(s), false)
	cmd.Func().Id(name).Params(params...).Params(jen.Qual(rueidisPath, "Completed"), jen.Error()).BlockFunc(func(g *jen.Group) {
		get := func(p Param) jen.Code { return jen.Id(paramName(p.Name)) }
		e.emitCommandChecks(g, s, get, func(err jen.Code) []jen.Code {
			return []jen.Code{jen.Return(jen.Qual(rueidisPath, "Completed").Values(), err)}
		})
		e.emitTagChecks(g, s, jen.Id("c").Dot("Mode").Call().Op("==").Qual(rueidisPath, "ClientModeCluster"), get, func(err jen.Code) []jen.Code {
			return []jen.Code{jen.Return(jen.Qual(rueidisPath, "Completed").Values(), err)}
		})
		e.emitKeys(g, s, get)
		if needsSlotCheck(s) {
			g.If(jen.Id("c").Dot("Mode").Call().Op("==").Qual(rueidisPath, "ClientModeCluster")).Block(
				jen.If(jen.Err().Op(":=").Add(e.use("checkSlots")).Call(jen.Lit(s.Name), jen.Id("keys")), jen.Err().Op("!=").Nil()).Block(
					jen.Return(jen.Qual(rueidisPath, "Completed").Values(), jen.Err()),
				),
			)
		}
		e.emitArgs(g, s, get, true)
		g.Return(buildCmd(s, false), jen.Nil())
	})
	decode := jen.Commentf("Decode%s reads the reply to %s.", s.Name, name).Line().
		Func().Id("Decode" + s.Name).Params(jen.Id("resp").Qual(rueidisPath, "RedisResult")).Params(results(s)...).Block(
		jen.Return(jen.Id(decodeFunc(s)).Call(jen.Id("resp"))),
	)
	return jen.Add(cmd).Line().Line().Add(decode)
}

// emitEvalOf emits EvalOf, which turns a command of a Command builder into
// EVAL with the script's source. A NOSCRIPT concerns the node that answered
// it only: EVAL there settles it and caches the script on that node, where
// Preload would wait on every node of the client, replicas included.
func (e *emitter) emitEvalOf() jen.Code {
	fail := func(err jen.Code) jen.Code { return jen.Return(jen.Qual(rueidisPath, "Completed").Values(), err) }
	build := func(method string) jen.Code {
		return jen.Id("eval").Op("=").Id("c").Dot("B").Call().Dot(method).Call().Dot("Script").Call(jen.Id("s").Dot("Source")).
			Dot("Numkeys").Call(jen.Int64().Call(jen.Id("n"))).
			Dot("Key").Call(jen.Id("keys").Op("...")).
			Dot("Arg").Call(jen.Id("args").Op("...")).
			Dot("Build").Call()
	}
	tok := func(i int) *jen.Statement { return jen.Id("tokens").Index(jen.Lit(i)) }
	return jen.Comment("EvalOf returns cmd, an EVALSHA command built by one of this package's Command").Line().
		Comment("builders, as EVAL with the script's source (found by its SHA-1 in Scripts), or").Line().
		Comment("EVAL_RO for EVALSHA_RO, with the same keys and arguments, so for the same hash").Line().
		Comment("slot; a retryable command stays retryable. Send it where cmd was answered").Line().
		Comment("NOSCRIPT: EVAL runs the script from its source and caches it on that node, the").Line().
		Comment("one that needs it, whereas Preload loads every script on every node of the").Line().
		Comment("client and waits for all of them, a stalled replica included.").Line().
		Comment("").Line().
		Comment("cmd must not have been sent: rueidis recycles a command once it is answered, so").Line().
		Comment("build it again. A command that is no EVALSHA of a script in Scripts is an error.").Line().
		Func().Id("EvalOf").Params(jen.Id("c").Qual(rueidisPath, "Client"), jen.Id("cmd").Qual(rueidisPath, "Completed")).
		Params(jen.Qual(rueidisPath, "Completed"), jen.Error()).Block(
		jen.Var().Id("tokens").Index().String(),
		jen.If(jen.Op("!").Id("cmd").Dot("IsEmpty").Call()).Block( // the zero Completed has no token slice
			jen.Id("tokens").Op("=").Id("cmd").Dot("Commands").Call(),
		),
		jen.If(jen.Len(jen.Id("tokens")).Op("<").Lit(3).Op("||").Add(tok(0)).Op("!=").Lit("EVALSHA").Op("&&").Add(tok(0)).Op("!=").Lit("EVALSHA_RO")).Block(
			fail(jen.Qual("errors", "New").Call(jen.Lit("scriptgen: EvalOf: not an EVALSHA command"))),
		),
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Qual("strconv", "Atoi").Call(tok(2)),
		jen.If(jen.Err().Op("!=").Nil().Op("||").Id("n").Op("<").Lit(0).Op("||").Id("n").Op(">").Len(jen.Id("tokens")).Op("-").Lit(3)).Block(
			fail(jen.Qual("fmt", "Errorf").Call(jen.Lit("scriptgen: EvalOf: numkeys %q, with %d keys and arguments"), tok(2), jen.Len(jen.Id("tokens")).Op("-").Lit(3))),
		),
		jen.List(jen.Id("keys"), jen.Id("args")).Op(":=").List(jen.Id("tokens").Index(jen.Lit(3), jen.Lit(3).Op("+").Id("n")), jen.Id("tokens").Index(jen.Lit(3).Op("+").Id("n"), jen.Empty())),
		jen.For(jen.Id("i").Op(":=").Range().Id("Scripts")).Block(
			jen.Id("s").Op(":=").Op("&").Id("Scripts").Index(jen.Id("i")),
			jen.If(jen.Id("s").Dot("SHA1").Op("!=").Add(tok(1))).Block(jen.Continue()),
			jen.If(jen.Id("c").Dot("Mode").Call().Op("==").Qual(rueidisPath, "ClientModeCluster")).Block(
				jen.If(jen.Err().Op(":=").Add(e.use("checkSlots")).Call(jen.Id("s").Dot("Name"), jen.Id("keys")), jen.Err().Op("!=").Nil()).Block(
					fail(jen.Err()),
				),
			),
			jen.Var().Id("eval").Qual(rueidisPath, "Completed"),
			jen.If(tok(0).Op("==").Lit("EVALSHA_RO")).Block(build("EvalRo")).Else().Block(build("Eval")),
			jen.If(jen.Id("cmd").Dot("IsRetryable").Call()).Block(jen.Id("eval").Op("=").Id("eval").Dot("ToRetryable").Call()),
			jen.Return(jen.Id("eval"), jen.Nil()),
		),
		fail(jen.Qual("fmt", "Errorf").Call(jen.Lit("scriptgen: EvalOf: no script of this package has SHA-1 %s"), tok(1))),
	)
}
