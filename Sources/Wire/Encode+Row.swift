// Rows as the protocol writes them: the Row object in either form, a gesture's reply (its row,
// the thresholds it crossed, whether it scrolls, what fired), and the drag path's reply from a
// row template (RowTemplate.swift).
import JSONCodec
import Movies
import SwipeEngine

extension Encode {
    /// `{"ok":true,"row":Row}`, with `crossed` (rule 12), `scroll` (rule 13), and `fired` or
    /// `pending` when the gesture says so.
    public static func row(
        _ out: inout JSONWriter, id: [UInt8]?, row: RowRender, form: RowForm, fired: Fired?,
        crossed: Crossings = Crossings(), scroll: Bool = false
    ) {
        begin(&out, id: id, ok: true)
        key(&out, "row")
        self.row(&out, row, form: form)
        gestureNotes(&out, crossed: crossed, scroll: scroll)
        if let fired {
            if case .pending = fired { key(&out, "pending") } else { key(&out, "fired") }
            switch fired {
            case .bound(let action, let seq):
                out.literal(#"{"action":"#)
                out.string(action)
                key(&out, "seq")
                out.uint64(seq)
            case .custom(let action), .pending(let action):
                out.literal(#"{"action":"#)
                out.string(action)
            case .failed(let action, let error):
                out.literal(#"{"action":"#)
                out.string(action)
                key(&out, "error")
                errorObject(&out, error)
            }
            out.bytes.append(UInt8(ascii: "}"))
        }
        end(&out)
    }

    /// `{"ok":true,"row":Row}` from a template: the drag path (RowTemplate.swift). The same bytes
    /// as `row(_:id:row:form:fired:)` of the render the template was made from, in the
    /// template's form, moved to `geometry`, written in one go into reserved memory.
    public static func row(
        _ out: inout JSONWriter, id: [UInt8]?, template: RowTemplate, geometry g: RowGeometry
    ) {
        // maxReplyBytes is a bound by construction; tests write the longest numbers.
        write(&out, atMost: template.maxReplyBytes + (id?.count ?? 0), "a templated reply") { w in
            okOpening(&w, id: id, withID: #","ok":true,"row":"#, without: #"{"ok":true,"row":"#)
            filled(&w, template, g)
            w.copy("}\n")
        }
    }

    /// The templated reply of a drag that crossed thresholds (rule 12) or scrolls (rule 13): the
    /// same, with `crossed` and `scroll` after the row. A separate function, so that the drag
    /// that does neither (nearly all of them) pays nothing for them.
    public static func row(
        _ out: inout JSONWriter, id: [UInt8]?, template: RowTemplate, geometry g: RowGeometry,
        crossed: Crossings, scroll: Bool
    ) {
        let notes = crossed.count * maxCrossingBytes + 32
        write(&out, atMost: template.maxReplyBytes + (id?.count ?? 0) + notes, "a templated reply") { w in
            okOpening(&w, id: id, withID: #","ok":true,"row":"#, without: #"{"ok":true,"row":"#)
            filled(&w, template, g)
            if !crossed.isEmpty {
                w.copy(#","crossed":["#)
                for (i, crossing) in crossed.enumerated() {
                    if i > 0 { w.copy(",") }
                    w.copy(literal(crossing))
                }
                w.copy("]")
            }
            if scroll { w.copy(#","scroll":true"#) }
            w.copy("}\n")
        }
    }

    /// The template's row with `g`'s numbers in its holes.
    @inline(__always)
    static func filled(_ w: inout ByteCursor, _ template: RowTemplate, _ g: RowGeometry) {
        template.text.withUnsafeBufferPointer { text in
            var from = 0
            // The full form's last hole is the spring's target; the compact has none.
            let target = template.form == .full ? template.holes.count - 1 : -1
            for (k, hole) in template.holes.enumerated() {
                w.copy(UnsafeBufferPointer(rebasing: text[from..<hole]))
                // The holes' order: offset, then x and width per button, then target.
                if k == 0 || k == target {
                    w.number(g.offset)
                } else {
                    w.number(k % 2 == 1 ? g.x((k - 1) / 2) : g.width)
                }
                from = hole
            }
            w.copy(UnsafeBufferPointer(rebasing: text[from...]))
        }
    }

    /// The most bytes one crossing takes in `crossed`, its comma included.
    static let maxCrossingBytes = 40

    /// A crossing object, as it is written (rule 12).
    static func literal(_ crossing: Crossing) -> StaticString {
        switch (crossing.threshold, crossing.direction) {
        case (.open, .out): #"{"threshold":"open","direction":"out"}"#
        case (.open, .back): #"{"threshold":"open","direction":"back"}"#
        case (.full, .out): #"{"threshold":"full","direction":"out"}"#
        case (.full, .back): #"{"threshold":"full","direction":"back"}"#
        }
    }

    /// `,"crossed":[…]` when the input crossed thresholds (rule 12), `,"scroll":true` when its
    /// touch scrolls (rule 13).
    static func gestureNotes(_ out: inout JSONWriter, crossed: Crossings, scroll: Bool) {
        if !crossed.isEmpty {
            key(&out, "crossed")
            out.bytes.append(UInt8(ascii: "["))
            for (i, crossing) in crossed.enumerated() {
                if i > 0 { out.bytes.append(UInt8(ascii: ",")) }
                out.literal(literal(crossing))
            }
            out.bytes.append(UInt8(ascii: "]"))
        }
        if scroll { out.literal(#","scroll":true"#) }
    }

    /// A Row object in `form`: the compact form stops after `buttons`.
    public static func row(_ out: inout JSONWriter, _ r: RowRender, form: RowForm) {
        rowHead(&out, r.row)
        out.double(r.offset)
        rowMiddle(&out, r)
        for (index, b) in r.buttons.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            buttonHead(&out, b)
            buttonTail(&out, x: b.x, width: b.width)
        }
        switch form {
        case .full:
            out.literal(#"],"spring":{"target":"#)
            out.double(r.spring.target)
            tail(&out, r.spring, r.accessibilityActions)
        case .compact:
            out.literal("]}")
        }
    }

    /// `{"movie":…,"offset":`
    static func rowHead(_ out: inout JSONWriter, _ row: RowID) {
        out.literal(#"{"movie":"#)
        out.string(row)
        out.literal(#","offset":"#)
    }

    /// `,"phase":…,"edge":…,"fullSwipe":…,"buttons":[`
    static func rowMiddle(_ out: inout JSONWriter, _ r: RowRender) {
        out.literal(#","phase":"#)
        out.literal(r.phase.literal)
        out.literal(#","edge":"#)
        if let edge = r.edge {
            out.literal(edge == .leading ? #""leading""# : #""trailing""#)
        } else {
            out.literal("null")
        }
        out.literal(#","fullSwipe":"#)
        out.bool(r.fullSwipe)
        out.literal(#","buttons":["#)
    }

    /// A button after its head: `x,"width":w}`.
    @inline(__always)
    static func buttonTail(_ out: inout JSONWriter, x: Double, width: Double) {
        out.double(x)
        out.literal(#","width":"#)
        out.double(width)
        out.bytes.append(UInt8(ascii: "}"))
    }

    /// A button up to its geometry: `{"action":…,"label":…,"icon":…,"tint":…,"role":…,"x":`.
    static func buttonHead(_ out: inout JSONWriter, _ b: ButtonRender) {
        out.literal(#"{"action":"#)
        out.string(b.action)
        if let label = b.label {
            out.literal(#","label":"#)
            out.string(label)
        }
        if let icon = b.icon {
            out.literal(#","icon":"#)
            out.string(icon)
        }
        out.literal(#","tint":"#)
        out.string(b.tint)
        if let role = b.role {
            out.literal(#","role":"#)
            out.string(role.rawValue)
        }
        out.literal(#","x":"#)
    }

    /// A row after its spring's target: the spring's constants and the accessibility actions.
    static func tail(_ out: inout JSONWriter, _ spring: SpringHint, _ actions: [AccessibilityAction]) {
        out.literal(#","response":"#)
        out.double(spring.response)
        out.literal(#","dampingFraction":"#)
        out.double(spring.dampingFraction)
        out.literal(#"},"accessibilityActions":["#)
        for (index, a) in actions.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.literal(#"{"action":"#)
            out.string(a.action)
            out.literal(#","label":"#)
            out.string(a.label)
            out.literal(a.destructive ? #","destructive":true"# : #","destructive":false"#)
            out.literal(a.edge == .leading ? #","edge":"leading"}"# : #","edge":"trailing"}"#)
        }
        out.literal("]}")
    }
}

extension Phase {
    /// The phase as a JSON string literal.
    var literal: StaticString {
        switch self {
        case .closed: #""closed""#
        case .dragging: #""dragging""#
        case .open: #""open""#
        case .fired: #""fired""#
        case .confirming: #""confirming""#
        case .peeking: #""peeking""#
        case .dismissed: #""dismissed""#
        }
    }
}
