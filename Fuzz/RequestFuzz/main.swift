// libFuzzer target: the daemon's request path without the sockets. Bytes from the fuzzer are
// framed by `LineFramer` (whole and in fuzzer-chosen pieces, which must give the same frames),
// each line is decoded by `RequestDecoder.decode`, and the reply is encoded with `Encode.error`
// (or `Encode.ok`). Invariants checked (a violation is a crash libFuzzer reports):
// - frames never hold a `\n`, never exceed maxLine, are never blank;
// - framing does not depend on how the input is split into reads;
// - every reply is exactly one line: ends with `\n`, holds no other `\n`, and is a JSON object
//   that the strict parser accepts, with the request's `id` bytes echoed verbatim;
// - wherever the decoder's fast path answers, it answers exactly like the full decoder;
// - so does the repeat lane (RequestRepeat.swift), fed the input's lines in order as the daemon
//   feeds a connection's.
// Build and run: `make fuzz` (see Fuzz/RequestFuzz/build.sh).
import JSONCodec
import Wire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    guard !input.isEmpty else { return 0 }
    // The first byte picks the line limit and the piece size, so short limits are explored too.
    let control = input[0]
    let body = UnsafeRawBufferPointer(rebasing: input[1...])
    let maxLine = control & 0x80 != 0 ? Int(control & 0x3F) + 1 : LineFramer.defaultMaxLine
    let piece = Int(control & 0x0F) + 1

    let whole = frames(body, maxLine: maxLine, piece: nil)
    let split = frames(body, maxLine: maxLine, piece: piece)
    precondition(whole == split, "framing depends on how the input is split")

    var last = DragRepeat()
    for frame in whole {
        switch frame {
        case .line(let line):
            precondition(!line.contains(0x0A), "a frame holds a newline")
            precondition(line.count <= maxLine, "a frame is longer than maxLine")
            precondition(!line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }, "a blank frame")
            line.withUnsafeBytes { checkRequest($0) }
            line.withUnsafeBytes { checkRepeat($0, &last) }
        case .tooLarge(let length):
            precondition(length > maxLine, "too-large for a line within the limit")
            var out = JSONWriter()
            Encode.error(&out, id: nil, WireError(.tooLarge, "line of \(length) bytes"))
            checkReply(out.bytes, id: nil)
        }
    }
    // The decoder on the raw input as one line too (newlines and all).
    checkRequest(body)
    return 0
}

func frames(_ bytes: UnsafeRawBufferPointer, maxLine: Int, piece: Int?) -> [LineFramer.Frame] {
    var framer = LineFramer(maxLine: maxLine)
    var result: [LineFramer.Frame] = []
    func drain() {
        while let frame = framer.next() {
            // Copy: a line shares the framer's storage.
            if case .line(let line) = frame {
                result.append(.line(ArraySlice(Array(line))))
            } else {
                result.append(frame)
            }
        }
    }
    var offset = 0
    let step = piece ?? max(bytes.count, 1)
    while offset < bytes.count {
        let end = min(bytes.count, offset + step)
        framer.append(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
        drain()
        offset = end
    }
    framer.finish()
    drain()
    return result
}

func checkRepeat(_ line: UnsafeRawBufferPointer, _ last: inout DragRepeat) {
    var answer: (request: Request, id: [UInt8]?, op: String)?
    _ = RequestDecoder.withFastRequest(line, repeating: &last) { answer = ($0, $1, $2.rawValue) }
    guard let answer else { return }
    let full = RequestDecoder.decodeFull(line)
    precondition(
        answer.id == full.id && answer.op == full.op && full.result == .success(answer.request),
        "the repeat lane disagrees with the full decoder")
}

func checkRequest(_ line: UnsafeRawBufferPointer) {
    let decoded = RequestDecoder.decode(line)
    if let fast = RequestDecoder.decodeFast(line) {
        let full = RequestDecoder.decodeFull(line)
        precondition(
            fast.id == full.id && fast.op == full.op && fast.result == full.result,
            "the decoder's fast path disagrees with the full decoder")
    }
    var out = JSONWriter()
    switch decoded.result {
    case .failure(let error): Encode.error(&out, id: decoded.id, error)
    case .success: Encode.ok(&out, id: decoded.id)
    }
    checkReply(out.bytes, id: decoded.id)
}

func checkReply(_ bytes: [UInt8], id: [UInt8]?) {
    precondition(bytes.last == 0x0A, "a reply does not end with a newline")
    let body = bytes.dropLast()
    precondition(!body.contains(0x0A), "a reply holds a raw newline")
    let members: [JSONRawMember]
    do {
        members = try body.withUnsafeBytes { try JSONParser.parseObjectMembers($0) }
    } catch {
        preconditionFailure("a reply is not strict JSON: \(error): \(String(decoding: body, as: UTF8.self))")
    }
    if let id {
        guard let member = members.first(where: { $0.key == "id" }) else {
            preconditionFailure("id not echoed")
        }
        precondition(Array(body[member.range]) == id, "id not echoed verbatim")
    }
}
