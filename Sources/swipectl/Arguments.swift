// The command line, parsed once into a plain value. Options may come before or after the
// command (as with systemctl); `--` ends them, for a title that starts with '-'. An option
// that becomes an op's argument is checked against the range Wire's op table declares for it
// (compiled in): what the daemon would refuse is a usage error here, worded as the daemon would.
import CommandLineParsing
import Movies
import People
import SwipeEngine
import Wire

/// What swipectl was asked to do.
enum Command: Equatable {
    /// `--from`: the movies after this id; `--limit`: at most this many; `--match`: only titles
    /// containing this, ignoring case (the `list` op's `after`, `limit`, `match`).
    case list(from: String? = nil, limit: UInt64? = nil, match: String? = nil)
    case add(title: String, image: String?)
    case toggleWatched(movie: String)
    case toggleFriends(movie: String)
    case remove(movie: String)
    /// MOVIE is the id of a removed movie (removed movies are not in `list` to match titles in).
    case restore(movie: String)
    /// MOVIE to another place in list order (issue 48): right after another movie (`--after
    /// MOVIE`, resolved as MOVIE is), or first (`--first`).
    case move(movie: String, to: ListPlace)
    /// The change at seq SEQ, whoever made it (the `undo` op's `seq`: each swipectl call is a
    /// connection of its own, which has no change of its own to undo).
    case undo(seq: UInt64)
    /// `once`: end when the daemon goes away instead of connecting again.
    case watch(from: UInt64?, once: Bool)
    /// `by`: only that person's changes (issue 46; the `history` op's `by`).
    case history(from: UInt64?, limit: UInt64?, by: String? = nil)
    /// One raw request line, sent as is.
    case call(line: String)
    /// The daemon's ops (the `help` op), not swipectl's own usage.
    case help
    /// A gesture on MOVIE's row, on one connection (Swipe.swift).
    case swipe(movie: String, gesture: Gesture, verbose: Bool)
    /// The terminal front end (Tui.swift): `--ascii` symbols, `--rtl` layout, `--record-dir`
    /// where `r` saves recordings (nil: the current directory), `--confirm-delete`: ask before
    /// deleting from the start.
    case tui(
        ascii: Bool, rtl: Bool, recordDirectory: String?, confirmDelete: Bool = false, peek: Bool = true,
        fullSwipe: FullSwipeStyle = .fill)
    /// `swipe … --record FILE`: the same, recorded into FILE (and its rows into FILE.rows).
    case recordedSwipe(movie: String, gesture: Gesture, verbose: Bool, file: String)
    /// A recording replayed on the engine, no daemon (Replay.swift).
    case replay(file: String, expect: String?)
    /// How the daemon is doing (the `status` op, StatusCommand.swift).
    case status
    /// The ops on people (issue 45; People.swift): a token for NAME with ROLE, expiring after
    /// `expiresIn` seconds (nil: never).
    case tokenCreate(name: String, role: AccessRole, expiresIn: Int64?)
    case tokenList
    /// NAME's tokens, or only the one with `id`.
    case tokenRevoke(name: String, id: String?)
    /// `role NAME [ROLE]`, `role NAME --clear`.
    case role(name: String, RoleChange)
    case denials
    /// Who this connection is (its hello, or the sign-in's reply).
    case whoami
}

/// What `role NAME` does with NAME's role.
enum RoleChange: Equatable {
    /// Only asks which role is given.
    case ask
    case give(AccessRole)
    /// Takes back the role given: the door decides again (`--clear`, the op's `null`).
    case clear
}

/// Where the token to sign in with comes from on the command line (`SWIPED_TOKEN` is read by
/// `Swipectl.main`, Token.swift).
enum TokenSource: Equatable {
    /// `--token TOKEN`.
    case given(String)
    /// `--token-file FILE`; `-` is standard input.
    case file(String)
}

/// What `swipe` does with the row.
enum Gesture: Equatable {
    /// Drag by `dx` points in `steps` steps (nil: as many as steps of at most 20 points need),
    /// then release, with `vx` when given.
    case drag(dx: Double, vx: Double?, steps: Int?)
    /// Open the row on `edge` (the `open` op), then tap `tap` when given.
    case open(edge: Edge, tap: String?)
    /// Fire `action` as a tap on its button would, without it showing (the `perform` op).
    case perform(action: String)
}

struct Invocation: Equatable {
    /// `--socket`, when given.
    var socket: String?
    /// `--json`: the daemon's lines as they came.
    var json = false
    /// `--token` or `--token-file`, when given.
    var token: TokenSource?
    var command: Command
}

