// libFuzzer entry on the JSON codec. Built by Fuzz/run.sh with swiftc directly (not SwiftPM),
// compiled into the module `JSONCodec` so it can check internals too. Every check is a
// `precondition`, so a broken invariant is a crash libFuzzer reports and saves.
//
// Invariants, for any bytes x:
// 1. parse(x) either throws a JSONError whose offset lies within x, or gives v with
//    parse(write(v)) == v, write(parse(write(v))) == write(v), and no newline in write(v);
//    writing string members with `field(_:_:)` gives the same bytes as `key` + `string`.
// 2. parseObjectMembers(x) agrees with parse(x): same members when v is an object, a
//    `.notAnObject` error when v is something else, the same error when x is bad; each member's
//    raw range parses to the member's value.
// 3. Doubles from the input's first bytes round-trip through the writer.
// 4. The line framer gives the same frames whether x comes at once or split in three; no line
//    holds a newline or is longer than maxLine; the buffer stays bounded.

@_cdecl("LLVMFuzzerTestOneInput")
public func wireFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzParser(input)
    fuzzFramer(input)
    fuzzRFC3339(input)
    fuzzDoubles(input)
    return 0
}

func fuzzParser(_ input: UnsafeRawBufferPointer) {
    let parsed: Result<JSON, JSONError> = Result { () throws(JSONError) in try JSONParser.parse(input) }
    let members: Result<[JSONRawMember], JSONError> = Result { () throws(JSONError) in
        try JSONParser.parseObjectMembers(input)
    }
    switch parsed {
    case .failure(let error):
        precondition(
            error.offset >= 0 && error.offset <= input.count, "offset \(error.offset) outside the input")
        precondition(!error.message.isEmpty)
        guard case .failure(let other) = members else { preconditionFailure("members accepted bad JSON") }
        precondition(other == error, "members error \(other) differs from \(error)")
    case .success(let value):
        var writer = JSONWriter()
        writer.value(value)
        precondition(!writer.bytes.contains(0x0A), "writer wrote a raw newline")
        let again: JSON
        do { again = try JSONParser.parse(writer.bytes) } catch {
            preconditionFailure("writer output does not parse: \(error)")
        }
        precondition(again == value, "round trip changed the value")
        var second = JSONWriter()
        second.value(again)
        precondition(second.bytes == writer.bytes, "second write differs")
        var fields = JSONWriter()
        writeWithFields(&fields, value)
        precondition(fields.bytes == writer.bytes, "field(_:_:) writes other bytes than key + string")

        switch (value, members) {
        case (.object(let object), .success(let raw)):
            precondition(raw.count == object.members.count)
            for (member, rawMember) in zip(object.members, raw) {
                precondition(member.key == rawMember.key && member.value == rawMember.value)
                let text = UnsafeRawBufferPointer(rebasing: input[rawMember.range])
                precondition((try? JSONParser.parse(text)) == member.value, "raw range is not the value")
            }
        case (.object, .failure(let error)):
            preconditionFailure("members rejected an object: \(error)")
        case (_, .failure(let error)):
            precondition(error.code == .notAnObject, "expected notAnObject, got \(error)")
        case (_, .success):
            preconditionFailure("members accepted a non-object")
        }
    }
}

func fuzzFramer(_ input: UnsafeRawBufferPointer) {
    let maxLine = 32
    func frames(splits: [Int]) -> [LineFramer.Frame] {
        var framer = LineFramer(maxLine: maxLine)
        var out: [LineFramer.Frame] = []
        var from = 0
        for cut in splits + [input.count] where cut >= from && cut <= input.count {
            framer.append(UnsafeRawBufferPointer(rebasing: input[from..<cut]))
            while let frame = framer.next() { out.append(frame.copied) }
            precondition(framer.buffered <= maxLine + 1, "framer holds \(framer.buffered) bytes")
            from = cut
        }
        framer.finish()
        while let frame = framer.next() { out.append(frame.copied) }
        precondition(framer.buffered == 0)
        return out
    }
    let whole = frames(splits: [])
    for frame in whole {
        if case .line(let line) = frame {
            precondition(!line.contains(0x0A) && line.count <= maxLine && !line.isEmpty)
        }
    }
    guard input.count > 1 else { return }
    let a = Int(input[0]) % input.count
    let b = a + (input.count - a) / 2
    precondition(frames(splits: [a, b]) == whole, "frames depend on how the input is split")
}

func fuzzRFC3339(_ input: UnsafeRawBufferPointer) {
    guard input.count >= 8 else { return }
    var us: Int64 = 0
    for k in 0..<8 { us = us << 8 | Int64(input[k]) }
    let text = RFC3339.format(microsecondsSinceEpoch: us)
    precondition(text.hasSuffix("Z") && text.utf8.count >= 27)
}

/// Doubles written by JSONWriter parse back to the same double: any bit pattern, and short
/// decimals (m / 10^k), which take the writer's own formatting path.
func fuzzDoubles(_ input: UnsafeRawBufferPointer) {
    guard input.count >= 8 else { return }
    var bits: UInt64 = 0
    for k in 0..<8 { bits = bits << 8 | UInt64(input[k]) }
    let scale = [1.0, 10, 100, 1000, 10000][Int(bits % 5)]
    for d in [Double(bitPattern: bits), Double(Int64(bitPattern: bits) >> 12) / scale] where d.isFinite {
        var writer = JSONWriter()
        writer.double(d)
        let back = try? JSONParser.parse(writer.bytes)
        precondition(back?.numberValue?.double == d, "double \(d) does not round-trip")
    }
}

/// Like `JSONWriter.value`, but string members go through `field(_:_:)`, the fused fast path,
/// and everything else through the begin/key/end calls (JSONWriter.value fuses them itself).
func writeWithFields(_ w: inout JSONWriter, _ value: JSON) {
    switch value {
    case .array(let elements):
        w.array { w in
            for element in elements { writeWithFields(&w, element) }
        }
    case .object(let object):
        w.object { w in
            for member in object.members {
                if case .string(let s) = member.value, s.utf8.count % 2 == 0 {
                    w.field(member.key, s)
                } else if case .string(let s) = member.value {
                    w.key(member.key)
                    w.string(s)
                } else {
                    w.key(member.key)
                    writeWithFields(&w, member.value)
                }
            }
        }
    default:
        w.value(value)
    }
}

extension LineFramer.Frame {
    /// A line that no longer shares the framer's buffer.
    var copied: LineFramer.Frame {
        if case .line(let line) = self { return .line(ArraySlice(Array(line))) }
        return self
    }
}
