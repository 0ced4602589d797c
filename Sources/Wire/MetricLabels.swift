// The protocol's side of the daemon's counters (Metrics' LoopMetrics): each op and error code
// has a fixed slot, its ordinal in the table, so counting a request is an array increment; and
// the labels of `swiped_requests_total{op}` and `swiped_errors_total{code}` are these tables'
// names, a closed set. A switch with no `default:`, so a new op or code does not compile until
// it has its slot (WireTests check the slots are 0, 1, 2, … in `allCases` order).
import Metrics

extension OpSpec.Kind {
    /// This op's slot in LoopMetrics' request counters.
    @inlinable
    public var metricsIndex: Int {
        switch self {
        case .ping: 0
        case .help: 1
        case .options: 2
        case .list: 3
        case .add: 4
        case .toggleWatched: 5
        case .toggleWatchedWithFriends: 6
        case .remove: 7
        case .restore: 8
        case .move: 9
        case .undo: 10
        case .subscribe: 11
        case .unsubscribe: 12
        case .history: 13
        case .viewport: 14
        case .configure: 15
        case .drag: 16
        case .release: 17
        case .tap: 18
        case .close: 19
        case .rows: 20
        case .open: 21
        case .perform: 22
        case .peek: 23
        case .record: 24
        case .recording: 25
        case .share: 26
        case .peers: 27
        case .status: 28
        case .auth: 29
        case .tokenCreate: 30
        case .tokenList: 31
        case .tokenRevoke: 32
        case .role: 33
        case .denials: 34
        }
    }

    /// What a request of this op is timed under: a drag, or a mutation when it went through the
    /// store (its commit in the time), else a read.
    @inlinable
    public func requestClass(committed: Bool) -> RequestClass {
        self == .drag ? .drag : committed ? .mutation : .read
    }
}

extension ErrorCode {
    /// This code's slot in LoopMetrics' error counters.
    @inlinable
    public var metricsIndex: Int {
        switch self {
        case .badJSON: 0
        case .badRequest: 1
        case .unknownOp: 2
        case .notFound: 3
        case .conflict: 4
        case .notRevealed: 5
        case .tooLarge: 6
        case .storage: 7
        case .forbidden: 8
        case .overloaded: 9
        case .unavailable: 10
        case .internal: 11
        }
    }
}

extension LoopMetrics {
    /// Every op with its count, in the table's order (MetricsSnapshot's `requests`).
    public var requestCounts: [LabelledCount] {
        OpSpec.Kind.allCases.map { LabelledCount($0.rawValue, requests($0.metricsIndex)) }
    }

    /// Request to reply by class, in RequestClass's order (MetricsSnapshot's `latency`). The
    /// sessions count requests and do not time them: a `drag`, and any other request that
    /// hands the store no command, is answered in the wake-up that read it, which is 0 at the
    /// loop's one clock reading per wake-up; so those are the first bucket's counts, from the
    /// requests and the commands submitted. Commands are timed as they come back (`mutation`).
    /// (An `undo` that waits behind another change counts as a read until it is submitted.)
    public var latencySnapshots: [HistogramSnapshot] {
        let drags = requests(OpSpec.Kind.drag.metricsIndex)
        var others: UInt64 = 0
        for kind in OpSpec.Kind.allCases where kind != .drag { others &+= requests(kind.metricsIndex) }
        let reads = others >= submitted ? others &- submitted : 0
        return [drag.snapshot().addingZeros(drags), read.snapshot().addingZeros(reads), mutation.snapshot()]
    }

    /// Every error code with its count, in the table's order (MetricsSnapshot's `errors`).
    public var errorCounts: [LabelledCount] {
        ErrorCode.allCases.map { LabelledCount($0.rawValue, errors($0.metricsIndex)) }
    }
}
