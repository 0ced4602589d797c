// Shared rows on the wire (protocol.md, "Shared rows"): the replies of `share` and `peers`, and
// the `peer-row` event.
import JSONCodec
import SwipeEngine

/// A sharing connection's rows as a watcher starts from them (the `peers` reply).
public struct PeerRows: Equatable, Sendable {
    public var client: UInt64
    public var viewport: Viewport
    /// Its rows that are not closed, by movie id.
    public var rows: [RowRender]

    public init(client: UInt64, viewport: Viewport, rows: [RowRender]) {
        self.client = client
        self.viewport = viewport
        self.rows = rows
    }
}

extension Encode {
    /// `{"ok":true,"share":{"on":…}}`.
    public static func share(_ out: inout JSONWriter, id: [UInt8]?, on: Bool) {
        begin(&out, id: id, ok: true)
        key(&out, "share")
        out.literal(on ? #"{"on":true}"# : #"{"on":false}"#)
        end(&out)
    }

    /// `{"ok":true,"watch":…,"peers":[{"client":N,"viewport":{…},"rows":[Row…]}…]}`.
    public static func peers(
        _ out: inout JSONWriter, id: [UInt8]?, watch: Bool, peers: [PeerRows], form: RowForm
    ) {
        begin(&out, id: id, ok: true)
        key(&out, "watch")
        out.bool(watch)
        key(&out, "peers")
        array(&out, peers) { out, peer in
            out.literal(#"{"client":"#)
            out.uint64(peer.client)
            out.literal(#","viewport":"#)
            viewportObject(&out, peer.viewport)
            out.literal(#","rows":"#)
            array(&out, peer.rows) { row(&$0, $1, form: form) }
            out.bytes.append(UInt8(ascii: "}"))
        }
        end(&out)
    }

    /// `{"event":"peer-row","client":N,"viewport":{"width":…,"direction":…},"row":Row}`.
    public static func peerRow(
        _ out: inout JSONWriter, client: UInt64, viewport: Viewport, row r: RowRender, form: RowForm
    ) {
        out.literal(#"{"event":"peer-row","client":"#)
        out.uint64(client)
        out.literal(#","viewport":"#)
        viewportObject(&out, viewport)
        out.literal(#","row":"#)
        row(&out, r, form: form)
        end(&out)
    }
}
