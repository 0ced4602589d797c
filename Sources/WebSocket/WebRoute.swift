// Where a request on the web listener goes: `/ws` is the WebSocket (the page asks for `ws`
// relative to its own address, so a proxy may serve it under any prefix it strips), anything
// else a file of the page (HTTPScrape's StaticSite). Pure: the request in, the answer out.
import HTTPScrape

public enum WebRoute {
    /// The WebSocket's path.
    public static let socketPath = "/ws"

    public enum Answer: Equatable, Sendable {
        /// Write `bytes` and close; `refused`: why, when it is an error (404), for the metrics.
        case respond([UInt8], refused: WebRefusal?, reason: String?)
        /// Write `response` (the 101) and carry on as a WebSocket.
        case upgrade(response: [UInt8])
    }

    public static func answer(_ request: HTTPRequest, site: StaticSite, policy: OriginPolicy) -> Answer {
        if request.path.elementsEqual(socketPath.utf8) {
            switch Handshake.answer(request, policy: policy) {
            case .upgrade(let response):
                return .upgrade(response: response)
            case .refuse(let status, let why, let reason, let extra):
                return .respond(
                    Response.error(status, head: request.head, extra: extra), refused: why, reason: reason)
            }
        }
        let (status, bytes, reason) = site.response(to: request)
        return .respond(bytes, refused: reason == nil ? nil : WebRefusal.of(status), reason: reason)
    }
}