enum ParseOutcome: Equatable {
    case run(Invocation)
    case usage
    case version
}

enum Arguments {
    /// The commands, with the operands each takes (an operand in brackets may be left out) and
    /// the options it accepts besides the global ones (--socket, --json, --token, --token-file).
    /// `token`'s three are each a command of two words.
    static let commands: [(name: String, operands: [String], options: Set<String>)] = [
        ("list", [], ["--from", "--limit", "--match"]),
        ("add", ["TITLE"], ["--image"]),
        ("toggle-watched", ["MOVIE"], []),
        ("toggle-friends", ["MOVIE"], []),
        ("remove", ["MOVIE"], []),
        ("restore", ["MOVIE"], []),
        ("move", ["MOVIE"], ["--after", "--first"]),
        ("undo", ["SEQ"], []),
        ("watch", [], ["--from", "--once"]),
        ("history", [], ["--from", "--limit", "--by"]),
        ("call", ["JSON"], []),
        ("help", [], []),
        ("status", [], []),
        (
            "swipe", ["MOVIE"],
            ["--dx", "--vx", "--steps", "--open", "--tap", "--perform", "--verbose", "--record"]
        ),
        ("replay", ["FILE"], ["--expect"]),
        ("tui", [], ["--ascii", "--rtl", "--record-dir", "--confirm-delete", "--no-peek", "--full-swipe"]),
        ("token create", ["NAME"], ["--role", "--expires"]),
        ("token list", [], []),
        ("token revoke", ["NAME"], ["--id"]),
        ("role", ["NAME", "[ROLE]"], ["--clear"]),
        ("denials", [], []),
        ("whoami", [], []),
    ]

    /// The options, global and of the commands (`commands` says which command takes which).
    /// A command's option takes one value, or is a flag that may be repeated.
    static let options: [OptionSpec] =
        [
            .flag("--help", aliases: ["-h"], stops: true), .flag("--version", stops: true), .flag("--json"),
            .value("--socket"), .value("--token"), .value("--token-file"),
        ]
        + ["--verbose", "--once", "--ascii", "--rtl", "--confirm-delete", "--no-peek", "--clear", "--first"]
        .map { .flag($0) }
        + [
            "--image", "--from", "--limit", "--match", "--dx", "--vx", "--steps", "--open", "--tap",
            "--perform", "--record", "--expect", "--record-dir", "--full-swipe", "--role", "--expires",
            "--id", "--by", "--after",
        ].map { .value($0, once: true) }

    static func parse(_ arguments: [String]) throws(Failure) -> ParseOutcome {
        let scanned: ScannedArguments
        do throws(ArgumentError) {
            scanned = try ScannedArguments(arguments, options: options)
        } catch {
            throw Failure.usage(error.description)
        }
        switch scanned.stoppedBy {
        case "--help": return .usage
        case "--version": return .version
        default: break
        }
        let json = scanned.has("--json")
        let socket = scanned.value("--socket")
        if socket?.isEmpty == true { throw Failure.usage("--socket needs a path") }
        let tokens =
            scanned.values("--token").map { ("--token", $0) }
            + scanned.values("--token-file").map { ("--token-file", $0) }
        if tokens.count > 1 { throw Failure.usage("give one --token or --token-file") }
        let token = try tokens.first.map { (t) throws(Failure) in try tokenSource(t.0, t.1) }
        let global: Set = ["--help", "--version", "--json", "--socket", "--token", "--token-file"]
        // A flag's value is "" (given) and a repeated flag is given still: each command reads
        // one value of an option.
        let values = scanned.given.filter { !global.contains($0.key) }.mapValues { $0.last ?? "" }
        let positional = scanned.positionals

        let words = try commandWords(positional)
        let name = words.name
        guard let spec = commands.first(where: { $0.name == name }) else {
            throw Failure.usage("unknown command '\(name)'")
        }
        for option in values.keys.sorted() where !spec.options.contains(option) {
            throw Failure.usage("\(option) does not apply to '\(name)'")
        }
        let operands = words.operands
        let required = spec.operands.filter { !$0.hasPrefix("[") }.count
        guard (required...spec.operands.count).contains(operands.count) else {
            let expected = spec.operands.isEmpty ? "no arguments" : spec.operands.joined(separator: " ")
            let hint =
                operands.count > spec.operands.count && ["TITLE", "MOVIE"].contains(spec.operands.first)
                ? " (quote a title with spaces)" : ""
            throw Failure.usage(
                "'\(name)' takes \(expected), not \(operands.count) argument\(operands.count == 1 ? "" : "s")\(hint)"
            )
        }
        let operand = operands.first ?? ""
        if !spec.operands.isEmpty && operand.allSatisfy({ $0 == " " || $0 == "\t" }) {
            throw Failure.usage("\(spec.operands[0]) must not be empty")
        }
        if name == "tui", token == .file("-") {
            throw Failure.usage("tui reads its keys from standard input: give --token-file a file, not -")
        }

        // (Not `??`: its autoclosure would throw any Error, not Failure.)
        var command = try peopleCommand(name, operands, values)
        if command == nil { command = try self.command(name, operand, values) }
        return .run(Invocation(socket: socket, json: json, token: token, command: command!))
    }

