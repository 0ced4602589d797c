// `swipectl status`: sends the `status` op and prints StatusScreen's screen (with --json, the
// reply line as it came), exiting with the screen's status: a health check for scripts.
import SwipedClient

enum StatusCommand {
    static func run(_ conversation: Conversation) throws(Failure) -> ExitStatus {
        let reply: Reply
        do {
            reply = try conversation.client.exchange("status", [])
        } catch {
            throw conversation.lost(error)
        }
        let screen = StatusScreen.render(reply: reply.object, socket: conversation.socket.path)
        if conversation.json {
            Output.out(reply.line + "\n")
        } else if screen.exitCode == StatusScreen.noStatus {
            Output.error(screen.text.hasSuffix("\n") ? String(screen.text.dropLast()) : screen.text)
        } else {
            Output.out(screen.text)
        }
        guard let status = ExitStatus(rawValue: screen.exitCode) else {
            preconditionFailure("StatusScreen's exit status \(screen.exitCode) is not swipectl's")
        }
        return status
    }
}
