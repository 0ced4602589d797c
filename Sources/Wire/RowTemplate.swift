// While a finger drags a row, its reply changes only in its numbers (the offset, each button's
// x and width, the spring's target); everything else — the id, the phase, each button's look,
// the spring's constants, the accessibility actions — stays the same from one drag to the next.
// A connection keeps those parts encoded as a template with holes for the numbers, so a drag
// reply is a handful of copies and number writes, with no render (no arrays, no Strings).
//
// A template is made by the same functions that encode a row afresh (`Encode.row`), cut at the
// numbers, and it is found by everything the static bytes depend on, so it can never serve
// stale bytes: the unit tests compare the two byte for byte over random gestures, layouts,
// directions and row data.
import JSONCodec
import SwipeEngine

/// A row's JSON in one form, with holes for its numbers, in one buffer: `text` is the row
/// without them, and `holes` says where each goes, in this order: the offset, each showing
/// button's x and width (left to right), and in the full form the spring's target.
public final class RowTemplate: Sendable {
    let text: [UInt8]
    let holes: [Int]
    let form: RowForm
    /// The most bytes a reply from this template can take (with its numbers, not its `id`).
    let maxReplyBytes: Int

    /// The template of `render`'s row in `form` (its numbers are ignored): `Encode.row`'s
    /// parts, cut where it writes a number.
    public init(_ render: RowRender, form: RowForm) {
        var out = JSONWriter(capacity: 1024)
        var holes: [Int] = []
        Encode.rowHead(&out, render.row)
        holes.append(out.bytes.count)
        Encode.rowMiddle(&out, render)
        for (index, button) in render.buttons.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            Encode.buttonHead(&out, button)
            holes.append(out.bytes.count)
            out.literal(#","width":"#)
            holes.append(out.bytes.count)
            out.bytes.append(UInt8(ascii: "}"))
        }
        switch form {
        case .full:
            out.literal(#"],"spring":{"target":"#)
            holes.append(out.bytes.count)
            Encode.tail(&out, render.spring, render.accessibilityActions)
        case .compact:
            out.literal("]}")
        }
        text = out.bytes
        self.holes = holes
        self.form = form
        // `{"ok":true,"row":` and `}\n` around the row; each number at most maxDoubleBytes.
        maxReplyBytes = text.count + 32 + holes.count * NumberText.maxDoubleBytes
    }
}

/// A connection's templates. Found by what their bytes depend on: the row, its shape, the
/// layout, the direction, the row's data (`dataKey`, the host's summary of the flags), and the
/// form (a connection that switches forms is served the other form's templates, never stale
/// ones).
public final class RowTemplates {
    /// Entries kept; a client drags a few rows at a time, and one that drags every row in turn or
    /// reconfigures without end only makes the oldest go (memory stays bounded).
    static let capacity = 16

    private struct Entry {
        var row: RowID
        var shape: RowShape
        var dataKey: UInt64
        var direction: Direction
        var form: RowForm
        var layout: Layout
        var template: RowTemplate
    }

    private var entries: [Entry] = []

    /// Layout equality, at once when both hold the very same action arrays (the usual case: the
    /// list's layout is the one the template was made with), element by element otherwise.
    static func same(_ a: Layout, _ b: Layout) -> Bool {
        func sameStorage(_ x: [ActionSpec], _ y: [ActionSpec]) -> Bool {
            x.count == y.count
                && x.withUnsafeBufferPointer { xp in
                    y.withUnsafeBufferPointer { xp.baseAddress == $0.baseAddress }
                }
        }
        if sameStorage(a.leading, b.leading) && sameStorage(a.trailing, b.trailing)
            && a.allowsFullSwipeLeading == b.allowsFullSwipeLeading
            && a.allowsFullSwipeTrailing == b.allowsFullSwipeTrailing && a.buttonWidth == b.buttonWidth
        {
            return true
        }
        return a == b
    }
    private var next = 0

    public init() {}

    /// The template of `row` as `list` shows it now in `form`, rendered with `flags()` when
    /// there is none yet. `dataKey` must change whenever the row's flags do (it stands for them
    /// in the key). `list` is borrowed, never copied (a copy is a retain per array and
    /// dictionary in it).
    public func template(
        _ row: RowID, shape: RowShape, dataKey: UInt64, form: RowForm, in list: borrowing SwipeList,
        flags: () -> RowFlags
    ) -> RowTemplate {
        let direction = list.viewport.direction
        // By index, field by field: `for entry in entries` would copy each entry (a retain per
        // String and array in it) just to look at it.
        for i in entries.indices
        where entries[i].shape == shape && entries[i].dataKey == dataKey && entries[i].form == form
            && entries[i].row == row && entries[i].direction == direction
            && RowTemplates.same(entries[i].layout, list.layout)
        {
            return entries[i].template
        }
        let render = list.render(row, flags: flags())
        // The key must describe what is rendered: a template filed under another shape would be
        // served for that shape until it is evicted.
        assert(
            render.phase == shape.phase && render.edge == shape.edge && render.fullSwipe == shape.fullSwipe
                && render.buttons.count == shape.shown,
            "a row template's key does not match its render")
        let entry = Entry(
            row: row, shape: shape, dataKey: dataKey, direction: direction, form: form, layout: list.layout,
            template: RowTemplate(render, form: form))
        if entries.count < RowTemplates.capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % RowTemplates.capacity
        }
        return entry.template
    }
}
