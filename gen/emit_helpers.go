package gen

import "github.com/dave/jennifer/jen"

// helperOrder is the order shared helpers appear in the shared file.
var helperOrder = []string{
	"boolArg", "msArg", "isNoScript", "commandError", "commandIs", "numberError", "checkNumbers", "checkTimes", "timeError", "checkTimeRange", "durationError", "checkDurations", "floatError", "checkFloats", "emptyError", "longError", "groupError", "hashTagError", "checkHashTags", "checkSlots", "keySlot", "crc16Table",
	"describeReply", "fieldGot", "asString", "asBytes", "asInt64", "asFloat64", "asBool",
	"asStrings", "asInt64s", "asStringMap",
}

func msgParam() jen.Code { return jen.Id("m").Op("*").Qual(rueidisPath, "RedisMessage") }

var helperCode = map[string]func() jen.Code{
	"boolArg": func() jen.Code {
		return jen.Comment("boolArg encodes a bool argument as 1 or 0.").Line().
			Func().Id("boolArg").Params(jen.Id("b").Bool()).String().Block(
			jen.If(jen.Id("b")).Block(jen.Return(jen.Lit("1"))),
			jen.Return(jen.Lit("0")),
		)
	},
	"msArg": func() jen.Code {
		slot := jen.Op("&").Id("msArgs").Index(jen.Uint64().Call(jen.Id("ms")).Op("%").Uint64().Call(jen.Len(jen.Id("msArgs"))))
		return jen.Comment("msArg encodes a duration argument as whole milliseconds, a part of one rounded").Line().
			Comment("up: a positive duration is never sent as 0, which PEXPIRE takes as \"delete the").Line().
			Comment("key now\" and SET PX refuses. A program sends the same few durations (leases,").Line().
			Comment("timeouts) again and again: the text of recent ones is kept, by value, so those").Line().
			Comment("calls format and allocate nothing.").Line().
			Func().Id("msArg").Params(jen.Id("d").Qual("time", "Duration")).String().Block(
			jen.Id("ms").Op(":=").Id("d").Dot("Milliseconds").Call(),
			jen.If(jen.Id("d").Op(">").Qual("time", "Duration").Call(jen.Id("ms")).Op("*").Qual("time", "Millisecond")).Block(
				jen.Id("ms").Op("++"),
			),
			jen.Id("slot").Op(":=").Add(slot),
			jen.If(jen.Id("t").Op(":=").Id("slot").Dot("Load").Call(), jen.Id("t").Op("!=").Nil().Op("&&").Id("t").Dot("ms").Op("==").Id("ms")).Block(
				jen.Return(jen.Id("t").Dot("s")),
			),
			jen.Id("t").Op(":=").Op("&").Id("msArgText").Values(jen.Dict{
				jen.Id("ms"): jen.Id("ms"),
				jen.Id("s"):  jen.Qual("strconv", "FormatInt").Call(jen.Id("ms"), jen.Lit(10)),
			}),
			jen.Id("slot").Dot("Store").Call(jen.Id("t")),
			jen.Return(jen.Id("t").Dot("s")),
		).Line().Line().
			Comment("msArgText is the text of one duration argument.").Line().
			Type().Id("msArgText").Struct(
			jen.Id("ms").Int64(),
			jen.Id("s").String(),
		).Line().Line().
			Comment("msArgs holds recently sent duration arguments (a cache, not state).").Line().
			Var().Id("msArgs").Index(jen.Lit(64)).Qual("sync/atomic", "Pointer").Types(jen.Id("msArgText"))
	},
	"isNoScript": func() jen.Code {
		return jen.Comment("isNoScript reports whether Redis answered NOSCRIPT.").Line().
			Func().Id("isNoScript").Params(jen.Id("resp").Qual(rueidisPath, "RedisResult")).Bool().Block(
			jen.List(jen.Id("re"), jen.Id("ok")).Op(":=").Qual(rueidisPath, "IsRedisErr").Call(jen.Id("resp").Dot("Error").Call()),
			jen.Return(jen.Id("ok").Op("&&").Id("re").Dot("IsNoScript").Call()),
		)
	},
	"commandError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("CommandError")
		return jen.Comment("CommandError refuses a call whose argument names a Redis command the script").Line().
			Comment("does not declare (@commands); nothing is sent.").Line().
			Type().Id("CommandError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("argument name"),
			jen.Id("Value").String().Comment("the value given"),
			jen.Id("Allowed").Index().String().Comment("the commands the script declares"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: argument %s is %q, want one of %q"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Value"), jen.Id("e").Dot("Allowed"))),
		)
	},
	"numberError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("NumberError")
		return jen.Comment("NumberError refuses a call whose int64 or time argument the script reads as a").Line().
			Comment("Lua number, a double, which holds integers exactly only up to 2^53: beyond it").Line().
			Comment("the script would go on with other digits, silently. Nothing is sent.").Line().
			Type().Id("NumberError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("argument name"),
			jen.Id("Value").Int64().Comment("the value given; of a time, its unix milliseconds (saturated)"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: argument %s is %d, beyond ±2^53: the script reads it as a Lua number, which would lose digits"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Value"))),
		)
	},
	"checkNumbers": func() jen.Code {
		v := jen.Id("v")
		return jen.Comment("checkNumbers returns a *NumberError for the first of vs beyond ±2^53, which").Line().
			Comment("a Lua number cannot hold exactly.").Line().
			Func().Id("checkNumbers").Params(jen.Id("script"), jen.Id("arg").String(), jen.Id("vs").Op("...").Int64()).Error().Block(
			jen.For(jen.List(jen.Id("_"), v.Clone()).Op(":=").Range().Id("vs")).Block(
				jen.If(v.Clone().Op(">").Lit(1).Op("<<").Lit(53).Op("||").Add(v.Clone()).Op("<").Op("-").Parens(jen.Lit(1).Op("<<").Lit(53))).Block(
					jen.Return(jen.Op("&").Id("NumberError").Values(jen.Dict{
						jen.Id("Script"): jen.Id("script"),
						jen.Id("Arg"):    jen.Id("arg"),
						jen.Id("Value"):  v.Clone(),
					})),
				),
			),
			jen.Return(jen.Nil()),
		)
	},
	"checkTimes": func() jen.Code {
		v, ms := jen.Id("v"), jen.Id("ms")
		limit := jen.Lit(1).Op("<<").Lit(53)
		return jen.Comment("checkTimes returns a *NumberError for the first of ts whose unix milliseconds").Line().
			Comment("are beyond ±2^53, which a Lua number cannot hold exactly. UnixMilli is").Line().
			Comment("undefined beyond an int64: the seconds are looked at first.").Line().
			Func().Id("checkTimes").Params(jen.Id("script"), jen.Id("arg").String(), jen.Id("ts").Op("...").Qual("time", "Time")).Error().Block(
			jen.For(jen.List(jen.Id("_"), v.Clone()).Op(":=").Range().Id("ts")).Block(
				jen.Id("s").Op(":=").Add(v.Clone()).Dot("Unix").Call(),
				jen.Var().Add(ms.Clone()).Int64(),
				jen.Switch().Block(
					jen.Case(jen.Id("s").Op(">=").Qual("math", "MaxInt64").Op("/").Lit(1000)).Block(ms.Clone().Op("=").Qual("math", "MaxInt64")),
					jen.Case(jen.Id("s").Op("<=").Qual("math", "MinInt64").Op("/").Lit(1000)).Block(ms.Clone().Op("=").Qual("math", "MinInt64")),
					jen.Default().Block(ms.Clone().Op("=").Add(v.Clone()).Dot("UnixMilli").Call()),
				),
				jen.If(ms.Clone().Op(">").Add(limit.Clone()).Op("||").Add(ms.Clone()).Op("<").Op("-").Parens(limit.Clone())).Block(
					jen.Return(jen.Op("&").Id("NumberError").Values(jen.Dict{
						jen.Id("Script"): jen.Id("script"),
						jen.Id("Arg"):    jen.Id("arg"),
						jen.Id("Value"):  ms.Clone(),
					})),
				),
			),
			jen.Return(jen.Nil()),
		)
	},
	"timeError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("TimeError")
		return jen.Comment("TimeError refuses a call whose time argument is so far from 1970 that its unix").Line().
			Comment("milliseconds do not fit in an int64 (beyond about 292 million years): it would be").Line().
			Comment("sent wrapped, as another time (0, a negative one). Nothing is sent.").Line().
			Type().Id("TimeError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("argument name"),
			jen.Id("Value").Qual("time", "Time").Comment("the value given"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: argument %s is %s, whose unix milliseconds do not fit in an int64"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Value"))),
		)
	},
	"checkTimeRange": func() jen.Code {
		v := jen.Id("v")
		return jen.Comment("checkTimeRange returns a *TimeError for the first of ts whose unix milliseconds").Line().
			Comment("do not fit in an int64 (UnixMilli is undefined there).").Line().
			Func().Id("checkTimeRange").Params(jen.Id("script"), jen.Id("arg").String(), jen.Id("ts").Op("...").Qual("time", "Time")).Error().Block(
			jen.For(jen.List(jen.Id("_"), v.Clone()).Op(":=").Range().Id("ts")).Block(
				jen.If(jen.Id("s").Op(":=").Add(v.Clone()).Dot("Unix").Call(), jen.Id("s").Op(">=").Qual("math", "MaxInt64").Op("/").Lit(1000).Op("||").Id("s").Op("<=").Qual("math", "MinInt64").Op("/").Lit(1000)).Block(
					jen.Return(jen.Op("&").Id("TimeError").Values(jen.Dict{
						jen.Id("Script"): jen.Id("script"),
						jen.Id("Arg"):    jen.Id("arg"),
						jen.Id("Value"):  v.Clone(),
					})),
				),
			),
			jen.Return(jen.Nil()),
		)
	},
	"durationError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("DurationError")
		return jen.Comment("DurationError refuses a call whose duration argument is negative: a duration is").Line().
			Comment("a length of time, sent as milliseconds, and a script passes it on where Redis").Line().
			Comment("reads one (PEXPIRE deletes the key for a negative one, SET PX refuses it after").Line().
			Comment("the script's earlier writes). Nothing is sent.").Line().
			Type().Id("DurationError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("argument name"),
			jen.Id("Value").Qual("time", "Duration").Comment("the value given"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: argument %s is %s, a negative duration: nothing was sent"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Value"))),
		)
	},
	"checkDurations": func() jen.Code {
		v := jen.Id("v")
		return jen.Comment("checkDurations returns a *DurationError for the first of ds that is negative.").Line().
			Func().Id("checkDurations").Params(jen.Id("script"), jen.Id("arg").String(), jen.Id("ds").Op("...").Qual("time", "Duration")).Error().Block(
			jen.For(jen.List(jen.Id("_"), v.Clone()).Op(":=").Range().Id("ds")).Block(
				jen.If(v.Clone().Op("<").Lit(0)).Block(
					jen.Return(jen.Op("&").Id("DurationError").Values(jen.Dict{
						jen.Id("Script"): jen.Id("script"),
						jen.Id("Arg"):    jen.Id("arg"),
						jen.Id("Value"):  v.Clone(),
					})),
				),
			),
			jen.Return(jen.Nil()),
		)
	},
	"floatError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("FloatError")
		return jen.Comment("FloatError refuses a call whose float64 argument is NaN, which no Redis command").Line().
			Comment("reads as a number (ZADD, INCRBYFLOAT, ... fail after the script's earlier").Line().
			Comment("writes) and which Lua compares false with every number. Nothing is sent.").Line().
			Type().Id("FloatError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("argument name"),
			jen.Id("Value").Float64().Comment("the value given"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: argument %s is %v, which no Redis command reads as a number: nothing was sent"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Value"))),
		)
	},
	"checkFloats": func() jen.Code {
		v := jen.Id("v")
		return jen.Comment("checkFloats returns a *FloatError for the first of fs that is NaN. ±Inf is").Line().
			Comment("sent: ZADD and score ranges read +Inf and -Inf.").Line().
			Func().Id("checkFloats").Params(jen.Id("script"), jen.Id("arg").String(), jen.Id("fs").Op("...").Float64()).Error().Block(
			jen.For(jen.List(jen.Id("_"), v.Clone()).Op(":=").Range().Id("fs")).Block(
				jen.If(v.Clone().Op("!=").Add(v.Clone())).Block(
					jen.Return(jen.Op("&").Id("FloatError").Values(jen.Dict{
						jen.Id("Script"): jen.Id("script"),
						jen.Id("Arg"):    jen.Id("arg"),
						jen.Id("Value"):  v.Clone(),
					})),
				),
			),
			jen.Return(jen.Nil()),
		)
	},
	"emptyError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("EmptyError")
		return jen.Comment("EmptyError refuses a call with no value in a variadic key or argument list").Line().
			Comment("that a command of the script gets alone (redis.call('DEL', unpack(KEYS))),").Line().
			Comment("or with fewer than Min values where the command needs several or gets the").Line().
			Comment("list past its first values (unpack(ARGV, 3) after one fixed argument):").Line().
			Comment("Redis would fail that command, after the script's earlier writes. Nothing is").Line().
			Comment("sent.").Line().
			Type().Id("EmptyError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("key or argument name"),
			jen.Id("Count").Int().Comment("the values given, when Min is set"),
			jen.Id("Min").Int().Comment("the fewest values the script needs; 0 stands for 1"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			// (One value is "1 value", none "empty".)
			jen.If(jen.Id("e").Dot("Min").Op(">").Lit(1)).Block(
				jen.Switch(jen.Id("e").Dot("Count")).Block(
					jen.Case(jen.Lit(0)).Block(
						jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: %s is empty, and the script needs %d values of it at least: nothing was sent"),
							jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Min"))),
					),
					jen.Case(jen.Lit(1)).Block(
						jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: %s has 1 value, and the script needs %d of it at least: nothing was sent"),
							jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Min"))),
					),
				),
				jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: %s has %d values, and the script needs %d of it at least: nothing was sent"),
					jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Count"), jen.Id("e").Dot("Min"))),
			),
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: %s is empty, and the script needs one value of it at least: nothing was sent"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"))),
		)
	},
	"longError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("LongError")
		return jen.Comment("LongError refuses a call with more than Max values in a variadic key or").Line().
			Comment("argument list that a command of the script taking a fixed number of arguments").Line().
			Comment("gets whole (redis.call('GET', unpack(KEYS))): Redis would fail that command,").Line().
			Comment("after the script's earlier writes. Nothing is sent.").Line().
			Type().Id("LongError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("key or argument name"),
			jen.Id("Count").Int().Comment("the values given"),
			jen.Id("Max").Int().Comment("the most values the script takes"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			// (One value is "1 value".)
			jen.Id("values").Op(":=").Lit("values"),
			jen.If(jen.Id("e").Dot("Count").Op("==").Lit(1)).Block(jen.Id("values").Op("=").Lit("value")),
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: %s has %d %s, and the script takes %d of it at most: nothing was sent"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Count"), jen.Id("values"), jen.Id("e").Dot("Max"))),
		)
	},
	"groupError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("GroupError")
		return jen.Comment("GroupError refuses a call whose variadic key or argument list a command of the").Line().
			Comment("script takes in groups (redis.call('HSET', KEYS[1], unpack(ARGV)): field value").Line().
			Comment("pairs) and whose count leaves a group short: Redis would fail that command,").Line().
			Comment("after the script's earlier writes. Nothing is sent.").Line().
			Type().Id("GroupError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Arg").String().Comment("key or argument name"),
			jen.Id("Count").Int().Comment("the values given"),
			jen.Id("Group").Int().Comment("the words of each group"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: %s has %d values, which leave a group of %d words short in a command of the script: nothing was sent"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Arg"), jen.Id("e").Dot("Count"), jen.Id("e").Dot("Group"))),
		)
	},
	"hashTagError": func() jen.Code {
		recv := jen.Id("e").Op("*").Id("HashTagError")
		return jen.Comment("HashTagError refuses a call on a cluster client whose key has no hash tag").Line().
			Comment("{...} though the script extends it on the right (KEYS[1] .. ':x'): the").Line().
			Comment("extended key hashes to another slot, where Redis Cluster fails the script").Line().
			Comment("after its earlier writes (or which only happens to be on the same node, until").Line().
			Comment("slots move). Nothing is sent. errors.Is matches it against ErrCrossSlot.").Line().
			Type().Id("HashTagError").Struct(
			jen.Id("Script").String().Comment("script name"),
			jen.Id("Key").String().Comment("key name"),
			jen.Id("Value").String().Comment("the key given"),
		).Line().Line().
			Func().Params(recv.Clone()).Id("Error").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("scriptgen: %s: key %s is %q, without a hash tag {...}: the script extends it, and the extended key would be in another cluster slot; nothing was sent"),
				jen.Id("e").Dot("Script"), jen.Id("e").Dot("Key"), jen.Id("e").Dot("Value"))),
		).Line().Line().
			Comment("Unwrap returns ErrCrossSlot.").Line().
			Func().Params(recv.Clone()).Id("Unwrap").Params().Error().Block(jen.Return(jen.Id("ErrCrossSlot")))
	},
	"checkHashTags": func() jen.Code {
		k := jen.Id("k")
		return jen.Comment("checkHashTags returns a *HashTagError for the first of keys without a hash tag:").Line().
			Comment("a '{' followed, later, by a '}' with something between them.").Line().
			Func().Id("checkHashTags").Params(jen.Id("script"), jen.Id("key").String(), jen.Id("keys").Op("...").String()).Error().Block(
			jen.For(jen.List(jen.Id("_"), k.Clone()).Op(":=").Range().Id("keys")).Block(
				jen.If(jen.Id("i").Op(":=").Qual("strings", "IndexByte").Call(k.Clone(), jen.LitRune('{')), jen.Id("i").Op(">=").Lit(0)).Block(
					jen.If(jen.Qual("strings", "IndexByte").Call(k.Clone().Index(jen.Id("i").Op("+").Lit(1), jen.Empty()), jen.LitRune('}')).Op(">").Lit(0)).Block(
						jen.Continue(),
					),
				),
				jen.Return(jen.Op("&").Id("HashTagError").Values(jen.Dict{
					jen.Id("Script"): jen.Id("script"),
					jen.Id("Key"):    jen.Id("key"),
					jen.Id("Value"):  k.Clone(),
				})),
			),
			jen.Return(jen.Nil()),
		)
	},
	"commandIs": func() jen.Code {
		c := jen.Id("c")
		return jen.Comment("commandIs reports whether s names the command lower (given in lower case), in").Line().
			Comment("any ASCII case, as Redis matches command names. strings.EqualFold would also").Line().
			Comment("fold other letters (\"\u017fadd\" for \"sadd\"), which Redis then does not know: the").Line().
			Comment("script would fail after the writes it made before that call.").Line().
			Func().Id("commandIs").Params(jen.Id("s"), jen.Id("lower").String()).Bool().Block(
			jen.If(jen.Len(jen.Id("s")).Op("!=").Len(jen.Id("lower"))).Block(jen.Return(jen.False())),
			jen.For(jen.Id("i").Op(":=").Range().Len(jen.Id("s"))).Block(
				c.Clone().Op(":=").Id("s").Index(jen.Id("i")),
				jen.If(jen.LitRune('A').Op("<=").Add(c.Clone()).Op("&&").Add(c.Clone()).Op("<=").Add(jen.LitRune('Z'))).Block(
					c.Clone().Op("+=").Add(jen.LitRune('a')).Op("-").Add(jen.LitRune('A')),
				),
				jen.If(c.Clone().Op("!=").Id("lower").Index(jen.Id("i"))).Block(jen.Return(jen.False())),
			),
			jen.Return(jen.True()),
		)
	},
	"checkSlots": func() jen.Code {
		return jen.Comment("checkSlots returns a *CrossSlotError when keys are in more than one hash slot.").Line().
			Func().Id("checkSlots").Params(jen.Id("script").String(), jen.Id("keys").Index().String()).Error().Block(
			jen.If(jen.Len(jen.Id("keys")).Op("<").Lit(2)).Block(jen.Return(jen.Nil())),
			jen.Id("slot").Op(":=").Id("keySlot").Call(jen.Id("keys").Index(jen.Lit(0))),
			jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("keys").Index(jen.Lit(1), jen.Empty())).Block(
				jen.If(jen.Id("keySlot").Call(jen.Id("k")).Op("!=").Id("slot")).Block(
					jen.Return(jen.Op("&").Id("CrossSlotError").Values(jen.Dict{
						jen.Id("Script"): jen.Id("script"),
						jen.Id("Keys"):   jen.Append(jen.Index().String().Call(jen.Nil()), jen.Id("keys").Op("...")),
					})),
				),
			),
			jen.Return(jen.Nil()),
		)
	},
	"keySlot": func() jen.Code {
		return jen.Comment("keySlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the key, or of").Line().
			Comment("its first non-empty {hash tag}, modulo 16384.").Line().
			Func().Id("keySlot").Params(jen.Id("key").String()).Uint16().Block(
			jen.If(jen.Id("i").Op(":=").Qual("strings", "IndexByte").Call(jen.Id("key"), jen.LitRune('{')), jen.Id("i").Op(">=").Lit(0)).Block(
				jen.If(jen.Id("j").Op(":=").Qual("strings", "IndexByte").Call(jen.Id("key").Index(jen.Id("i").Op("+").Lit(1), jen.Empty()), jen.LitRune('}')), jen.Id("j").Op(">").Lit(0)).Block(
					jen.Id("key").Op("=").Id("key").Index(jen.Id("i").Op("+").Lit(1), jen.Id("i").Op("+").Lit(1).Op("+").Id("j")),
				),
			),
			jen.Var().Id("crc").Uint16(),
			jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Len(jen.Id("key")), jen.Id("i").Op("++")).Block(
				jen.Id("crc").Op("=").Id("crc").Op("<<").Lit(8).Op("^").Id("crc16Table").Index(
					jen.Byte().Call(jen.Id("crc").Op(">>").Lit(8)).Op("^").Id("key").Index(jen.Id("i"))),
			),
			jen.Return(jen.Id("crc").Op("&").Lit(16383)),
		)
	},
	"crc16Table": func() jen.Code {
		return jen.Comment("crc16Table is the CRC16-CCITT (XMODEM, polynomial 0x1021) table.").Line().
			Var().Id("crc16Table").Op("=").Func().Params().Index(jen.Lit(256)).Uint16().Block(
			jen.Var().Id("t").Index(jen.Lit(256)).Uint16(),
			jen.For(jen.Id("i").Op(":=").Range().Id("t")).Block(
				jen.Id("crc").Op(":=").Uint16().Call(jen.Id("i")).Op("<<").Lit(8),
				jen.For(jen.Id("b").Op(":=").Lit(0), jen.Id("b").Op("<").Lit(8), jen.Id("b").Op("++")).Block(
					jen.If(jen.Id("crc").Op("&").Lit(0x8000).Op("!=").Lit(0)).Block(
						jen.Id("crc").Op("=").Id("crc").Op("<<").Lit(1).Op("^").Lit(0x1021),
					).Else().Block(
						jen.Id("crc").Op("<<=").Lit(1),
					),
				),
				jen.Id("t").Index(jen.Id("i")).Op("=").Id("crc"),
			),
			jen.Return(jen.Id("t")),
		).Call()
	},
	"describeReply": func() jen.Code {
		return jen.Comment("describeReply says what kind of reply m is, for a *DecodeError.").Line().
			Func().Id("describeReply").Params(msgParam()).String().Block(
			jen.Switch().Block(
				jen.Case(jen.Id("m").Dot("IsNil").Call()).Block(jen.Return(jen.Lit("nil"))),
				jen.Case(jen.Id("m").Dot("IsString").Call()).Block(jen.Return(jen.Lit("a string"))),
				jen.Case(jen.Id("m").Dot("IsInt64").Call()).Block(jen.Return(jen.Lit("an integer"))),
				jen.Case(jen.Id("m").Dot("IsFloat64").Call()).Block(jen.Return(jen.Lit("a double"))),
				jen.Case(jen.Id("m").Dot("IsBool").Call()).Block(jen.Return(jen.Lit("a bool"))),
				jen.Case(jen.Id("m").Dot("IsMap").Call()).Block(jen.Return(jen.Lit("a map"))),
				jen.Case(jen.Id("m").Dot("IsArray").Call()).Block(
					jen.List(jen.Id("vals"), jen.Id("_")).Op(":=").Id("m").Dot("ToArray").Call(),
					jen.Return(jen.Lit("an array of ").Op("+").Qual("strconv", "Itoa").Call(jen.Len(jen.Id("vals")))),
				),
			),
			jen.Return(jen.Lit("a reply of another type")),
		)
	},
	"fieldGot": func() jen.Code {
		return jen.Comment("fieldGot describes a record reply whose element i (field) is wrong: got says").Line().
			Comment("what the element is, empty when it is missing or nil.").Line().
			Func().Id("fieldGot").Params(jen.Id("vals").Index().Qual(rueidisPath, "RedisMessage"), jen.Id("i").Int(), jen.List(jen.Id("field"), jen.Id("got")).String()).String().Block(
			jen.If(jen.Id("i").Op(">=").Len(jen.Id("vals"))).Block(
				jen.Return(jen.Lit("an array of ").Op("+").Qual("strconv", "Itoa").Call(jen.Len(jen.Id("vals"))).Op("+").Lit(" (no ").Op("+").Id("field").Op("+").Lit(")")),
			),
			jen.If(jen.Id("got").Op("==").Lit("")).Block(jen.Id("got").Op("=").Lit("nil")),
			jen.Return(jen.Lit("an array with ").Op("+").Id("got").Op("+").Lit(" at [").Op("+").Qual("strconv", "Itoa").Call(jen.Id("i")).Op("+").Lit("] (").Op("+").Id("field").Op("+").Lit(")")),
		)
	},
	"asString": func() jen.Code {
		return jen.Comment("asString reads a string reply; got is non-empty when m is something else.").Line().
			Func().Id("asString").Params(msgParam()).Params(jen.Id("v").String(), jen.Id("got").String()).Block(
			jen.If(jen.Op("!").Id("m").Dot("IsString").Call()).Block(jen.Return(jen.Lit(""), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.List(jen.Id("v"), jen.Id("_")).Op("=").Id("m").Dot("ToString").Call(),
			jen.Return(jen.Id("v"), jen.Lit("")),
		)
	},
	"asBytes": func() jen.Code {
		return jen.Comment("asBytes reads a string reply into a new slice.").Line().
			Func().Id("asBytes").Params(msgParam()).Params(jen.Index().Byte(), jen.String()).Block(
			jen.If(jen.Op("!").Id("m").Dot("IsString").Call()).Block(jen.Return(jen.Nil(), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.List(jen.Id("s"), jen.Id("_")).Op(":=").Id("m").Dot("ToString").Call(),
			jen.Return(jen.Index().Byte().Call(jen.Id("s")), jen.Lit("")),
		)
	},
	"asInt64": func() jen.Code {
		return jen.Comment("asInt64 reads an integer reply.").Line().
			Func().Id("asInt64").Params(msgParam()).Params(jen.Int64(), jen.String()).Block(
			jen.If(jen.Op("!").Id("m").Dot("IsInt64").Call()).Block(jen.Return(jen.Lit(0), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.List(jen.Id("v"), jen.Id("_")).Op(":=").Id("m").Dot("ToInt64").Call(),
			jen.Return(jen.Id("v"), jen.Lit("")),
		)
	},
	"asFloat64": func() jen.Code {
		return jen.Comment("asFloat64 reads a number sent as a string (Lua numbers are truncated to").Line().
			Comment("integers in replies) or a RESP3 double.").Line().
			Func().Id("asFloat64").Params(msgParam()).Params(jen.Float64(), jen.String()).Block(
			jen.If(jen.Id("m").Dot("IsFloat64").Call()).Block(
				jen.If(jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("m").Dot("ToFloat64").Call(), jen.Err().Op("==").Nil()).Block(jen.Return(jen.Id("v"), jen.Lit(""))),
				jen.Return(jen.Lit(0), jen.Lit("a malformed double")),
			),
			jen.If(jen.Op("!").Id("m").Dot("IsString").Call()).Block(jen.Return(jen.Lit(0), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.List(jen.Id("s"), jen.Id("_")).Op(":=").Id("m").Dot("ToString").Call(),
			jen.List(jen.Id("v"), jen.Err()).Op(":=").Qual("strconv", "ParseFloat").Call(jen.Id("s"), jen.Lit(64)),
			jen.Comment("The C library writes a NaN whose sign bit is set (Lua's 0/0) as -nan,").Line().
				Comment("which ParseFloat does not read."),
			jen.If(jen.Err().Op("!=").Nil().Op("&&").Len(jen.Id("s")).Op("==").Lit(4).Op("&&").Parens(jen.Id("s").Index(jen.Lit(0)).Op("==").LitRune('-').Op("||").Id("s").Index(jen.Lit(0)).Op("==").LitRune('+'))).Block(
				jen.If(jen.List(jen.Id("n"), jen.Id("e")).Op(":=").Qual("strconv", "ParseFloat").Call(jen.Id("s").Index(jen.Lit(1).Op(":")), jen.Lit(64)), jen.Id("e").Op("==").Nil().Op("&&").Qual("math", "IsNaN").Call(jen.Id("n"))).Block(
					jen.List(jen.Id("v"), jen.Err()).Op("=").List(jen.Id("n"), jen.Nil()),
				),
			),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Lit("a string that is not a number"))),
			jen.Return(jen.Id("v"), jen.Lit("")),
		)
	},
	"asBool": func() jen.Code {
		return jen.Comment("asBool reads 1 or 0 (Lua true, or a number) or a RESP3 bool.").Line().
			Func().Id("asBool").Params(msgParam()).Params(jen.Bool(), jen.String()).Block(
			jen.If(jen.Id("m").Dot("IsBool").Call()).Block(
				jen.List(jen.Id("v"), jen.Id("_")).Op(":=").Id("m").Dot("ToBool").Call(),
				jen.Return(jen.Id("v"), jen.Lit("")),
			),
			jen.If(jen.Op("!").Id("m").Dot("IsInt64").Call()).Block(jen.Return(jen.False(), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.List(jen.Id("n"), jen.Id("_")).Op(":=").Id("m").Dot("ToInt64").Call(),
			jen.If(jen.Id("n").Op("!=").Lit(0).Op("&&").Id("n").Op("!=").Lit(1)).Block(jen.Return(jen.False(), jen.Lit("an integer other than 0 and 1"))),
			jen.Return(jen.Id("n").Op("==").Lit(1), jen.Lit("")),
		)
	},
	"asStrings": func() jen.Code {
		return jen.Comment("asStrings reads an array of strings.").Line().
			Func().Id("asStrings").Params(msgParam()).Params(jen.Index().String(), jen.String()).Block(
			jen.List(jen.Id("vals"), jen.Err()).Op(":=").Id("m").Dot("ToArray").Call(),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.Id("out").Op(":=").Make(jen.Index().String(), jen.Len(jen.Id("vals"))),
			jen.For(jen.Id("i").Op(":=").Range().Id("vals")).Block(
				jen.If(jen.Op("!").Id("vals").Index(jen.Id("i")).Dot("IsString").Call()).Block(
					jen.Return(jen.Nil(), jen.Lit("an array with ").Op("+").Id("describeReply").Call(jen.Op("&").Id("vals").Index(jen.Id("i"))).Op("+").
						Lit(" at [").Op("+").Qual("strconv", "Itoa").Call(jen.Id("i")).Op("+").Lit("]")),
				),
				jen.List(jen.Id("out").Index(jen.Id("i")), jen.Id("_")).Op("=").Id("vals").Index(jen.Id("i")).Dot("ToString").Call(),
			),
			jen.Return(jen.Id("out"), jen.Lit("")),
		)
	},
	"asInt64s": func() jen.Code {
		return jen.Comment("asInt64s reads an array of integers.").Line().
			Func().Id("asInt64s").Params(msgParam()).Params(jen.Index().Int64(), jen.String()).Block(
			jen.List(jen.Id("vals"), jen.Err()).Op(":=").Id("m").Dot("ToArray").Call(),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.Id("out").Op(":=").Make(jen.Index().Int64(), jen.Len(jen.Id("vals"))),
			jen.For(jen.Id("i").Op(":=").Range().Id("vals")).Block(
				jen.If(jen.Op("!").Id("vals").Index(jen.Id("i")).Dot("IsInt64").Call()).Block(
					jen.Return(jen.Nil(), jen.Lit("an array with ").Op("+").Id("describeReply").Call(jen.Op("&").Id("vals").Index(jen.Id("i"))).Op("+").
						Lit(" at [").Op("+").Qual("strconv", "Itoa").Call(jen.Id("i")).Op("+").Lit("]")),
				),
				jen.List(jen.Id("out").Index(jen.Id("i")), jen.Id("_")).Op("=").Id("vals").Index(jen.Id("i")).Dot("ToInt64").Call(),
			),
			jen.Return(jen.Id("out"), jen.Lit("")),
		)
	},
	"asStringMap": func() jen.Code {
		return jen.Comment("asStringMap reads flat field-value pairs (or a RESP3 map) of strings.").Line().
			Func().Id("asStringMap").Params(msgParam()).Params(jen.Map(jen.String()).String(), jen.String()).Block(
			jen.If(jen.Id("m").Dot("IsMap").Call()).Block(
				jen.List(jen.Id("kv"), jen.Err()).Op(":=").Id("m").Dot("ToMap").Call(),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Lit("a malformed map"))),
				jen.Id("out").Op(":=").Make(jen.Map(jen.String()).String(), jen.Len(jen.Id("kv"))),
				jen.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Id("kv")).Block(
					jen.If(jen.Op("!").Id("v").Dot("IsString").Call()).Block(
						jen.Return(jen.Nil(), jen.Lit("a map with ").Op("+").Id("describeReply").Call(jen.Op("&").Id("v")).Op("+").Lit(" at ").Op("+").Qual("strconv", "Quote").Call(jen.Id("k"))),
					),
					jen.List(jen.Id("out").Index(jen.Id("k")), jen.Id("_")).Op("=").Id("v").Dot("ToString").Call(),
				),
				jen.Return(jen.Id("out"), jen.Lit("")),
			),
			jen.List(jen.Id("vals"), jen.Err()).Op(":=").Id("m").Dot("ToArray").Call(),
			jen.If(jen.Err().Op("!=").Nil().Op("||").Len(jen.Id("vals")).Op("%").Lit(2).Op("!=").Lit(0)).Block(jen.Return(jen.Nil(), jen.Id("describeReply").Call(jen.Id("m")))),
			jen.Id("out").Op(":=").Make(jen.Map(jen.String()).String(), jen.Len(jen.Id("vals")).Op("/").Lit(2)),
			jen.For(jen.Id("i").Op(":=").Range().Id("vals")).Block(
				jen.If(jen.Op("!").Id("vals").Index(jen.Id("i")).Dot("IsString").Call()).Block(
					jen.Return(jen.Nil(), jen.Lit("an array with ").Op("+").Id("describeReply").Call(jen.Op("&").Id("vals").Index(jen.Id("i"))).Op("+").
						Lit(" at [").Op("+").Qual("strconv", "Itoa").Call(jen.Id("i")).Op("+").Lit("]")),
				),
			),
			jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Len(jen.Id("vals")), jen.Id("i").Op("+=").Lit(2)).Block(
				jen.List(jen.Id("k"), jen.Id("_")).Op(":=").Id("vals").Index(jen.Id("i")).Dot("ToString").Call(),
				jen.List(jen.Id("out").Index(jen.Id("k")), jen.Id("_")).Op("=").Id("vals").Index(jen.Id("i").Op("+").Lit(1)).Dot("ToString").Call(),
			),
			jen.Return(jen.Id("out"), jen.Lit("")),
		)
	},
}
