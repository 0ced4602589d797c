// While a finger drags a row, its reply changes only in a few numbers (offset, x, width, the
// spring's target); the rest — each button's look, the spring's constants, the accessibility
// actions — is the same from one drag to the next. A connection keeps those parts encoded here,
// so a drag reply is a few copies instead of some sixty small appends (issue 6's drag figure).
// The cache is keyed by the values themselves, so it can never serve stale bytes.
import SwipeEngine

public final class RowEncodingCache {
    /// Entries kept per kind; a layout has at most 16 actions, so this is plenty, and a client
    /// that reconfigures without end cannot grow it.
    static let capacity = 32

    private var buttons: [(key: ButtonRender, bytes: [UInt8])] = []
    private var tails: [(spring: SpringHint, actions: [AccessibilityAction], bytes: [UInt8])] = []

    public init() {}

    /// `Encode.buttonHead` of `button`, whose geometry is ignored.
    func buttonHead(_ button: ButtonRender) -> [UInt8] {
        var key = button
        key.x = 0
        key.width = 0
        if let hit = buttons.first(where: { $0.key == key }) { return hit.bytes }
        var out = JSONWriter(capacity: 128)
        Encode.buttonHead(&out, key)
        if buttons.count == RowEncodingCache.capacity { buttons.removeAll(keepingCapacity: true) }
        buttons.append((key, out.bytes))
        return out.bytes
    }

    /// `Encode.tail` of a spring (its target is written before, not here) and the actions.
    func tail(_ spring: SpringHint, _ actions: [AccessibilityAction]) -> [UInt8] {
        if let hit = tails.first(where: {
            $0.spring.response == spring.response && $0.spring.dampingFraction == spring.dampingFraction
                && $0.actions == actions
        }) {
            return hit.bytes
        }
        var out = JSONWriter(capacity: 512)
        Encode.tail(&out, spring, actions)
        if tails.count == RowEncodingCache.capacity { tails.removeAll(keepingCapacity: true) }
        tails.append((spring, actions, out.bytes))
        return out.bytes
    }
}