    /// The command's name and its operands: the first word, or the first two for `token`'s.
    private static func commandWords(_ positional: [String]) throws(Failure) -> (
        name: String, operands: [String]
    ) {
        guard let first = positional.first else { throw Failure.usage("no command given") }
        guard first == "token" else { return (first, Array(positional.dropFirst())) }
        let verbs = commands.compactMap { $0.name.hasPrefix("token ") ? $0.name.dropFirst(6) : nil }
        let choices = ArgumentValues.list(verbs.map(String.init))
        guard positional.count > 1 else { throw Failure.usage("'token' needs \(choices)") }
        guard verbs.contains(Substring(positional[1])) else {
            throw Failure.usage("unknown command 'token \(positional[1])' ('token' takes \(choices))")
        }
        return ("token " + positional[1], Array(positional.dropFirst(2)))
    }

    /// The command `name` names, from its operand and options (`parse` has checked that they
    /// are the ones it takes).
    private static func command(_ name: String, _ operand: String, _ values: [String: String]) throws(Failure)
        -> Command
    {
        switch name {
        case "list":
            return .list(
                from: try text("--from", values["--from"], for: .list, "after"),
                limit: try number("--limit", values["--limit"], for: .list, "limit"),
                match: try text("--match", values["--match"], for: .list, "match"))
        case "add": return .add(title: operand, image: values["--image"])
        case "toggle-watched": return .toggleWatched(movie: operand)
        case "toggle-friends": return .toggleFriends(movie: operand)
        case "remove": return .remove(movie: operand)
        case "restore": return .restore(movie: operand)
        case "move":
            // Exactly one of the two: the op's `after` is required, so that a forgotten place is
            // not read as "first" (protocol.md, `move`).
            switch (try text("--after", values["--after"], for: .move, "after"), values["--first"]) {
            case (let other?, nil): return .move(movie: operand, to: .after(other))
            case (nil, _?): return .move(movie: operand, to: .first)
            case (_?, _?): throw Failure.usage("give one of --after and --first")
            case (nil, nil): throw Failure.usage("'move' needs --after MOVIE or --first")
            }
        case "undo": return .undo(seq: try number("SEQ", operand, for: .undo, "seq")!)
        case "watch":
            return .watch(
                from: try number("--from", values["--from"], for: .subscribe, "from"),
                once: values["--once"] != nil)
        case "history":
            return .history(
                from: try number("--from", values["--from"], for: .history, "from"),
                limit: try number("--limit", values["--limit"], for: .history, "limit"),
                by: try values["--by"].map { (name) throws(Failure) in try person(name, "--by") })
        case "call":
            guard !operand.contains("\n") else { throw Failure.usage("JSON must be one line (one request)") }
            return .call(line: operand)
        case "tui":
            if values["--record-dir"]?.isEmpty == true {
                throw Failure.usage("--record-dir needs a directory")
            }
            // The op table's values, so that the option and configure cannot drift apart.
            let styles = Ops.spec(.configure).arg("fullSwipeStyleTrailing")
            var style = FullSwipeStyle.fill
            if let given = values["--full-swipe"] {
                guard let known = FullSwipeStyle(rawValue: given) else {
                    guard case .string(_, let names?) = styles.type else {
                        preconditionFailure("\(styles.name)")
                    }
                    throw Failure.usage(
                        "--full-swipe must be \(names.joined(separator: ", ")), not '\(given)'")
                }
                style = known
            }
            return .tui(
                ascii: values["--ascii"] != nil, rtl: values["--rtl"] != nil,
                recordDirectory: values["--record-dir"], confirmDelete: values["--confirm-delete"] != nil,
                peek: values["--no-peek"] == nil, fullSwipe: style)
        case "swipe":
            let swipe = try swipe(operand, values)
            if let file = values["--record"], case .swipe(let movie, let gesture, let verbose) = swipe {
                return .recordedSwipe(movie: movie, gesture: gesture, verbose: verbose, file: file)
            } else {
                return swipe
            }
        case "replay": return .replay(file: operand, expect: values["--expect"])
        case "help": return .help
        case "status": return .status
        default: preconditionFailure("'\(name)' is in Arguments.commands but has no case here")
        }
    }

