// call: one raw request line out, the raw reply line back; 1 when the reply is not ok.
import JSONCodec
import SwipedClient
import Wire

enum Call {
    static func run(_ conversation: Conversation, line: String) throws(Failure) {
        let reply: String
        do {
            reply = try conversation.client.callRaw(line)
        } catch {
            throw conversation.lost(error)
        }
        Output.out(reply + "\n")
        let object: JSONObject
        do throws(ClientError) {
            object = try SwipedClient.object(Array(reply.utf8))
        } catch {
            throw Failure(
                .unreachable,
                "the daemon at \(conversation.socket.path) sent a line that is not a JSON object: \(error.message)"
            )
        }
        if object.bool("ok") != true {
            let error = object.object("error")
            throw Failure(
                .refused,
                "\(error?.string("code") ?? "error"): \(error?.string("message") ?? "the daemon said no")")
        }
    }
}
