// Wire: the daemon's codec, with no Foundation.
//
// - JSON, JSONNumber, JSONObject (JSON.swift): the value model.
// - JSONParser: strict RFC 8259 parsing of one line's bytes.
// - JSONWriter: appends JSON to a byte buffer, never a raw newline.
// - LineFramer: splits a connection's byte stream into bounded lines.
// - RFC3339: timestamps for events.
//
// The JSON and framing files import nothing but the C library, so the libFuzzer build
// (Fuzz/run.sh) can compile them with swiftc alone even when Wire gains message types that
// import SwipeEngine and Movies.
