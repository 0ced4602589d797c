// The log's identity (issue 32): an id made when a log is created and made anew by every import
// or restore, so that a client which knew another log (it resubscribes from its last seq after a
// reconnect) can tell that the seqs it holds mean nothing here. The daemon says it in `hello`.
// Each store keeps it in a table of its own (EventLog+Identity.swift, PostgresSchema.swift).

public enum LogIdentity {
    /// A new id: 128 random bits as 32 lowercase hex digits. Random rather than a time or a
    /// counter: two stores made on two hosts in the same second (an import beside the old log)
    /// must not share one.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let (a, b) = (generator.next() as UInt64, generator.next() as UInt64)
        return hex(a) + hex(b)
    }

    private static func hex(_ v: UInt64) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
