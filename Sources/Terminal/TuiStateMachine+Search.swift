// `/`: a search of the titles, typed in the footer. Each key typed selects the first match from
// the row selected when `/` was pressed (wrapping to the top); Enter keeps the search, and n and
// N then go to the next and previous match from the selected row; Escape ends it. The footer
// shows how many titles match and which of them is selected.
//
// The one piece of work that grows with the list is the search itself: a key that changes the
// text looks through the titles once (a key that adds to it, only through the titles that
// matched before); so does a new list, or collapsed rows going, while a search is on. Everything
// else here — n, N, the footer's "3 of 12", a movie added or removed — takes time of the order
// of the logarithm of the matches (or a move of them).
import Movies

extension TuiStateMachine {
    /// `/`: a new search from the selected row.
    mutating func startSearch() {
        state.search = TuiState.Search(origin: state.model.selected ?? 0)
    }

    /// A key while the search is typed into.
    mutating func searchKey(_ key: Key, _ now: Double) {
        guard var search = state.search else { return }
        switch key {
        case .escape, .control("c"):
            state.search = nil
            return
        case .enter:
            search.typing = false
            state.search = search.text.isEmpty ? nil : search
            return
        case .backspace:
            guard !search.text.isEmpty else { return }
            search.text.removeLast()
            search.matches = Self.matches(search.text, in: state.entries)
        case .control("u"):
            search.text = ""
            search.matches = []
        case .character(let scalar):
            guard search.text.unicodeScalars.count < 200 else { return }
            let narrowing = !search.text.isEmpty
            search.text.unicodeScalars.append(scalar)
            // What contains the longer text contains the shorter: only the last matches can.
            search.matches = Self.matches(
                search.text, in: state.entries, among: narrowing ? search.matches : nil)
        case .up, .down, .left, .right, .home, .end, .pageUp, .pageDown, .insert, .delete, .tab, .control,
            .function:
            return
        }
        state.search = search
        // The first match from where the search began, else (nothing matches) back there.
        let first = Self.firstMatch(atOrAfter: search.origin, search.matches) ?? search.matches.first
        select(to: first ?? search.origin)
    }

    /// n (`forward`) or N, once the search is typed: the next or previous match from the
    /// selected row, wrapping around the list.
    mutating func nextMatch(forward: Bool, _ now: Double) {
        guard let search = state.search else { return say("No search: / searches the titles", now) }
        guard !search.matches.isEmpty else { return say("No title contains “\(search.text)”", now) }
        let selected = state.model.selected ?? (forward ? -1 : state.entries.count)
        let target =
            forward
            ? Self.firstMatch(atOrAfter: selected + 1, search.matches) ?? search.matches.first!
            : Self.lastMatch(before: selected, search.matches) ?? search.matches.last!
        select(to: target)
    }

    /// A movie was added at the end of the list: a match when its title contains the text.
    mutating func searchRowAdded() {
        guard var search = state.search, let last = state.entries.indices.last else { return }
        search.matches += Self.matches(search.text, in: state.entries, among: [last])
        state.search = search
    }

    /// The row at `index` is being removed (it collapses): no longer a match.
    mutating func searchRowRemoved(_ index: Int) {
        guard var search = state.search, let i = Self.firstMatchIndex(atOrAfter: index, search.matches),
            search.matches[i] == index
        else { return }
        search.matches.remove(at: i)
        state.search = search
    }

    /// The rows moved (a new list, collapsed rows gone): the matches are found again, a look
    /// through the titles while a search is on.
    mutating func searchRowsChanged() {
        guard var search = state.search else { return }
        search.matches = Self.matches(search.text, in: state.entries)
        search.origin = min(search.origin, max(0, state.entries.count - 1))
        state.search = search
    }

    /// The search as the footer shows it.
    var searchLine: SearchLine? {
        state.search.map { search in
            var position: Int?
            if let selected = state.model.selected,
                let i = Self.firstMatchIndex(atOrAfter: selected, search.matches),
                search.matches[i] == selected
            {
                position = i + 1
            }
            return SearchLine(
                text: search.text, typing: search.typing, count: search.matches.count, position: position)
        }
    }

    // MARK: - Matching

    /// The indices of the entries in the list whose title contains `text` (letters A to Z in
    /// either case; other characters as they are), among `candidates` when given. Rows being
    /// removed do not match.
    static func matches(_ text: String, in entries: [TuiState.Entry], among candidates: [Int]? = nil) -> [Int]
    {
        let needle = Array(text.utf8).map(TitleMatch.fold)
        guard !needle.isEmpty else { return [] }
        func matches(_ i: Int) -> Bool {
            entries[i].removedAt == nil && TitleMatch.contains(entries[i].movie.title, needle)
        }
        if let candidates { return candidates.filter { $0 < entries.count && matches($0) } }
        return entries.indices.filter(matches)
    }

    /// The position in `matches` (sorted) of the first at or after `index`.
    static func firstMatchIndex(atOrAfter index: Int, _ matches: [Int]) -> Int? {
        var low = 0
        var high = matches.count
        while low < high {
            let mid = (low + high) / 2
            if matches[mid] < index { low = mid + 1 } else { high = mid }
        }
        return low < matches.count ? low : nil
    }

    static func firstMatch(atOrAfter index: Int, _ matches: [Int]) -> Int? {
        firstMatchIndex(atOrAfter: index, matches).map { matches[$0] }
    }

    static func lastMatch(before index: Int, _ matches: [Int]) -> Int? {
        let after = firstMatchIndex(atOrAfter: index, matches) ?? matches.count
        return after > 0 ? matches[after - 1] : nil
    }
}

/// Whether a title contains what was typed, byte by byte on UTF-8 with ASCII letters folded:
/// no String is made per title, so that a search of 100,000 titles takes milliseconds.
enum TitleMatch {
    @inline(__always)
    static func fold(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    static func contains(_ title: String, _ needle: [UInt8]) -> Bool {
        var title = title
        return title.withUTF8 { hay in
            guard hay.count >= needle.count else { return false }
            let first = needle[0]
            var i = 0
            let last = hay.count - needle.count
            while i <= last {
                if fold(hay[i]) == first {
                    var k = 1
                    while k < needle.count && fold(hay[i + k]) == needle[k] { k += 1 }
                    if k == needle.count { return true }
                }
                i += 1
            }
            return false
        }
    }
}
