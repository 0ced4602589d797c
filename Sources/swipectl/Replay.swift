// replay: a recording (the `recording` op's, or `swipe --record`'s file) replayed on the pure
// engine, with no daemon, on virtual time: one JSON line per step (Wire's Replay.swift). With
// --expect, the rows it gives are compared, in order, with the rows the live connection got,
// each with the thresholds its reply said it crossed and whether it scrolled (issue 47).
import JSONCodec
import Wire

#if canImport(Glibc)
    import Glibc
#endif

enum ReplayCommand {
    static func run(file: String, expect: String?) throws(Failure) {
        let bytes = try Files.read(file)
        if holdsRows(bytes) {
            throw Failure(
                .refused,
                "\(file) is not a recording: it holds the rows a connection got, one line each (a .rows file); replay the recording they came with, and give this file to --expect"
            )
        }
        let json = try parse(bytes, file)
        let recording: Recording
        do {
            recording = try Recording(json: json)
        } catch {
            throw Failure(.refused, "\(file) is not a recording: \(error.message)")
        }
        let steps = Replay.run(recording)
        var rows: [JSON] = []
        for step in steps {
            var out = JSONWriter()
            Encode.replayStep(&out, step)
            Output.out(String(decoding: out.bytes, as: UTF8.self))
            if step.row != nil, case .object(let line) = try parse(Array(out.bytes.dropLast()), "the replay")
            {
                rows.append(compared(line))
            }
        }
        if recording.cut {
            Output.error(
                "the recording was cut at its cap of \(Recording.cap) inputs or \(Recording.maxBytes) bytes of "
                    + "entries; what came after is not in it")
        }
        guard let expect else { return }
        try compare(rows, with: try expectedRows(expect), expect)
    }

    /// Whether `bytes` are lines of JSON objects with rows and no recording: what `swipe
    /// --record FILE` writes to FILE.rows, and `--expect` reads.
    static func holdsRows(_ bytes: [UInt8]) -> Bool {
        var rows = 0
        // A probe of the file's kind: a line that does not parse says it is no rows file, and the
        // caller then reads it as a recording, whose reader reports the line and its error.
        for line in bytes.split(separator: UInt8(ascii: "\n"))
        where !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) {
            guard case .object(let object)? = try? JSONParser.parse(Array(line)), object["recording"] == nil
            else {
                return false
            }
            if object["row"] != nil { rows += 1 }
        }
        return rows > 0
    }

    /// The rows of an expect file: every line that is a JSON object with a `row` (a reply, a
    /// `row` event, a line of `swipectl replay`), in order; other lines are skipped, and so are
    /// `peer-row` events (another connection's rows).
    static func expectedRows(_ path: String) throws(Failure) -> [JSON] {
        var rows: [JSON] = []
        for line in try Files.read(path).split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            if case .object(let object) = try parse(Array(line), path), object["row"] != nil,
                object["event"] != .string("peer-row")
            {
                rows.append(compared(object))
            }
        }
        return rows
    }

    /// What is compared of a line with a row: the row, and the reply's `crossed` and `scroll`
    /// when it has them (a `row` event, and every line of a format 1 recording, has neither).
    static func compared(_ line: JSONObject) -> JSON {
        var kept = JSONObject()
        for key in ["row", "crossed", "scroll"] {
            if let value = line[key] { kept.append(key, value) }
        }
        return .object(kept)
    }

    static func compare(_ got: [JSON], with expected: [JSON], _ path: String) throws(Failure) {
        for (i, (a, b)) in zip(got, expected).enumerated() where a != b {
            throw Failure(
                .refused,
                "row \(i + 1) differs from \(path):\n  replay:   \(text(a))\n  expected: \(text(b))")
        }
        guard got.count == expected.count else {
            throw Failure(.refused, "the replay gave \(got.count) rows, \(path) has \(expected.count)")
        }
        Output.error("all \(got.count) rows match \(path)")
    }

    /// A compared line as a message shows it: its row alone when that is all it has.
    static func text(_ json: JSON) -> String {
        var out = JSONWriter()
        if case .object(let line) = json, line.members.count == 1, let row = line["row"] {
            out.value(row)
        } else {
            out.value(json)
        }
        return String(decoding: out.bytes, as: UTF8.self)
    }

    static func parse(_ bytes: [UInt8], _ what: String) throws(Failure) -> JSON {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw Failure(.refused, "\(what) is not JSON: \(error.message)")
        }
    }
}

/// Whole files, read and written with the C library.
enum Files {
    static func read(_ path: String) throws(Failure) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw Failure(.refused, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            bytes.append(contentsOf: chunk[0..<n])
            if n < chunk.count { break }
        }
        guard ferror(file) == 0 else { throw Failure(.refused, "cannot read \(path)") }
        return bytes
    }

    static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
        guard let file = fopen(path, "wb") else {
            throw Failure(.refused, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let written = fwrite(bytes, 1, bytes.count, file)
        guard fclose(file) == 0, written == bytes.count else {
            throw Failure(.refused, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
