// The event loop's counters: written only on the loop's thread, each event an array increment
// or a histogram's bucket increment (no allocation, no lock, no dictionary). Ops and error codes
// are counted by their ordinal in Wire's tables (`OpSpec.Kind.metricsIndex`,
// `ErrorCode.metricsIndex`), so this module needs no protocol types; times are given, never read
// here: the daemon takes one timestamp per loop wake-up.

/// What a request's reply time is counted under (`swiped_request_duration_seconds{class}`).
public enum RequestClass: Int, CaseIterable, Sendable {
    /// `drag`: the gesture's hot path.
    case drag
    /// Everything answered without writing to the store (`list`, `ping`, `release` without a
    /// fire, …).
    case read
    /// A change of the shared state, its commit included (request to reply).
    case mutation

    public var name: String {
        switch self {
        case .drag: "drag"
        case .read: "read"
        case .mutation: "mutation"
        }
    }
}

public struct LoopMetrics: Sendable {
    /// The most ops and error codes that can be counted (Wire's tests check that its tables
    /// fit).
    public static let opCapacity = 48
    public static let errorCapacity = 16

    @usableFromInline var requests = InlineArray<48, UInt64>(repeating: 0)
    @usableFromInline var errors = InlineArray<16, UInt64>(repeating: 0)
    public var drag = Histogram(.latency)
    public var read = Histogram(.latency)
    public var mutation = Histogram(.latency)
    /// One change sent to every subscriber: from the store's completion to the last write.
    public var fanout = Histogram(.latency)
    /// Commands handed to the store by requests: the requests not among them were answered in
    /// the wake-up that read them (Wire's `latencySnapshots` counts them in the first bucket).
    public var submitted: UInt64 = 0
    /// Connections refused with `too-many-clients`, and dropped as `slow-consumer`.
    public var refused: UInt64 = 0
    public var dropped: UInt64 = 0
    /// The most clients connected at once.
    @usableFromInline var peak = 0
    public var peakClients: Int { peak }

    public init() {}

    /// A request of op `op` (its `metricsIndex`) was answered after `nanoseconds`.
    @inlinable @inline(__always)
    public mutating func answered(op: Int, _ requestClass: RequestClass, nanoseconds: UInt64) {
        counted(op: op)
        timed(requestClass, nanoseconds: nanoseconds)
    }

    /// A request of op `op` (its `metricsIndex`) was answered; its time is counted apart
    /// (`timed`), by whoever knows it: the session at once, the manager after a commit.
    @inlinable @inline(__always)
    public mutating func counted(op: Int) { requests[op] &+= 1 }

    /// A request of class `requestClass` took `nanoseconds`, request to reply.
    @inlinable @inline(__always)
    public mutating func timed(_ requestClass: RequestClass, nanoseconds: UInt64) {
        switch requestClass {
        case .drag: drag.record(nanoseconds)
        case .read: read.record(nanoseconds)
        case .mutation: mutation.record(nanoseconds)
        }
    }

    /// An error reply of code `code` (its `metricsIndex`).
    @inlinable @inline(__always)
    public mutating func failed(code: Int) { errors[code] &+= 1 }

    /// A client connected; `connected` is the number now.
    @inlinable @inline(__always)
    public mutating func connected(_ connected: Int) {
        if connected > peak { peak = connected }
    }

    public func requests(_ op: Int) -> UInt64 { requests[op] }
    public func errors(_ code: Int) -> UInt64 { errors[code] }
}
