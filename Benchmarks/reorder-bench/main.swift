// reorder-bench (issue 48): what a move and a list page cost the daemon's loop at 100,000 movies,
// in process, without the socket or the disk. A move costs the loop `decideAndApply` on the
// projected state when it is submitted and `apply` on the committed state when its commit comes
// back (CommandQueue, SQLiteStore+Commands): both are timed, together, per move, over 10,000
// random moves (random movie, random place: the distance a move shifts is uniform, the mean a
// third of the list). Then a `list` page after a random movie, and the snapshot's bytes both
// ways. Benchmarks/reorder.sh runs it and the daemon's own figures (BENCHMARKS.md, "Reordering").
//
//   .build/release/reorder-bench [--movies N] [--moves M]
import Movies

#if canImport(Glibc)
    import Glibc
#endif

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func quantile(_ sorted: [UInt64], _ q: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000
}

func describe(_ name: String, _ samples: [UInt64]) {
    let s = samples.sorted()
    let mean = Double(s.reduce(0, +)) / Double(s.count) / 1000
    print(
        "\(name): p50 \(fmt(quantile(s, 0.5))) µs, p99 \(fmt(quantile(s, 0.99))) µs, max \(fmt(Double(s.last!) / 1000)) µs, mean \(fmt(mean)) µs (\(s.count) samples)"
    )
}

func fmt(_ x: Double) -> String {
    let r = (x * 10).rounded() / 10
    return r == r.rounded() ? String(Int(r)) : String(r)
}

var movies = 100_000
var moves = 10_000
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--movies": movies = Int(args.popFirst() ?? "") ?? movies
    case "--moves": moves = Int(args.popFirst() ?? "") ?? moves
    default:
        print("usage: reorder-bench [--movies N] [--moves M]")
        exit(2)
    }
}

// The seed, then movies "Movie 1"… as `loadgen --fill --movies` writes them.
var projected = MovieState()
var seq: UInt64 = 0
for e in MovieState.seedCatalogue {
    seq += 1
    projected.apply(e, seq: seq)
}
for n in 1...movies - 10 {
    seq += 1
    projected.apply(.added(id: "movie_\(n)", title: "Movie \(n)", image: ""), seq: seq)
}
var committed = projected
var rng = SystemRandomNumberGenerator()
var samples: [UInt64] = []
samples.reserveCapacity(moves)
/// A random move's command. The movies are read in place: a copy of the array kept alive
/// across the move would make the move copy all 100,000 movies (copy on write).
func randomMove(_ state: MovieState, _ rng: inout SystemRandomNumberGenerator) -> MovieCommand {
    let n = state.movies.count
    let i = Int.random(in: 0..<n, using: &rng)
    let j = (i + Int.random(in: 1..<n, using: &rng)) % n
    let to: ListPlace = Int.random(in: 0..<100, using: &rng) == 0 ? .first : .after(state.movies[j].id)
    return MovieCommand(.move(movie: state.movies[i].id, to: to))
}
for _ in 0..<moves {
    let command = randomMove(projected, &rng)
    let t0 = now()
    guard let (event, _) = try? projected.decideAndApply(command) else {
        print("reorder-bench: a move was refused")
        exit(1)
    }
    committed.apply(event, seq: projected.lastSeq)
    samples.append(now() - t0)
}
precondition(projected == committed, "the committed state is not the projected one")
print("reorder-bench: \(projected.movies.count) movies, \(moves) random moves (in process, release build)")
describe("a move on the loop (decide and apply at submit, apply at commit)", samples)

// A page of `list`: where `after` is, then 100 movies (the Session words them from the array).
var pages: [UInt64] = []
var sink = 0
for _ in 0..<2_000 {
    let after = projected.movies[Int.random(in: 0..<projected.movies.count, using: &rng)].id
    let t0 = now()
    let start = projected.position(after: after)!
    for m in projected.movies[start..<min(start + 100, projected.movies.count)] {
        sink &+= m.title.utf8.count
    }
    pages.append(now() - t0)
}
describe("a list page of 100 after a random movie (finding it and reading the page)", pages)

// The snapshot both ways: what a start-up reads.
var encode: [UInt64] = []
var decode: [UInt64] = []
var bytes: [UInt8] = []
for _ in 0..<5 {
    var t0 = now()
    bytes = projected.snapshotBytes()
    encode.append(now() - t0)
    t0 = now()
    guard let back = try? MovieState(snapshot: bytes) else {
        print("reorder-bench: the snapshot does not decode")
        exit(1)
    }
    decode.append(now() - t0)
    precondition(back == projected)
}
print(
    "snapshot (\(String(decoding: bytes.prefix(4), as: UTF8.self)), \(bytes.count / 1024) KiB): encode median \(fmt(quantile(encode.sorted(), 0.5) / 1000)) ms, decode median \(fmt(quantile(decode.sorted(), 0.5) / 1000)) ms"
)
if sink == 42 { print("") }
