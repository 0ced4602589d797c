// Reading an export (docs/export-format.md, "What a reader checks"): the header, every event
// folded, in version 2 the people lines after the events, and the trailer's counts, digest and
// checksum. `import` and `verify --backup` stop at the first line that is wrong.
import EventLog
import Movies
import People

extension Moves {
    /// Reads an export and checks it: the header, every event folded, the people lines, the
    /// trailer's counts, digest and checksum. `each` gets every event with the row a store keeps
    /// for it.
    @discardableResult
    static func readExport(
        _ input: LineInput, _ each: (StoredEvent) throws(Fault) -> Void = { _ in }
    ) throws(Fault) -> Verified {
        try readExportFolding(input, each).verified
    }

    /// `readExport`, with the state the events fold to and the people tables (empty for an
    /// export of version 1, which has none).
    static func readExportFolding(
        _ input: LineInput, _ each: (StoredEvent) throws(Fault) -> Void
    ) throws(Fault) -> (verified: Verified, state: MovieState, people: PeopleTables) {
        func at(_ f: Fault) -> Fault { Fault("\(input.name): line \(input.number): \(f.message)") }
        var hash = SHA256()
        // A copy: a slice kept of the input's buffer would make it copy itself at its next read.
        guard let first = try input.next().map(Array.init) else {
            throw Fault("\(input.name): empty: not a swiped export")
        }
        let header: ExportFormat.Header
        do throws(Fault) {
            guard case .header(let h) = try ExportFormat.parse(first[...], first: true) else {
                preconditionFailure("the first line parsed as something other than a header")
            }
            header = h
        } catch {
            throw at(error)
        }
        let newline: [UInt8] = [0x0A]
        first.withUnsafeBufferPointer { hash.update($0) }
        hash.update(newline)
        var checker = LogChecker()
        var people = PeopleLines()
        while let line = try input.next() {
            do throws(Fault) {
                let parsed: ExportFormat.Line
                do throws(Fault) {
                    // A `by` in a version 1 file, or a place before version 3, goes to the general
                    // parser, which refuses it.
                    if let fast = ExportFormat.fastEvent(line),
                        header.version >= 2 || fast.event.by == nil,
                        header.version >= 3 || (fast.event.to == nil && fast.event.from == nil)
                    {
                        parsed = .event(fast)
                    } else {
                        parsed = try ExportFormat.parse(line, first: false, version: header.version)
                    }
                } catch {
                    guard !input.unterminated else {
                        throw Fault("the last line has no newline and \(error.message): the file was cut")
                    }
                    throw error
                }
                switch parsed {
                case .header:
                    throw Fault("a second header")
                case .event(let x):
                    guard !people.started else {
                        throw Fault("an event after the people lines (they come last)")
                    }
                    let row = try checker.fold(exported: x)
                    try each(row)
                case .token(let t):
                    try people.add(t)
                case .grant(let name, let role):
                    try people.add(grant: name, role)
                case .trailer(let t):
                    guard !input.unterminated else {
                        throw Fault("the trailer has no newline: the file was cut")
                    }
                    var h = hash
                    try check(t, sha256: SHA256.hex(digest: h.finish()), header, checker, people)
                    if try input.next() != nil { throw Fault("a line after the trailer") }
                    let source = "\(input.name) (an export of \(header.source))"
                    let verified = Verified(
                        source: source, seq: t.seq, events: t.events, digest: t.digest,
                        tokens: people.tokens.count, grants: people.grants.count)
                    return (verified, checker.state, people.tables)
                }
                line.withUnsafeBufferPointer { hash.update($0) }
                hash.update(newline)
            } catch {
                throw at(error)
            }
        }
        throw Fault(
            "\(input.name): ends at line \(input.number) without its trailer: the file was cut (the header says seq \(header.seq), it has \(checker.state.lastSeq))"
        )
    }

    /// The trailer's checksum (`sha256`: the lines' before it), counts and digest are the file's.
    private static func check(
        _ t: ExportFormat.Trailer, sha256: String, _ header: ExportFormat.Header, _ checker: LogChecker,
        _ people: PeopleLines
    ) throws(Fault) {
        guard sha256 == t.sha256 else {
            throw Fault(
                "the checksum of the lines before the trailer is not the trailer's: the file was altered")
        }
        guard t.seq == checker.state.lastSeq, t.events == checker.events, t.seq == header.seq else {
            throw Fault(
                "the trailer says seq \(t.seq) and \(t.events) events, the header seq \(header.seq), the file has \(checker.state.lastSeq) and \(checker.events)"
            )
        }
        if let tokens = t.tokens, let grants = t.grants,
            tokens != UInt64(people.tokens.count) || grants != UInt64(people.grants.count)
        {
            throw Fault(
                "the trailer says \(tokens) tokens and \(grants) role grants, the file has \(people.tokens.count) and \(people.grants.count)"
            )
        }
        guard t.digest == checker.digest else {
            throw Fault("the trailer's digest \(t.digest) is not the fold's \(checker.digest)")
        }
    }
}
