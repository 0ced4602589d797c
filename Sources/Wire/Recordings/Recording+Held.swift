// What a recording holds in memory, counted against `Recording.maxBytes` as its JSON is
// (protocol.md, "The caps"): a `configure` of a layout of plain 200-byte strings takes about
// 24 KB as JSON and 31 KB in memory, so JSON alone let a recording hold 1.4 MB. Counted as
// glibc's malloc gives it: a block is the size asked for and 8 bytes of header, rounded up to
// 16, at least 32. The estimates are of Swift's layouts (5.9 and later): a String of at most 15
// UTF-8 bytes is stored inline (nothing on the heap), a longer one in a block of a 32-byte
// header, its bytes and a NUL; an array is a block of a 32-byte header and its capacity's
// elements, the empty one a shared constant.
import SwipeEngine

extension Recording {
    /// An entry's place in `entries`.
    static let slot = MemoryLayout<RecordedEntry>.stride

    /// How many places `entries` grows by when full: half again (16 at first), as an array
    /// grown by appends would double, but here counted before it grows.
    static func growth(_ capacity: Int) -> Int { max(16, capacity / 2) }

    /// A movie's flags in `known`, the first time they are recorded: the dictionary's key and
    /// value, three times (it is at most three quarters full, and doubles when it grows). The
    /// id's string is the entry's, counted with it.
    static let knownEntry = 3 * (MemoryLayout<RowID>.stride + MemoryLayout<MovieFlags>.stride)

    /// The block malloc gives for `bytes`.
    static func block(_ bytes: Int) -> Int { max(32, (bytes + 8 + 15) & ~15) }

    /// What `s` holds on the heap.
    static func held(_ s: String) -> Int {
        let n = s.utf8.count
        return n <= 15 ? 0 : block(32 + n + 1)
    }

    static func held(_ s: String?) -> Int { s.map(held) ?? 0 }

    /// What an edge's actions hold: the array and every string of each action.
    static func held(_ actions: [ActionSpec]) -> Int {
        var total = actions.capacity == 0 ? 0 : block(32 + actions.capacity * MemoryLayout<ActionSpec>.stride)
        for a in actions {
            total +=
                held(a.action) + held(a.label) + held(a.icon) + held(a.tint) + held(a.activeLabel)
                + held(a.activeIcon) + held(a.confirmLabel)
        }
        return total
    }

    /// What an entry of `input` holds besides its place in `entries`.
    static func held(_ input: RecordedInput) -> Int {
        switch input {
        case .viewport, .options, .crossings: 0
        case .configure(let layout): held(layout.leading) + held(layout.trailing)
        case .drag(let row, _, _), .release(let row, _, _), .open(let row, _), .peek(let row, _),
            .closeTimer(let row),
            .confirmTimer(let row), .movieChanged(let row), .movieRemoved(let row):
            held(row)
        case .tap(let row, let action), .perform(let row, let action): held(row) + held(action)
        case .close(let row): held(row)
        case .flags(let flags): held(flags.movie)
        }
    }
}
