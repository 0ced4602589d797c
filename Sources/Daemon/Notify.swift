// The service manager's side channel (sd_notify(3)): READY=1 once the socket and the store are
// open, STATUS= lines written for people, STOPPING=1 on the way out, RELOADING=1 around SIGHUP.
// Without $NOTIFY_SOCKET every call is a cheap no-op, so the daemon runs the same by hand.
import CSystemd

public enum Notify {
    public static func send(_ assignments: String) {
        _ = sd_notify(0, assignments)
    }

    public static func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public static func status(_ status: String) { send("STATUS=\(status)") }
    public static func stopping(status: String) { send("STOPPING=1\nSTATUS=\(status)") }
    public static func reloading() { send("RELOADING=1") }
}
