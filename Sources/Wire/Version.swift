/// The version of swiped, its client and its protocol implementation (`hello`'s `server`).
public let swipedVersion = "0.1.0"

/// The protocol version this code speaks (`hello`'s `protocol`).
public let protocolVersion = 1
