// The command line's people (issue 45): the token to sign in with, and the commands on tokens
// and roles. Names, roles and the expiry are checked as the daemon would check them (People's
// PersonName, the op table's values and bounds), so that what it would refuse is a usage error
// here, before anything is sent.
import CommandLineParsing
import People
import Wire

extension Arguments {
    /// `--token TOKEN` or `--token-file FILE`, checked for what can be told without reading it.
    static func tokenSource(_ option: String, _ value: String) throws(Failure) -> TokenSource {
        if option == "--token-file" {
            guard !value.isEmpty else {
                throw Failure.usage("--token-file needs a file (- for standard input)")
            }
            return .file(value)
        }
        guard !value.isEmpty else { throw Failure.usage("--token needs a token") }
        return .given(try text("--token", value, for: .auth, "token")!)
    }

    /// The people command `name` names, from its operands and options; nil for the other commands.
    static func peopleCommand(_ name: String, _ operands: [String], _ values: [String: String])
        throws(Failure) -> Command?
    {
        switch name {
        case "token create":
            guard let given = values["--role"] else {
                throw Failure.usage(
                    "'token create' needs --role \(roleNames(.tokenCreate).joined(separator: "|"))")
            }
            return .tokenCreate(
                name: try person(operands[0]), role: try role("--role", given, for: .tokenCreate),
                expiresIn: try values["--expires"].map { (text) throws(Failure) in try duration(text) })
        case "token list":
            return .tokenList
        case "token revoke":
            return .tokenRevoke(
                name: try person(operands[0]),
                id: try text("--id", values["--id"], for: .tokenRevoke, "tokenId"))
        case "role":
            let person = try person(operands[0])
            let clear = values["--clear"] != nil
            guard operands.count > 1 else { return .role(name: person, clear ? .clear : .ask) }
            if clear { throw Failure.usage("give ROLE or --clear, not both") }
            return .role(name: person, .give(try role("ROLE", operands[1], for: .role)))
        case "denials":
            return .denials
        case "whoami":
            return .whoami
        default:
            return nil
        }
    }

    /// NAME, a person's name as the daemon takes it; `what` names it in the message (the
    /// operand NAME, or `history`'s --by).
    static func person(_ name: String, _ what: String = "NAME") throws(Failure) -> String {
        if let problem = PersonName.problem(name) { throw Failure.usage("\(what): \(problem)") }
        return name
    }

    /// The role names `op`'s `role` takes, in the op table's order.
    private static func roleNames(_ op: OpSpec.Kind) -> [String] {
        guard case .string(_, let names?) = Ops.spec(op).arg("role").type else {
            preconditionFailure("\(op.rawValue)'s role has no values")
        }
        return names
    }

    /// A role `op` takes.
    private static func role(_ option: String, _ text: String, for op: OpSpec.Kind) throws(Failure)
        -> AccessRole
    {
        let names = roleNames(op)
        do throws(ArgumentError) {
            return try ArgumentValues.oneOf(
                option, text, names.compactMap { name in AccessRole(rawValue: name).map { (name, $0) } })
        } catch {
            throw Failure.usage(error.description)
        }
    }

    /// `--expires DURATION`: a whole number with a unit (`30d`, `12h`, `90m`, `3600s`, `2w`), or
    /// alone in seconds (`ArgumentValues.seconds(fromDuration:)`); in seconds, within the bounds
    /// of `token-create`'s `expiresIn`.
    static func duration(_ text: String) throws(Failure) -> Int64 {
        let spec = Ops.spec(.tokenCreate).arg("expiresIn")
        guard case .integer(let min?, let max?) = spec.type else {
            preconditionFailure("token-create's expiresIn has no bounds")
        }
        let outOfBounds = Failure.usage(
            "--expires must be from \(min) second to \(max / 86_400) days (\(max) s), not '\(text)'")
        let seconds: Int64
        do throws(ArgumentValues.DurationError) {
            seconds = try ArgumentValues.seconds(fromDuration: text)
        } catch .malformed {
            throw Failure.usage(
                "--expires must be a duration such as 30d, 12h, 90m, 3600s or 2w (a number alone is seconds), not '\(text)'"
            )
        } catch {
            throw outOfBounds
        }
        guard spec.admits(seconds) else { throw outOfBounds }
        return seconds
    }
}
