import XCTest

@testable import Movies

/// The fold checks each payload without making the movie (`MovieEvent.checkRecorded`); it must
/// accept and refuse exactly what `MovieEvent.recorded` does, with the same message.
final class CheckRecordedTests: XCTestCase {
    func testTheCheckAgreesWithTheDecoderOnValidDamagedAndRandomPayloads() {
        let movies = [
            Movie(id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 3),
            Movie(id: "amelie", title: "Amélie — 東京物語 🎬", image: "", watchedWithFriends: true, version: 4),
        ]
        var payloads: [[UInt8]] = [[], [0], [0, 0, 0, 0], [0, 0, 0, 1, 0xFF, 0, 0, 0, 0, 0, 0]]
        for m in movies {
            for event in [MovieEvent.watchedToggled(id: m.id), .removed(id: m.id)] {
                for undoes in [nil, UInt64(7)] {
                    let p = event.payload(after: m, undoes: undoes)
                    payloads.append(p)
                    // Every truncation, every byte flipped to a few values, a byte too many.
                    for n in 0..<p.count { payloads.append(Array(p[..<n])) }
                    for i in 0..<p.count {
                        for v: UInt8 in [0, 1, 2, 0x7F, 0x80, 0xC3, 0xFF] where p[i] != v {
                            var q = p
                            q[i] = v
                            payloads.append(q)
                        }
                    }
                    payloads.append(p + [0])
                }
            }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            payloads.append(
                (0..<Int.random(in: 0...24, using: &rng)).map { _ in UInt8.random(in: 0...3, using: &rng) })
        }
        for kind in [MovieEvent.Kind.watchedToggled, MovieEvent.Kind.removed, MovieEvent.Kind.added] {
            for p in payloads {
                let decoded = Result { () throws(MovieDecodingError) in
                    _ = try MovieEvent.recorded(stream: "matrix", kind: kind, payload: p, seq: 1)
                }
                let checked = Result { () throws(MovieDecodingError) in
                    try MovieEvent.checkRecorded(kind: kind, payload: p)
                }
                switch (decoded, checked) {
                case (.success, .success): break
                case (.failure(let a), .failure(let b)): XCTAssertEqual(a.message, b.message, "\(kind) \(p)")
                default: XCTFail("\(kind) \(p): recorded \(decoded), checkRecorded \(checked)")
                }
            }
        }
    }
}
