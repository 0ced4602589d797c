// One way to read a command line, which the daemon's options (Config), the data tools
// (DataTools) and swipectl (Arguments) share: `--flag VALUE` and `--flag=VALUE`, flags that take
// no value, positionals, `--` to end the options, and the same words for the same mistakes
// (an unknown option, a missing value, a value given to a flag, an option given twice, an
// argument not expected). What an option means, and what its value may be, stays with each
// parser: this module knows names and arities, not a daemon or a client.

/// An option a command line may give: its name (`--socket`), other spellings of it (`-h` for
/// `--help`), and whether it takes a value.
public struct OptionSpec: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// Takes no value: `--force`; `--force=yes` is an error.
        case flag
        /// Takes one, as the next argument (whatever it looks like: `--dx -300`) or after `=`.
        /// `needs` ends the message when it is missing: "--socket needs a path".
        case value(needs: String)
    }

    /// The name the parser is told (`Argument`), also when an alias was given.
    public let name: String
    public let aliases: [String]
    public let kind: Kind
    /// A value given empty (`--state ''`, `--state=`) is missing: the same error.
    public let emptyIsMissing: Bool
    /// A second value is an error ("--limit given twice"), not the last one winning.
    public let once: Bool
    /// Scanning ends at it (`--help`, `--version`): what follows is not read, nor checked.
    public let stops: Bool

    /// A flag: `--json`, `--help` (`stops`: nothing after it is read).
    public static func flag(_ name: String, aliases: [String] = [], stops: Bool = false) -> OptionSpec {
        OptionSpec(
            name: name, aliases: aliases, kind: .flag, emptyIsMissing: false, once: false, stops: stops)
    }

    /// An option with a value: `--socket PATH`, `--socket=PATH`.
    public static func value(
        _ name: String, aliases: [String] = [], needs: String = "a value", emptyIsMissing: Bool = false,
        once: Bool = false
    ) -> OptionSpec {
        OptionSpec(
            name: name, aliases: aliases, kind: .value(needs: needs), emptyIsMissing: emptyIsMissing,
            once: once, stops: false)
    }
}

/// One argument as scanned.
public enum Argument: Equatable, Sendable {
    /// A flag, by its spec's name.
    case flag(String)
    /// An option with its value, by its spec's name.
    case option(String, String)
    /// Anything else: a word that does not start with `-`, `-` itself (standard input), or any
    /// argument after `--`.
    case positional(String)
}

/// A mistake on the command line; `description` is the message, for a usage error.
public enum ArgumentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An option no spec names, as typed (with its `=VALUE`, if any).
    case unknownOption(String)
    /// The option's name as typed, and what it needs ("a value", "a path").
    case missingValue(String, needs: String)
    /// A flag given `=VALUE`.
    case unexpectedValue(String)
    /// An option that takes one value, given twice.
    case givenTwice(String)
    /// A positional where none is expected.
    case unexpectedArgument(String)
    /// A value that is not what its option takes; the message is whole ("--max-line must be…").
    case invalid(String)

    public var description: String {
        switch self {
        case .unknownOption(let a): "unknown option '\(a)'"
        case .missingValue(let o, let needs): "\(o) needs \(needs)"
        case .unexpectedValue(let o): "\(o) takes no value"
        case .givenTwice(let o): "\(o) given twice"
        case .unexpectedArgument(let a): "unexpected argument '\(a)'"
        case .invalid(let message): message
        }
    }
}

/// Reads a command line one argument at a time, in order, so that a parser can act on each as
/// it comes (a `--help` answered before a later mistake is seen, a value checked where it
/// stands). `ScannedArguments` reads it whole.
public struct ArgumentScanner {
    private let arguments: [String]
    private let specs: [String: OptionSpec]
    private var index = 0
    private var optionsEnded = false

    /// `options`: every option the command line may give; two specs may not share a name.
    public init(_ arguments: [String], options: [OptionSpec]) {
        self.arguments = arguments
        var specs: [String: OptionSpec] = [:]
        for spec in options {
            for name in [spec.name] + spec.aliases {
                precondition(specs.updateValue(spec, forKey: name) == nil, "\(name) is specified twice")
            }
        }
        self.specs = specs
    }

    /// The next argument, nil at the end (or after an option that `stops`).
    public mutating func next() throws(ArgumentError) -> Argument? {
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if optionsEnded || !argument.hasPrefix("-") || argument == "-" { return .positional(argument) }
        if argument == "--" {
            optionsEnded = true
            return try next()
        }
        // Only a long option takes `=VALUE`: `-h=x` is no option's name.
        var name = argument
        var inline: String?
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            name = String(argument[..<equals])
            inline = String(argument[argument.index(after: equals)...])
        }
        guard let spec = specs[name] else { throw .unknownOption(argument) }
        switch spec.kind {
        case .flag:
            if inline != nil { throw .unexpectedValue(name) }
            if spec.stops { index = arguments.count }
            return .flag(spec.name)
        case .value(let needs):
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.count else { throw .missingValue(name, needs: needs) }
                value = arguments[index]
                index += 1
            }
            if spec.emptyIsMissing && value.isEmpty { throw .missingValue(name, needs: needs) }
            return .option(spec.name, value)
        }
    }
}

/// A whole command line, scanned: every option's values, by name, and the positionals, in
/// order. A mistake anywhere in it (up to an option that `stops`) is thrown, the first one.
public struct ScannedArguments: Equatable, Sendable {
    /// The positionals, in order.
    public private(set) var positionals: [String] = []
    /// The options given, by their specs' names, each with its values in order (a flag's: one
    /// empty string each time it is given).
    public private(set) var given: [String: [String]] = [:]
    /// The option that ended the scan (`--help`), when one did.
    public private(set) var stoppedBy: String?

    public init(_ arguments: [String], options: [OptionSpec]) throws(ArgumentError) {
        var scanner = ArgumentScanner(arguments, options: options)
        let once = Set(options.filter(\.once).map(\.name))
        let stops = Set(options.filter(\.stops).map(\.name))
        while let argument = try scanner.next() {
            switch argument {
            case .positional(let p):
                positionals.append(p)
            case .flag(let name):
                given[name, default: []].append("")
                if stops.contains(name) { stoppedBy = name }
            case .option(let name, let value):
                if once.contains(name) && given[name] != nil { throw .givenTwice(name) }
                given[name, default: []].append(value)
            }
        }
    }

    /// Whether the option was given (a flag, or an option with any value).
    public func has(_ name: String) -> Bool { given[name] != nil }

    /// The option's value: the last one given, when given more than once.
    public func value(_ name: String) -> String? { given[name]?.last }

    /// Every value of a repeatable option, in order.
    public func values(_ name: String) -> [String] { given[name] ?? [] }
}