    /// `swipe MOVIE`: exactly one of --dx, --open and --perform; --vx and --steps go with --dx,
    /// --tap with --open.
    private static func swipe(_ movie: String, _ values: [String: String]) throws(Failure) -> Command {
        let verbose = values["--verbose"] != nil
        if let action = values["--perform"] {
            for option in ["--dx", "--open"] where values[option] != nil {
                throw Failure.usage("give one of --dx, --open and --perform")
            }
            for option in ["--vx", "--steps", "--tap"] where values[option] != nil {
                throw Failure.usage("\(option) does not go with --perform")
            }
            return .swipe(movie: movie, gesture: .perform(action: action), verbose: verbose)
        }
        switch (values["--dx"], values["--open"]) {
        case (let dx?, nil):
            if values["--tap"] != nil { throw Failure.usage("--tap goes with --open EDGE, not --dx") }
            let steps = try values["--steps"].map { (text) throws(Failure) in
                guard let steps = UInt64(text) else {
                    throw Failure.usage("--steps must be a whole number ≥ 0, not '\(text)'")
                }
                return steps
            }
            if let steps, steps < 1 || steps > 1000 {
                throw Failure.usage("--steps must be 1 to 1000, not \(steps)")
            }
            let gesture = Gesture.drag(
                dx: try points("--dx", dx, Ops.spec(.drag).arg("dx")),
                vx: try values["--vx"].map { (v) throws(Failure) in
                    try points("--vx", v, Ops.spec(.release).arg("vx"))
                },
                steps: steps.map { Int($0) })
            return .swipe(movie: movie, gesture: gesture, verbose: verbose)
        case (nil, let edge?):
            for option in ["--vx", "--steps"] where values[option] != nil {
                throw Failure.usage("\(option) goes with --dx, not --open")
            }
            let side: Edge
            do throws(ArgumentError) {
                side = try ArgumentValues.oneOf("--open", edge, Edge.allCases.map { ($0.rawValue, $0) })
            } catch {
                throw Failure.usage(error.description)
            }
            return .swipe(movie: movie, gesture: .open(edge: side, tap: values["--tap"]), verbose: verbose)
        case (_?, _?):
            throw Failure.usage("give one of --dx, --open and --perform")
        case (nil, nil):
            throw Failure.usage("'swipe' needs --dx POINTS, --open EDGE or --perform ACTION")
        }
    }

    /// A finite number of points (or points per second), such as -300 or 12.5, within the range
    /// the op table declares for `arg`.
    private static func points(_ option: String, _ text: String, _ arg: ArgSpec) throws(Failure) -> Double {
        guard let value = Double(text), value.isFinite, !text.hasPrefix("+") else {
            throw Failure.usage("\(option) must be a number of points, such as -300, not '\(text)'")
        }
        if !arg.admits(value), let bounds = arg.numberBounds {
            throw Failure.usage("\(option) must be \(bounds), not '\(text)'")
        }
        return value
    }

    /// A string for the argument `arg` of `op`, within the length the op table declares.
    static func text(_ option: String, _ text: String?, for op: OpSpec.Kind, _ arg: String)
        throws(Failure) -> String?
    {
        guard let text else { return nil }
        guard case .string(let bytes, _) = Ops.spec(op).arg(arg).type else {
            preconditionFailure("\(op.rawValue)'s \(arg) is not a string")
        }
        if let bytes, !bytes.contains(text.utf8.count) {
            throw Failure.usage(
                "\(option) must be \(bytes.lowerBound) to \(bytes.upperBound) bytes long, not \(text.utf8.count)"
            )
        }
        return text
    }

    /// A whole number for the argument `arg` of `op`, within the bounds the op table declares.
    private static func number(_ option: String, _ text: String?, for op: OpSpec.Kind, _ arg: String)
        throws(Failure) -> UInt64?
    {
        guard let text else { return nil }
        let spec = Ops.spec(op).arg(arg)
        // Only whole numbers ≥ 0 reach an op (every one of them is a seq or a count).
        guard let value = UInt64(text), let n = Int64(exactly: value), spec.admits(n) else {
            throw Failure.usage("\(option) must be a whole number\(spec.integerBounds), not '\(text)'")
        }
        return value
    }
}
