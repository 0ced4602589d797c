// The service manager's side channel (sd_notify(3)): READY=1 once the socket and the store are
// open, STATUS= lines written for people, STOPPING=1 on the way out, RELOADING=1 around SIGHUP.
// Without $NOTIFY_SOCKET every call is a cheap no-op, so the daemon runs the same by hand.
import CSystemd

public enum Notify {
    /// Sends `assignments`; throws when $NOTIFY_SOCKET is set and the message did not get there.
    public static func send(_ assignments: String) throws(SystemError) {
        let r = sd_notify(0, assignments)
        guard r >= 0 else { throw SystemError("sd_notify", errno: -r) }
    }

    public static func ready(status: String) -> String { "READY=1\nSTATUS=\(status)" }
    public static func status(_ status: String) -> String { "STATUS=\(status)" }
    public static func stopping(status: String) -> String { "STOPPING=1\nSTATUS=\(status)" }
    public static let reloading = "RELOADING=1"
}
