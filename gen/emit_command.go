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
		Comment("call Preload, then send the command again.").Line()
	commentParagraph(cmd, bytesNote(bytesParams(s, func(p Param) string { return paramName(p.Name) }), "argument",
		[2]string{"is not copied", "are not copied"},
		[2]string{"the command refers to it, so do not modify it until it has been sent and answered",
			"the command refers to them, so do not modify them until it has been sent and answered"}), false)
	commentParagraph(cmd, flagsNote(s), false)
	cmd.Func().Id(name).Params(params...).Params(jen.Qual(rueidisPath, "Completed"), jen.Error()).BlockFunc(func(g *jen.Group) {
		get := func(p Param) jen.Code { return jen.Id(paramName(p.Name)) }
		e.emitCommandChecks(g, s, get, func(err jen.Code) []jen.Code {
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
		e.emitArgs(g, s, get)
		g.Return(buildCmd(s, false), jen.Nil())
	})
	decode := jen.Commentf("Decode%s reads the reply to %s.", s.Name, name).Line().
		Func().Id("Decode" + s.Name).Params(jen.Id("resp").Qual(rueidisPath, "RedisResult")).Params(results(s)...).Block(
		jen.Return(jen.Id(decodeFunc(s)).Call(jen.Id("resp"))),
	)
	return jen.Add(cmd).Line().Line().Add(decode)
}
